// The standalone page behind oEmbed's iframe: one player, nothing else.
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
<style>html,body{margin:0;background:transparent}</style>
<script src="${escapeHtml(base)}/player/v1/player.js?v=${playerAsset.hash}" async></script>
</head>
<body>
<article-audio-player key="${escapeHtml(key)}" article-id="${escapeHtml(a.id)}" base="${escapeHtml(base)}"></article-audio-player>
</body>
</html>
`;
}
