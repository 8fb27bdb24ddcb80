// /api/sources: the feeds and sitemaps a project follows (docs/sources.md).
// Any token of the project may read them; writes need a full token, checked
// before the body is read (the articles service checks it again).
import type { Client } from "@connectrpc/connect";
import type { Router } from "@koa/router";
import type { Context } from "koa";
import type { Source, SourcesService, SourceFields } from "../../gen/articles/v1/sources_pb.js";
import { readJsonBody } from "../body.js";
import { validateSource } from "../source-schemas.js";
import type { WriterCheck } from "../writer-check.js";
import { publisherCall } from "../publisher-call.js";

export interface SourceRoutesOptions {
  client: Client<typeof SourcesService>;
  maxBodyBytes: number;
  checkWriter?: WriterCheck;
}

const iso = (ms: bigint | undefined) => (ms === undefined ? null : new Date(Number(ms)).toISOString());

/** A source as the API shows it. */
export function sourceJson(s: Source) {
  const st = s.state;
  return {
    id: s.id,
    url: s.url,
    kind: s.kind || null,
    pollSeconds: s.pollSeconds,
    paused: s.paused,
    labels: s.labels,
    ...(s.voice !== undefined ? { voice: s.voice, lang: s.lang } : {}),
    mode: s.mode,
    backfill: s.backfill,
    added: iso(s.added),
    since: iso(s.since),
    state: {
      lastPoll: iso(st?.lastPoll),
      lastSuccess: iso(st?.lastSuccess),
      nextPoll: s.paused ? null : iso(st?.nextPoll),
      seen: Number(st?.seen ?? 0n),
      created: Number(st?.created ?? 0n),
      updated: Number(st?.updated ?? 0n),
      error: st?.error || null,
    },
  };
}

/** The body's fields as the RPC takes them (validated before). */
function fieldsOf(body: Record<string, unknown>): Partial<SourceFields> {
  const f: Record<string, unknown> = {};
  for (const k of ["url", "kind", "pollSeconds", "voice", "lang", "mode", "backfill", "paused"]) if (body[k] !== undefined && body[k] !== null) f[k] = body[k];
  if (Array.isArray(body.labels)) f.labels = { values: body.labels };
  return f as Partial<SourceFields>;
}

export function sourceRoutes(router: Router, { client, maxBodyBytes, checkWriter }: SourceRoutesOptions): void {
  const writeCall = async (ctx: Context) => {
    const call = publisherCall(ctx);
    await checkWriter?.(call.headers.authorization);
    return call;
  };

  router.get("/api/sources", async (ctx) => {
    const res = await client.listSources({}, publisherCall(ctx));
    ctx.body = { result: "ok", sources: res.sources.map(sourceJson) };
  });

  router.post("/api/sources", async (ctx) => {
    const call = await writeCall(ctx);
    const body = await readJsonBody(ctx, maxBodyBytes);
    validateSource.create(body);
    const res = await client.createSource({ fields: fieldsOf(body as Record<string, unknown>) }, call);
    ctx.body = { result: "ok", id: res.id };
  });

  router.get("/api/sources/:sourceId", async (ctx) => {
    const res = await client.getSource({ id: ctx.params.sourceId }, publisherCall(ctx));
    ctx.body = { result: "ok", source: sourceJson(res.source!) };
  });

  router.put("/api/sources/:sourceId", async (ctx) => {
    const call = await writeCall(ctx);
    const body = await readJsonBody(ctx, maxBodyBytes);
    validateSource.update(body);
    const res = await client.updateSource({ id: ctx.params.sourceId, fields: fieldsOf(body as Record<string, unknown>) }, call);
    ctx.body = { result: "ok", source: sourceJson(res.source!) };
  });

  router.delete("/api/sources/:sourceId", async (ctx) => {
    await client.deleteSource({ id: ctx.params.sourceId }, await writeCall(ctx));
    ctx.body = { result: "ok" };
  });

  router.post("/api/sources/:sourceId/poll", async (ctx) => {
    const res = await client.pollSource({ id: ctx.params.sourceId }, await writeCall(ctx));
    ctx.body = { result: "ok", source: sourceJson(res.source!) };
  });
}
