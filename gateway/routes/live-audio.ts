// GET /player/v1/live/{articleId}/{revision}.mp3: audio made on demand, streamed while it is made.
// The audio worker stores the finished file's audio a part per rendered chunk, in playing order
// (services/audio/live-store.ts); this answer is those parts one after another as they appear, a
// progressive MP3 an <audio> element starts on after the first, so a listener hears the opening
// sentences within seconds instead of waiting for the whole preview. It ends after the last part,
// or when no new part came for a while (the rest is queued behind other listeners' previews: the
// player then goes on in the finished file). No token, as for the files themselves: the article's
// id is the capability, and the player learns the URL from its key-checked lookup. Only a stream
// a lookup of this gateway handed out is waited for; on several gateway replicas, a player whose
// stream request reaches another replica before the first part exists gets a 404 and plays the
// preview and the file as they come.
import { PassThrough, type Readable } from "node:stream";
import type { Router } from "@koa/router";
import { assertSafeKey, isGone, type BlobStore } from "../../lib/blob/port.js";
import { audioKeys } from "../../lib/revision-files.js";
import { createExpiringLru } from "../../lib/expiring-lru.js";
import { clientNetwork } from "../client-network.js";
import { HttpError } from "../errors.js";

export const LIVE_PATH = "/player/v1/live";

export interface LiveAudioOptions {
  /** How often the store is asked for the next part. */
  pollMs?: number;
  /** How long the first part is waited for (the render may be queued): then 404. */
  firstWaitMs?: number;
  /** How long a later part is waited for before the stream ends. */
  idleMs?: number;
  /** Streams this gateway serves at once; beyond, 503 (the player then waits for the files). */
  maxStreams?: number;
  /** Streams one client address (an IPv6 client: its /64) may hold open at once; beyond, 429. */
  perAddress?: number;
  /**
   * Revisions this gateway's player lookups handed out as `audio_live` (liveAnnouncements). When
   * given, only those are waited for; any other is streamed only if its first part is already
   * there, else 404 at once, so a made-up or finished id cannot hold a connection for the wait.
   */
  announced?: LiveAnnouncements;
}

/** The waits an operator may change (docs/internals.md): a slow or crowded machine renders parts further apart. */
export const LIVE_AUDIO_VARS = {
  LIVE_AUDIO_FIRST_WAIT_MS: { type: "integer", minimum: 1000, maximum: 3_600_000, default: 60_000, description: "how long a live stream of audio made on demand waits for its first part (the render may be queued) before answering 404" },
  LIVE_AUDIO_IDLE_MS: { type: "integer", minimum: 1000, maximum: 3_600_000, default: 30_000, description: "how long a live stream waits for its next part before it ends (the player then plays the finished files)" },
} as const;

export function liveAudioOptionsOf(cfg: { LIVE_AUDIO_FIRST_WAIT_MS: number; LIVE_AUDIO_IDLE_MS: number }): LiveAudioOptions {
  return { firstWaitMs: cfg.LIVE_AUDIO_FIRST_WAIT_MS, idleMs: cfg.LIVE_AUDIO_IDLE_MS };
}

/** The live streams a gateway's lookups have pointed players to lately, in its memory only. */
export interface LiveAnnouncements {
  announce(articleId: string, revision: number | bigint): void;
  has(articleId: string, revision: number | bigint): boolean;
}

/** Remembered for as long as a player follows audio made on demand (its lookups go on for three minutes). */
export function liveAnnouncements(opts: { max?: number; ttlMs?: number } = {}): LiveAnnouncements {
  const seen = createExpiringLru<true>({ max: opts.max ?? 10_000, ttlMs: opts.ttlMs ?? 5 * 60_000 });
  const key = (id: string, rev: number | bigint) => `${id}/${rev}`;
  return {
    announce: (id, rev) => seen.set(key(id, rev), true),
    has: (id, rev) => seen.get(key(id, rev)) === true,
  };
}

/** The URL path of an article revision's live stream. */
export function livePath(articleId: string, revision: number | bigint): string {
  return `${LIVE_PATH}/${encodeURIComponent(articleId)}/${revision}.mp3`;
}

