// Listening statistics: one document per article and UTC day. Every change is
// a compare-and-set on the document's revision, so concurrent aggregators (one
// per articles replica) never lose a count, and the bounds of plausible.ts
// hold for the sum of all of them, not only for each increment. Written once
// over the document-collection port; runs on SQLite and MongoDB alike
// (test/contract/stats-store.contract.ts).
import { DuplicateKeyError, isNullOrMissing, type DocumentCollection } from "../../../lib/store/collection.js";
import { addWithinBounds, type FigureBounds } from "./plausible.js";

export interface Figures {
  impressions: number;
  plays: number;
  progress25: number;
  progress50: number;
  progress75: number;
  completions: number;
  secondsListened: number;
  /** Podcast downloads: feed enclosure requests as the gateway counts them (one per listener, episode and day). */
  downloads: number;
}

export const FIGURES: (keyof Figures)[] = ["impressions", "plays", "progress25", "progress50", "progress75", "completions", "secondsListened", "downloads"];

export const zeroFigures = (): Figures => ({ impressions: 0, plays: 0, progress25: 0, progress50: 0, progress75: 0, completions: 0, secondsListened: 0, downloads: 0 });

/**
 * Where a listen happened: the player on the publisher's own page, the platform's embed page,
 * the publisher's console, or a podcast app (downloads only).
 */
export const LISTENING_SOURCES = ["player", "embed", "console", "podcast"] as const;
export type ListeningSource = (typeof LISTENING_SOURCES)[number];

/**
 * One document per article, UTC day and source. The player's documents keep the id they had
 * before sources existed (no suffix, no `source` field), so older figures count as the player's.
 * `rev` counts the writes (absent on documents written before it existed).
 */
export type StatsDoc = { _id: string; projectId: string; articleId: string; day: string; source?: ListeningSource; rev?: number } & Partial<Figures>;

export const statsDocId = (projectId: string, articleId: string, day: string, source: ListeningSource) =>
  source === "player" ? `${projectId}|${articleId}|${day}` : `${projectId}|${articleId}|${day}|${source}`;

export interface DayFigures {
  day: string;
  figures: Figures;
}

export interface StatsReport {
  total: Figures;
  days: DayFigures[];
  /** The totals per source, in LISTENING_SOURCES order; sources without figures are left out. */
  bySource: Array<{ source: ListeningSource; figures: Figures }>;
  /** Project reports only: per-article totals, most played first. */
  articles: Array<{ articleId: string; figures: Figures }>;
}

export interface StatsStore {
  /**
   * Adds `delta` to the article's figures of `day` (YYYY-MM-DD, UTC), as far
   * as `bounds` allow (plausible.ts): what exceeds them is dropped.
   */
  add(projectId: string, articleId: string, day: string, delta: Partial<Figures>, bounds: FigureBounds, source?: ListeningSource): Promise<void>;
  article(projectId: string, articleId: string, from: string, to: string): Promise<StatsReport>;
  project(projectId: string, from: string, to: string, maxArticles?: number): Promise<StatsReport>;
}

function addInto(target: Figures, doc: Partial<Figures>): void {
  for (const k of FIGURES) target[k] += doc[k] ?? 0;
}

function report(docs: StatsDoc[], perArticle: boolean, maxArticles: number): StatsReport {
  const total = zeroFigures();
  const byDay = new Map<string, Figures>();
  const byArticle = new Map<string, Figures>();
  const bySource = new Map<ListeningSource, Figures>();
  for (const d of docs) {
    addInto(total, d);
    const source = d.source ?? "player";
    let s = bySource.get(source);
    if (!s) bySource.set(source, (s = zeroFigures()));
    addInto(s, d);
    let day = byDay.get(d.day);
    if (!day) byDay.set(d.day, (day = zeroFigures()));
    addInto(day, d);
    if (perArticle) {
      let a = byArticle.get(d.articleId);
      if (!a) byArticle.set(d.articleId, (a = zeroFigures()));
      addInto(a, d);
    }
  }
  const days = [...byDay.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([day, figures]) => ({ day, figures }));
  const articles = [...byArticle.entries()]
    .sort(([ia, a], [ib, b]) => b.plays - a.plays || b.downloads - a.downloads || b.impressions - a.impressions || (ia < ib ? -1 : 1))
    .slice(0, maxArticles)
    .map(([articleId, figures]) => ({ articleId, figures }));
  const sources = LISTENING_SOURCES.filter((s) => bySource.has(s)).map((source) => ({ source, figures: bySource.get(source)! }));
  return { total, days, articles, bySource: sources };
}

