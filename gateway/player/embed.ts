// The standalone page behind oEmbed's iframe: one player, nothing else. The page is in the
// article's language (so is the player, which follows it), with a main landmark and the title as
// its heading (for screen readers only: the player shows the title). No read-along: the article's
// text is not on this page, so the player need not fetch its segments.
import type { ListenerArticle } from "../../gen/articles/v1/listener_pb.js";
import { escapeXml as escapeHtml } from "../../lib/xml-text.js";
import { playerAsset } from "./asset.js";

export function embedPage(base: string, key: string, a: ListenerArticle): string {
  return `<!doctype html>
<html lang="${escapeHtml(a.lang)}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escapeHtml(a.title)}</title>
<style>html,body{margin:0;background:transparent}h1{position:absolute;width:1px;height:1px;overflow:hidden;clip-path:inset(50%);white-space:nowrap;margin:0}</style>
<script src="${escapeHtml(base)}/player/v1/player.js?v=${playerAsset.hash}" async></script>
</head>
<body>
<main>
<h1>${escapeHtml(a.title)}</h1>
<article-audio-player key="${escapeHtml(key)}" article-id="${escapeHtml(a.id)}" base="${escapeHtml(base)}" read-along="off" source="embed"></article-audio-player>
</main>
</body>
</html>
`;
}