const MAX_STREAM_MS = 30 * 60_000;

export function liveAudioRoutes(router: Router, blobs: BlobStore, opts: LiveAudioOptions = {}): void {
  const pollMs = opts.pollMs ?? 100;
  const firstWaitMs = opts.firstWaitMs ?? 60_000;
  const idleMs = opts.idleMs ?? 30_000;
  const maxStreams = opts.maxStreams ?? 256;
  const perAddress = opts.perAddress ?? 4;
  let streams = 0;
  // In this process's memory only, never stored or logged.
  const byAddress = new Map<string, number>();

  router.get(`${LIVE_PATH}/:articleId/:file`, async (ctx) => {
    ctx.set("Access-Control-Allow-Origin", "*");
    const m = /^(\d{1,15})\.mp3$/.exec(ctx.params.file);
    const articleId = ctx.params.articleId;
    if (!m) throw new HttpError(404, "Live audio not found");
    const keys = audioKeys(articleId, Number(m[1]));
    try {
      assertSafeKey(keys.liveEnd);
    } catch {
      throw new HttpError(404, "Live audio not found");
    }
    const address = clientNetwork(ctx.ip);
    const mine = byAddress.get(address) ?? 0;
    if (mine >= perAddress) throw new HttpError(429, "Too many live streams from this address", { "Retry-After": "5" });
    if (streams >= maxStreams) throw new HttpError(503, "Too many live streams; the audio files follow", { "Retry-After": "5" });
    streams++;
    byAddress.set(address, mine + 1);
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      streams--;
      const left = (byAddress.get(address) ?? 1) - 1;
      if (left > 0) byAddress.set(address, left);
      else byAddress.delete(address);
    };
    const gone = new AbortController();
    // The response's close: the stream is done, or the listener left.
    ctx.res.once("close", () => gone.abort());
    try {
      const expected = !opts.announced || opts.announced.has(articleId, Number(m[1]));
      const first = await nextPart(blobs, keys, 0, expected ? firstWaitMs : 0, pollMs, gone.signal);
      if (!first) throw new HttpError(404, "Live audio not found");
      const body = new PassThrough();
      ctx.status = 200;
      ctx.type = "audio/mpeg";
      // A stream made now: never cached, never ranged.
      ctx.set("Cache-Control", "no-store");
      ctx.set("Accept-Ranges", "none");
      ctx.body = body;
      void pump(first, body).finally(release);
    } catch (e) {
      release();
      throw e;
    }

    async function pump(first: Readable, body: PassThrough): Promise<void> {
      const started = Date.now();
      try {
        let part: Readable | undefined = first;
        for (let n = 1; part && !gone.signal.aborted; n++) {
          for await (const bytes of part) if (!body.write(bytes)) await waitDrain(body, gone.signal);
          part = Date.now() - started < MAX_STREAM_MS ? await nextPart(blobs, keys, n, idleMs, pollMs, gone.signal) : undefined;
        }
      } catch {
        // A part removed meanwhile (the revision superseded, the article deleted), or the listener left: the stream ends.
      } finally {
        body.end();
      }
    }
  });
}

/** Part n once it is stored; undefined after the last part, after `waitMs` without it, or once the listener left. */
async function nextPart(blobs: BlobStore, keys: ReturnType<typeof audioKeys>, n: number, waitMs: number, pollMs: number, signal: AbortSignal): Promise<Readable | undefined> {
  const until = Date.now() + waitMs;
  while (!signal.aborted) {
    const part = await blobs.read(keys.live(n)).catch((e: unknown) => {
      if (isGone(e)) return undefined;
      throw e;
    });
    if (part) return part;
    // The marker is written after the last part: with it there, a missing part n is the end (looked for once more).
    if (await blobs.stat(keys.liveEnd)) return blobs.read(keys.live(n)).catch(() => undefined);
    if (Date.now() >= until) return undefined;
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
  return undefined;
}

function waitDrain(body: PassThrough, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      body.off("drain", done);
      signal.removeEventListener("abort", done);
      resolve();
    };
    body.once("drain", done);
    signal.addEventListener("abort", done, { once: true });
  });
}
