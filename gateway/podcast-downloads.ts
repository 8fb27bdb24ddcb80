// Podcast downloads, counted from feed enclosure requests by the rules of the IAB's Podcast
// Measurement Technical Guidelines (v2.2) in spirit:
//   - one download per listener per episode per UTC day, where a listener is the client's
//     address together with its User-Agent;
//   - the byte ranges one listener asks for are combined, and the episode counts once they
//     cover a minute of audio (or the whole file, when it is shorter), so a player probing the
//     first bytes, or fetching in many small ranges, counts once or not at all;
//   - known bots, crawlers and feed checkers (the maintained `isbot` list, less the browser-minded
//     patterns that would take podcast apps for bots) and requests without a User-Agent never count.
// Addresses are never stored: a listener is a salted hash, kept in this process's memory only,
// and the salt is drawn anew at every UTC day, so yesterday's hashes cannot be linked to today's.
import { createHash, randomBytes } from "node:crypto";
import { createIsbotFromList, list } from "isbot";
import { ListeningEventType } from "../gen/articles/v1/listener_pb.js";
import type { Logger } from "../lib/log.js";
import type { ListeningBuffer } from "./listening-buffer.js";

export interface EnclosureRequest {
  address: string;
  userAgent: string;
  /** The episode's file (its blob key): one download per listener and file. */
  file: string;
  /** The file's size in bytes. */
  size: number;
  /** The audio's duration in seconds, when the feed said it; otherwise the whole file must be fetched. */
  durationSeconds?: number;
  /** The bytes sent, inclusive; the whole file when absent. */
  range?: { start: number; end: number };
}

export interface DownloadCounter {
  /** True when this request made the listener's download of the episode count (once a day). */
  observe(req: EnclosureRequest): boolean;
  /** Listeners currently remembered (for tests and metrics). */
  readonly size: number;
}

export interface DownloadCounterOptions {
  now?: () => number;
  /** Listeners remembered per day; beyond it the oldest are forgotten (and could count again). */
  maxListeners?: number;
}

/**
 * Podcast apps name themselves tersely ("Pocket Casts", "Podcasts/1.0") or with a link, which
 * isbot, made for browsers, reads as bots; the few patterns that match these real apps are left out.
 */
const PODCAST_APPS = [
  "Overcast/3.0 (+http://overcast.fm/; iOS podcast app)",
  "Pocket Casts",
  "Podcasts/1.0",
  "CastBox/8.2.6",
  "PodcastAddict/v5 (+https://podcastaddict.com/; Android podcast app)",
  "Castro 2022.12/1180",
  "AntennaPod/3.2.0",
];
const isBot = createIsbotFromList(list.filter((pattern) => !PODCAST_APPS.some((ua) => new RegExp(pattern, "i").test(ua))));

/** A minute of audio, as the guidelines count it. */
const COUNTED_SECONDS = 60;

interface Listener {
  /** Disjoint, sorted byte ranges received, inclusive. */
  ranges: Array<[number, number]>;
  counted: boolean;
}

/** Bytes covered after adding [start, end] to the sorted, disjoint `ranges` (which it updates). */
function addRange(ranges: Array<[number, number]>, start: number, end: number): number {
  const merged: Array<[number, number]> = [];
  let s = start;
  let e = end;
  for (const [a, b] of ranges) {
    if (b + 1 < s || a > e + 1) merged.push([a, b]);
    else {
      s = Math.min(s, a);
      e = Math.max(e, b);
    }
  }
  merged.push([s, e]);
  merged.sort((x, y) => x[0] - y[0]);
  ranges.splice(0, ranges.length, ...merged);
  return merged.reduce((n, [a, b]) => n + (b - a + 1), 0);
}

/** Bytes that make a download: a minute of audio at the file's average rate, or the whole file. */
export function bytesToCount(size: number, durationSeconds?: number): number {
  if (!durationSeconds || !Number.isFinite(durationSeconds) || durationSeconds <= COUNTED_SECONDS) return size;
  return Math.min(size, Math.ceil((size * COUNTED_SECONDS) / durationSeconds));
}

export function createDownloadCounter(opts: DownloadCounterOptions = {}): DownloadCounter {
  const now = opts.now ?? Date.now;
  const max = opts.maxListeners ?? 200_000;
  let day = "";
  let salt = randomBytes(32);
  let listeners = new Map<string, Listener>();

  function rotate(): void {
    const today = new Date(now()).toISOString().slice(0, 10);
    if (today === day) return;
    day = today;
    salt = randomBytes(32);
    listeners = new Map();
  }

  return {
    observe(req) {
      if (!req.userAgent.trim() || isBot(req.userAgent) || req.size <= 0) return false;
      rotate();
      const id = createHash("sha256").update(salt).update(`${req.address}\n${req.userAgent}\n${req.file}`).digest("base64url");
      let l = listeners.get(id);
      if (l?.counted) return false;
      if (!l) {
        if (listeners.size >= max) listeners.delete(listeners.keys().next().value as string);
        listeners.set(id, (l = { ranges: [], counted: false }));
      }
      const start = req.range?.start ?? 0;
      const end = req.range?.end ?? req.size - 1;
      if (addRange(l.ranges, start, end) < bytesToCount(req.size, req.durationSeconds)) return false;
      l.counted = true;
      // Counted listeners need no ranges any more.
      l.ranges = [];
      return true;
    },
    get size() {
      return listeners.size;
    },
  };
}

/** A counter, and where what it counts goes: the project of the feed's public key. */
export interface DownloadCounting {
  counter: DownloadCounter;
  record(publicKey: string, articleId: string): void;
}

/** Counted downloads travel with the players' listening events (the articles service checks key and article). */
export function podcastDownloads(events: ListeningBuffer, log: Logger, counter = createDownloadCounter()): DownloadCounting {
  return {
    counter,
    record(publicKey, articleId) {
      events
        .add(publicKey, [{ articleId, type: ListeningEventType.DOWNLOAD, percent: 0, seconds: 0, source: "podcast" }])
        .catch((err: unknown) => log.warn({ err }, "podcast download not recorded"));
    },
  };
}
