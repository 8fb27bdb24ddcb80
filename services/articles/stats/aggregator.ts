// Listening events → daily figures. Events are counted in memory and written
// as one increment per article and day every `flushMs`, so a burst of events
// costs a handful of store writes. Only ready articles of the event's own
// project count; anything else is dropped (a key can never touch another
// project's numbers). The store caps each increment by what the day's plays
// allow for the article's audio duration (plausible.ts), whatever was sent.
import type { Logger } from "../../../lib/log.js";
import type { ArticleStore } from "../store/port.js";
import { boundsForDuration, type FigureBounds } from "./plausible.js";
import { zeroFigures, type Figures, type ListeningSource, type StatsStore } from "./store.js";

export type ListeningEventKind = "impression" | "play" | "progress" | "complete" | "listen" | "download";

export interface ListeningEventIn {
  articleId: string;
  type: ListeningEventKind;
  /** progress only: 25, 50, 75 or 100. */
  percent?: number;
  /** Seconds listened since the player's previous batch. */
  seconds?: number;
  /** Absent: the player on the publisher's page. */
  source?: ListeningSource;
}

/** One player's batch can claim at most this much listening per article. */
export const MAX_SECONDS_PER_EVENT = 600;

export interface ListeningAggregator {
  /** Counts what belongs to ready articles of `projectId`; returns how many events counted. */
  accept(projectId: string, events: ListeningEventIn[], at?: Date): Promise<number>;
  flush(): Promise<void>;
  close(): Promise<void>;
}

export interface AggregatorOptions {
  stats: StatsStore;
  articles: ArticleStore;
  log: Logger;
  flushMs?: number;
  /** How long an article's readiness is trusted without a new lookup. */
  knownForMs?: number;
}

const dayOf = (d: Date) => d.toISOString().slice(0, 10);

function deltaOf(e: ListeningEventIn): Partial<Figures> {
  const seconds = Math.min(Math.max(Number.isFinite(e.seconds) ? (e.seconds as number) : 0, 0), MAX_SECONDS_PER_EVENT);
  const base: Partial<Figures> = seconds > 0 ? { secondsListened: seconds } : {};
  switch (e.type) {
    case "impression":
      return { ...base, impressions: 1 };
    case "play":
      return { ...base, plays: 1 };
    case "complete":
      return { ...base, completions: 1 };
    case "listen":
      return base;
    case "download":
      return { downloads: 1 };
    case "progress":
      if (e.percent === 25) return { ...base, progress25: 1 };
      if (e.percent === 50) return { ...base, progress50: 1 };
      if (e.percent === 75) return { ...base, progress75: 1 };
      // 100 % is the completion; players may send either.
      if (e.percent === 100) return { ...base, completions: 1 };
      return base;
  }
}

export function createListeningAggregator(opts: AggregatorOptions): ListeningAggregator {
  const { stats, articles, log } = opts;
  const knownFor = opts.knownForMs ?? 60_000;
  /** bounds: undefined when the article is not a ready one of the project. */
  const known = new Map<string, { bounds: FigureBounds | undefined; until: number }>();
  let pending = new Map<string, { projectId: string; articleId: string; day: string; source: ListeningSource; figures: Figures; bounds: FigureBounds }>();
  let flushing: Promise<void> = Promise.resolve();

  async function boundsOf(projectId: string, articleId: string): Promise<FigureBounds | undefined> {
    const key = `${projectId}|${articleId}`;
    const hit = known.get(key);
    const now = Date.now();
    if (hit && hit.until > now) return hit.bounds;
    const a = await articles.get(projectId, articleId);
    const bounds = a?.status === "ready" && a.audio ? boundsForDuration(a.audio.duration) : undefined;
    if (known.size >= 50_000) known.delete(known.keys().next().value as string);
    known.set(key, { bounds, until: now + knownFor });
    return bounds;
  }

  async function flushNow(): Promise<void> {
    const batch = pending;
    pending = new Map();
    for (const p of batch.values()) {
      try {
        await stats.add(p.projectId, p.articleId, p.day, p.figures, p.bounds, p.source);
      } catch (err) {
        // Analytics: a lost increment is logged, never allowed to block playback or the API.
        log.warn({ err, projectId: p.projectId, articleId: p.articleId }, "listening figures not stored");
      }
    }
  }

  const flush = () => (flushing = flushing.then(flushNow));
  const timer = setInterval(() => void flush(), opts.flushMs ?? 1_000);
  timer.unref();

  return {
    async accept(projectId, events, at = new Date()) {
      const day = dayOf(at);
      let counted = 0;
      for (const e of events) {
        const bounds = await boundsOf(projectId, e.articleId);
        if (!bounds) continue;
        // Downloads are the podcast apps' figure, whatever source was claimed.
        const source = e.type === "download" ? "podcast" : (e.source ?? "player");
        const key = `${projectId}|${e.articleId}|${day}|${source}`;
        let p = pending.get(key);
        if (!p) pending.set(key, (p = { projectId, articleId: e.articleId, day, source, figures: zeroFigures(), bounds }));
        p.bounds = bounds;
        for (const [k, v] of Object.entries(deltaOf(e))) p.figures[k as keyof Figures] += v as number;
        counted++;
      }
      return counted;
    },
    flush,
    async close() {
      clearInterval(timer);
      await flush();
    },
  };
}
