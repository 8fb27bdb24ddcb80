// POST /api/articles/import (docs/import.md): the request body is read as it
// arrives and answered line by line while it still flows; the work itself is
// in import-stream.ts. Whatever fails the request as a whole (token, content
// type, ?audio) is an ErrorResult before any of the body is read.
import type { Client } from "@connectrpc/connect";
import type { Router } from "@koa/router";
import type { Context } from "koa";
import type { ArticlesService } from "../../gen/articles/v1/articles_pb.js";
import { bearerTokenOf, type CallerResolver } from "../../lib/rpc/caller.js";
import { longUploads, sendContinue } from "../body.js";
import { HttpError } from "../errors.js";
import { DEFAULT_IMPORT_LIMITS, meteredUpload, openImports, type ImportLimits } from "../import-limits.js";
import { importLanes, laneKeyOf, type ImportLanes } from "../import-lanes.js";
import { articlesSender, audioTimingOf, runImport, summaryLine, type ImportSink } from "../import-stream.js";
import type { ImportPace } from "../ratelimit.js";
import type { WriterCheck } from "../writer-check.js";

export const IMPORT_PATH = "/api/articles/import";
export const NDJSON = "application/x-ndjson";
/** A connection on which neither the upload nor the answer moved for this long is closed (a client that stops reading the answer). */
export const IMPORT_IDLE_MS = 60_000;
/**
 * Creates per CreateArticles call of a REST import. Smaller than the service
 * takes: on the embedded default a call's store work runs on the event loop
 * everyone shares, and a short call lets their requests in between two.
 */
export const IMPORT_ROUTE_BATCH = 16;

export interface ImportRoutesOptions {
  client: Client<typeof ArticlesService>;
  /** The gateway's body limit; here it bounds each line. */
  maxBodyBytes: number;
  checkWriter?: WriterCheck;
  /** The project's import bucket (ratelimit.ts importPacer); absent = no limit. */
  pacer?: (authorization: string, signal?: AbortSignal) => Promise<ImportPace | undefined>;
  idleMs?: number;
  /** Caps on open imports and the slowest upload accepted (import-limits.ts); default: the documented defaults. */
  limits?: ImportLimits;
  /** Whose project a token is, for the per-project cap and the fair lanes; absent: the token itself stands for it. */
  callers?: CallerResolver;
  /** The fair turns of the creates' store work, shared with POST /api/articles; default: a set of lanes of this route's own. */
  lanes?: ImportLanes;
}

/** A sink over the answer stream that waits for the client to read, or to leave. */
function responseSink(ctx: Context): ImportSink {
  const res = ctx.res;
  return {
    write: (text) => res.write(text),
    drain: () =>
      new Promise<void>((resolve) => {
        const done = () => {
          res.off("drain", done);
          res.off("close", done);
          resolve();
        };
        res.on("drain", done);
        res.on("close", done);
      }),
  };
}

export function importRoutes(router: Router, opts: ImportRoutesOptions): void {
  const limits = opts.limits ?? DEFAULT_IMPORT_LIMITS;
  const open = openImports(limits);
  const lanes = opts.lanes ?? importLanes(limits.callsInFlight);
  router.post(IMPORT_PATH, async (ctx) => {
    const authorization = ctx.get("Authorization");
    bearerTokenOf(authorization);
    await opts.checkWriter?.(authorization);
    if (ctx.request.type !== NDJSON) throw new HttpError(415, `Content-Type must be ${NDJSON}: one JSON article per line`);
    const encoding = ctx.get("Content-Encoding").trim().toLowerCase();
    if (encoding !== "" && encoding !== "identity") {
      throw new HttpError(415, `Content-Encoding '${encoding.slice(0, 40)}' is not supported: send the lines uncompressed`, { "Accept-Encoding": "identity" });
    }
    const audio = audioTimingOf(ctx.query.audio);
    const project = await laneKeyOf(authorization, opts.callers);
    // Refused before any of the body is read: the place is taken only once the import really starts.
    const leave = open.enter(project);
    try {
      await runImportRequest(ctx, { authorization, audio, project });
    } finally {
      leave();
    }
  });

  async function runImportRequest(ctx: Context, call: { authorization: string; audio: ReturnType<typeof audioTimingOf>; project: string }): Promise<void> {
    const { authorization, audio } = call;
    const abort = new AbortController();
    const pace = await opts.pacer?.(authorization, abort.signal);
    const requestId: string = ctx.state.requestId;
    const req = ctx.req;
    const res = ctx.res;
    // The answer is written here, as the lines are done; Koa leaves the response alone.
    ctx.respond = false;
    res.statusCode = 200;
    res.setHeader("Content-Type", `${NDJSON}; charset=utf-8`);
    res.setHeader("Cache-Control", "no-store");
    for (const [k, v] of Object.entries(pace?.headers ?? {})) res.setHeader(k, v);
    // A client that asked "Expect: 100-continue" hears that first: a final status before it would tell it not to send the body.
    sendContinue(req);
    res.flushHeaders();
    res.once("close", () => {
      if (!res.writableFinished) abort.abort();
    });
    longUploads.add(req.socket);
    // For a client that stops reading the answer (the upload's own pace is judged by meteredUpload).
    req.setTimeout(opts.idleMs ?? IMPORT_IDLE_MS, () => req.destroy());
    // The server's requestTimeout no longer covers this upload (app.ts): its rate does.
    const upload = meteredUpload(req, limits);

    const log = ctx.state.log;
    try {
      const summary = await runImport({
        input: upload.input,
        out: responseSink(ctx),
        ...articlesSender(opts.client, { authorization, requestId }),
        pace: pace ? (n) => pace.pace(n) : undefined,
        schedule: lanes.lane(call.project),
        batch: IMPORT_ROUTE_BATCH,
        maxLineBytes: opts.maxBodyBytes,
        audio,
        signal: abort.signal,
        cutShort: () => upload.stopped !== undefined,
      });
      if (!abort.signal.aborted) {
        if (upload.stopped) summary.stopped = upload.stopped;
        res.end(summaryLine(summary));
        log.info({ imported: summary.imported, failed: summary.failed, ...(upload.stopped ? { stopped: "upload too slow" } : {}) }, "import done");
      }
    } catch (err) {
      // The client went away mid-upload (the body stream fails), or a bug: the status line is long gone.
      if (abort.signal.aborted || req.destroyed) {
        log.info({ err: { message: (err as Error).message } }, "import abandoned by the client");
      } else {
        log.error({ err }, "import failed");
        res.end(`{"result":"error","message":"Internal error (request id ${requestId})"}\n`);
      }
    } finally {
      longUploads.delete(req.socket);
      abort.abort();
      // Not read to its end (cut short, or a failure): the connection cannot carry another request.
      if (!req.complete) {
        if (res.writableFinished || res.destroyed) req.destroy();
        else res.once("finish", () => req.destroy());
      }
    }
  }
}
