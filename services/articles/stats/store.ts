// Listening statistics: one document per article and UTC day, grown by atomic
// increments, so concurrent aggregators (one per articles replica) never lose
// a count. Written once over the document-collection port; runs on NeDB and
// MongoDB alike (test/contract/stats-store.contract.ts).
import type { DocumentCollection } from "../../../lib/store/collection.js";

export interface Figures {
  impressions: number;
  plays: number;
  progress25: number;
  progress50: number;
  progress75: number;
  completions: number;
  secondsListened: number;
}

export const FIGURES: (keyof Figures)[] = ["impressions", "plays", "progress25", "progress50", "progress75", "completions", "secondsListened"];

export const zeroFigures = (): Figures => ({ impressions: 0, plays: 0, progress25: 0, progress50: 0, progress75: 0, completions: 0, secondsListened: 0 });

export type StatsDoc = { _id: string; projectId: string; articleId: string; day: string } & Partial<Figures>;

export interface DayFigures {
  day: string;
  figures: Figures;
}

export interface StatsReport {
  total: Figures;
  days: DayFigures[];
  /** Project reports only: per-article totals, most played first. */
  articles: Array<{ articleId: string; figures: Figures }>;
}

export interface StatsStore {
  /** Adds `delta` to the article's figures of `day` (YYYY-MM-DD, UTC). */
  add(projectId: string, articleId: string, day: string, delta: Partial<Figures>): Promise<void>;
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
  for (const d of docs) {
    addInto(total, d);
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
    .sort(([ia, a], [ib, b]) => b.plays - a.plays || b.impressions - a.impressions || (ia < ib ? -1 : 1))
    .slice(0, maxArticles)
    .map(([articleId, figures]) => ({ articleId, figures }));
  return { total, days, articles };
}

export async function openStatsStoreOn(col: DocumentCollection<StatsDoc>): Promise<StatsStore> {
  // MongoDB uses both compound indexes; the embedded driver indexes the first key.
  await col.ensureIndex({ name: "project_article_day", keys: { projectId: 1, articleId: 1, day: 1 } });
  await col.ensureIndex({ name: "project_day", keys: { projectId: 1, day: 1 } });
  return {
    async add(projectId, articleId, day, delta) {
      const $inc: Record<string, number> = {};
      for (const k of FIGURES) if (delta[k]) $inc[k] = delta[k] as number;
      if (Object.keys($inc).length === 0) return;
      // Counters, not acknowledged data: a second of them lost on power failure is not worth a disk sync.
      await col.upsertOne({ _id: `${projectId}|${articleId}|${day}`, projectId, articleId, day }, { $inc }, { durable: false });
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