function figuresOf(doc: StatsDoc | null): Figures {
  const f = zeroFigures();
  if (doc) addInto(f, doc);
  return f;
}

/** Compare-and-set rounds before an increment is given up (each a read and a conditional write). */
const MAX_ATTEMPTS = 100;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function openStatsStoreOn(col: DocumentCollection<StatsDoc>): Promise<StatsStore> {
  // MongoDB uses both compound indexes; the embedded driver indexes the first key.
  await col.ensureIndex({ name: "project_article_day", keys: { projectId: 1, articleId: 1, day: 1 } });
  await col.ensureIndex({ name: "project_day", keys: { projectId: 1, day: 1 } });
  // Writes to one document from this process wait for each other, so only other processes' writes can conflict.
  const turns = new Map<string, Promise<void>>();
  function inTurn(id: string, write: () => Promise<void>): Promise<void> {
    const mine = (turns.get(id) ?? Promise.resolve()).catch(() => undefined).then(write);
    turns.set(id, mine);
    void mine
      .finally(() => {
        if (turns.get(id) === mine) turns.delete(id);
      })
      .catch(() => undefined);
    return mine;
  }

  async function addBounded(key: Omit<StatsDoc, "rev">, delta: Partial<Figures>, bounds: FigureBounds): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const doc = await col.findOne({ _id: key._id });
      const current = figuresOf(doc);
      const next = addWithinBounds(current, delta, bounds);
      const $set: Partial<Figures> = {};
      for (const k of FIGURES) if (next[k] !== current[k]) $set[k] = next[k];
      if (Object.keys($set).length === 0) return;
      if (!doc) {
        try {
          await col.insertOne({ ...key, ...next, rev: 1 });
          return;
        } catch (e) {
          if (!(e instanceof DuplicateKeyError)) throw e;
        }
      } else {
        // The figures as read are part of the condition, not only the revision: a store that can
        // answer a read torn by a concurrent update (the MongoDB stand-in in CI writes a stored
        // document field by field) would otherwise pair an old count with a new revision, and
        // the write would overwrite the other replica's increment.
        const asRead = [...FIGURES, "rev"].map((k) => (doc[k as keyof StatsDoc] === undefined ? isNullOrMissing(k) : { [k]: doc[k as keyof StatsDoc] }));
        const unchanged = { $and: asRead };
        // Counters, not acknowledged data: a second of them lost on power failure is not worth a disk sync.
        if (await col.findOneAndUpdate({ _id: key._id, ...unchanged }, { $set, $inc: { rev: 1 } }, { durable: false })) return;
      }
      if (attempt >= MAX_ATTEMPTS) throw new Error(`listening figures of ${key._id}: still contended after ${MAX_ATTEMPTS} attempts`);
      // Jitter, so the replicas that collided do not collide again in lock-step.
      await sleep(Math.random() * Math.min(50, 2 * attempt));
    }
  }

  return {
    async add(projectId, articleId, day, delta, bounds, source = "player") {
      if (!FIGURES.some((k) => (delta[k] ?? 0) > 0)) return;
      const _id = statsDocId(projectId, articleId, day, source);
      const key = source === "player" ? { _id, projectId, articleId, day } : { _id, projectId, articleId, day, source };
      await inTurn(_id, () => addBounded(key, delta, bounds));
    },
    async article(projectId, articleId, from, to) {
      const docs = await col.find({ projectId, day: { $gte: from, $lte: to }, articleId });
      return report(docs, false, 0);
    },
    async project(projectId, from, to, maxArticles = 100) {
      const docs = await col.find({ day: { $gte: from, $lte: to }, projectId });
      return report(docs, true, maxArticles);
    },
  };
}
