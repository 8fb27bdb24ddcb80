// oEmbed (https://oembed.com): a consumer that finds an article page asks
// GET /oembed?url=<page>&format=json and gets the player as rich HTML. Only
// a project that enabled oEmbed and verified the page's host answers (the
// host lists its key in /.well-known/article-audio.txt; one project per
// host), so nobody can attach audio to someone else's site.
import type { Client } from "@connectrpc/connect";
import type { Router } from "@koa/router";
import type { ListenerService } from "../../gen/articles/v1/listener_pb.js";
import type { PlayerService } from "../../gen/auth/v1/player_pb.js";
import { escapeXml as escapeAttr } from "../../lib/xml-text.js";
import { HttpError } from "../errors.js";
import { baseOf, keyCall, publicCors } from "./player.js";

export interface OembedRoutesOptions {
  player: Client<typeof PlayerService>;
  listener: Client<typeof ListenerService>;
  publicBaseUrl?: string;
}

const DEFAULT_WIDTH = 640;
const HEIGHT = 96;

export function oembedRoutes(router: Router, opts: OembedRoutesOptions): void {
  router.get("/oembed", async (ctx) => {
    publicCors(ctx);
    const { url, format, maxwidth } = ctx.query;
    // oEmbed 2.2 answers 501 for the format it defines but we do not serve; anything else is no format at all.
    if (format !== undefined && format !== "json" && format !== "xml") throw new HttpError(400, "format: must be json");
    if (format === "xml") {
      ctx.status = 501;
      ctx.body = { result: "fail", message: "format: only json is supported" };
      return;
    }
    if (typeof url !== "string" || url.length > 2048) throw new HttpError(400, "url: the article page's URL is required");
    let page: URL;
    try {
      page = new URL(url);
      if (page.protocol !== "http:" && page.protocol !== "https:") throw new Error();
    } catch {
      throw new HttpError(400, "url: must be an absolute http(s) URL");
    }
    const found = await opts.player.findOembedProject({ host: page.host.toLowerCase() });
    if (!found.player) throw new HttpError(404, "No audio for this page");
    const key = found.player.publicKey;
    const res = await opts.listener.getListenerArticle({ lookup: { case: "url", value: url } }, keyCall(ctx, key));
    const a = res.article!;
    const width = Math.max(200, Math.min(Number(maxwidth) || DEFAULT_WIDTH, 1920));
    const src = `${baseOf(ctx, opts.publicBaseUrl)}/player/v1/embed/${key}/${encodeURIComponent(a.id)}`;
    ctx.set("Cache-Control", "public, max-age=300");
    ctx.body = {
      version: "1.0",
      type: "rich",
      title: a.title,
      provider_name: found.player.projectName,
      width,
      height: HEIGHT,
      html: `<iframe src="${escapeAttr(src)}" width="${width}" height="${HEIGHT}" title="${escapeAttr(`Listen: ${a.title}`)}" style="border:0" loading="lazy" allow="autoplay"></iframe>`,
      cache_age: 300,
    };
  });
}
