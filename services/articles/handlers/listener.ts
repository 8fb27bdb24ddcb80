// ListenerService: what a project's public player key may read (ready,
// non-deleted articles: title, language, audio), listening events, and the
// statistics publishers read with their API token.
import { Code, ConnectError, type HandlerContext, type ServiceImpl } from "@connectrpc/connect";
import type { ListenerArticle, ListenerService, StatsFigures, StatsReport as StatsReportMessage } from "../../../gen/articles/v1/listener_pb.js";
import { ListeningEventType } from "../../../gen/articles/v1/listener_pb.js";
import { requireListener, requirePublisher, type CallerResolver } from "../../../lib/rpc/caller.js";
import { audioFile, transcriptFiles } from "../convert.js";
import { spokenTextOf } from "../admission/admit.js";
import { openingOf } from "../opening.js";
import type { ListeningChannel } from "../../../lib/bus/listening.js";
import type { ListeningEventIn } from "../stats/aggregator.js";
import type { Figures, ListeningSource, StatsReport, StatsStore } from "../stats/store.js";
import { isParked, PENDING_STATUSES, type ArticleStore, type StoredArticle } from "../store/port.js";
import type { RequestAudio } from "./context.js";
import type { OnDemandBudget } from "../on-demand-budget.js";
import { CLIENT_NETWORK_HEADER } from "../../../lib/rpc/client-network.js";
import * as v from "../validate.js";
import { requestIdOf } from "../../../lib/rpc/request-id.js";

export interface ListenerHandlerDeps {
  store: ArticleStore;
  stats: StatsStore;
  listening: ListeningChannel<ListeningBatch>;
  resolveCaller: CallerResolver;
  audioBaseUrl: string;
  /** Audio on demand: a lookup of a parked article asks for its audio; without it, parked articles are simply not ready. */
  requestAudio?: RequestAudio;
  /** Renders lookups may start per project (on-demand-budget.ts); absent: unbounded. */
  onDemandBudget?: OnDemandBudget;
}

/** What travels from the ingest call to the aggregator. */
export interface ListeningBatch {
  projectId: string;
  /** Epoch ms of receipt: the day the events count on. */
  at: number;
  events: ListeningEventIn[];
}

export const MAX_EVENTS_PER_BATCH = 50;
const MAX_PAGE = 500;
const DEFAULT_DAYS = 30;
const MAX_DAYS = 366;

const EVENT_KINDS: Partial<Record<ListeningEventType, ListeningEventIn["type"]>> = {
  [ListeningEventType.IMPRESSION]: "impression",
  [ListeningEventType.PLAY]: "play",
  [ListeningEventType.PROGRESS]: "progress",
  [ListeningEventType.COMPLETE]: "complete",
  [ListeningEventType.LISTEN]: "listen",
  [ListeningEventType.DOWNLOAD]: "download",
};

/** What a player may name as its source; "podcast" is implied by a download, never claimed. */
const PLAYER_SOURCES: ReadonlySet<string> = new Set<ListeningSource>(["player", "embed", "console"]);

const notFound = () => new ConnectError("No ready audio for this article", Code.NotFound);
/** The player shows "audio not available yet"; the article keeps waiting for a later lookup or the publisher. */
const notYet = () => new ConnectError("Audio not available yet: this project's on-demand budget is used up for now; try again later", Code.ResourceExhausted);

function dayRange(from: string, to: string, now = new Date()): { from: string; to: string } {
  // Each checked before it is used: an impossible `to` must not reach Date arithmetic (RangeError, a 500).
  const end = v.calendarDay("to", to || now.toISOString().slice(0, 10));
  const start = v.calendarDay("from", from || new Date(Date.parse(`${end}T00:00:00Z`) - (DEFAULT_DAYS - 1) * 86_400_000).toISOString().slice(0, 10));
  const span = (Date.parse(`${end}T00:00:00Z`) - Date.parse(`${start}T00:00:00Z`)) / 86_400_000;
  if (span < 0) throw v.invalid("from: must not be after to");
  if (span >= MAX_DAYS) throw v.invalid(`from: the range may span at most ${MAX_DAYS} days`);
  return { from: start, to: end };
}

const figures = (f: Figures): StatsFigures => ({
  $typeName: "articles.v1.StatsFigures",
  impressions: BigInt(f.impressions),
  plays: BigInt(f.plays),
  progress25: BigInt(f.progress25),
  progress50: BigInt(f.progress50),
  progress75: BigInt(f.progress75),
  completions: BigInt(f.completions),
  secondsListened: Math.round(f.secondsListened * 10) / 10,
  downloads: BigInt(f.downloads),
});

function reportMessage(r: StatsReport, range: { from: string; to: string }, titles = new Map<string, string>()): StatsReportMessage {
  return {
    $typeName: "articles.v1.StatsReport",
    from: range.from,
    to: range.to,
    total: figures(r.total),
    days: r.days.map((d) => ({ $typeName: "articles.v1.DailyStats", day: d.day, figures: figures(d.figures) })),
    articles: r.articles.map((a) => ({ $typeName: "articles.v1.ArticleStatsTotal", articleId: a.articleId, figures: figures(a.figures), title: titles.get(a.articleId) ?? "" })),
    bySource: r.bySource.map((s) => ({ $typeName: "articles.v1.SourceStats", source: s.source, figures: figures(s.figures) })),
  };
}

export function listenerHandlers(deps: ListenerHandlerDeps): ServiceImpl<typeof ListenerService> {
  const { store, stats, listening, audioBaseUrl } = deps;
  const listener = async (ctx: HandlerContext) => requireListener(await deps.resolveCaller(ctx.requestHeader));
  const publisher = async (ctx: HandlerContext) => requirePublisher(await deps.resolveCaller(ctx.requestHeader), "read");

  /** Only what a listener may see; nothing of the text (but its opening, for feeds), prompt or processing. */
  const publicView = (a: StoredArticle, withSummary = false): ListenerArticle => ({
    $typeName: "articles.v1.ListenerArticle",
    id: a.id,
    title: a.title,
    lang: a.lang,
    url: a.url ?? undefined,
    audio: audioFile(a.audio, audioBaseUrl),
    audioPreview: audioFile(a.audioPreview, audioBaseUrl),
    added: BigInt(a.added),
    updated: BigInt(a.updated ?? a.added),
    revision: BigInt(a.revision),
    labels: a.labels,
    pending: false,
    transcript: a.status === "ready" ? transcriptFiles(a, audioBaseUrl) : undefined,
    // What was read aloud (the parsed or crawled text where there is one), so never markup.
    summary: withSummary ? openingOf(spokenTextOf(a), a.title) : "",
    published: a.published ?? undefined,
  });

  /**
   * A lookup of a parked article asks for its audio, within the project's on-demand budget.
   * Lookups of one article in flight together share one ask (and one unit of the budget).
   */
  const asking = new Map<string, Promise<StoredArticle>>();
  const askFor = (a: StoredArticle, ctx: HandlerContext, requestAudio: RequestAudio): Promise<StoredArticle> => {
    const key = `${a.projectId} ${a.id}`;
    let asked = asking.get(key);
    if (!asked) {
      const requestId = requestIdOf(ctx);
      const network = ctx.requestHeader.get(CLIENT_NETWORK_HEADER) ?? undefined;
      asked = (async () => {
        if (deps.onDemandBudget && !(await deps.onDemandBudget.take(a.projectId, network))) return a;
        return requestAudio(a, requestId, "listener");
      })().finally(() => asking.delete(key));
      asking.set(key, asked);
    }
    return asked;
  };

  /** Asked for on demand and still being made: the listener may wait for it (and play its preview meanwhile). */
  const madeOnDemand = (a: StoredArticle) => a.demandedAt !== undefined && PENDING_STATUSES.includes(a.status);

  return {
    async getListenerArticle(req, ctx) {
      const { projectId } = await listener(ctx);
      const l = req.lookup;
      let a: StoredArticle | null;
      if (l.case === "id") a = await store.get(projectId, v.requiredId("id", l.value));
      else if (l.case === "externalId") a = await store.getByExternalId(projectId, v.requiredId("externalId", l.value));
      else if (l.case === "url") a = await store.getByUrl(projectId, v.requiredId("url", l.value));
      else throw v.invalid("one of id, externalId or url is required");
      if (a && isParked(a) && deps.requestAudio) {
        a = await askFor(a, ctx, deps.requestAudio);
        if (isParked(a)) throw notYet();
      }
      if (a && madeOnDemand(a)) return { article: { ...publicView(a), audio: undefined, transcript: undefined, pending: true } };
      if (!a || a.status !== "ready" || !a.audio) throw notFound();
      return { article: publicView(a) };
    },

    async listListenerArticles(req, ctx) {
      const { projectId } = await listener(ctx);
      const limit = req.limit || 100;
      if (limit < 1 || limit > MAX_PAGE) throw v.invalid(`limit: must be between 1 and ${MAX_PAGE}`);
      if (req.offset < 0) throw v.invalid("offset: must not be negative");
      const label = req.label === undefined ? undefined : v.requiredId("label", req.label);
      const page = await store.listReady(projectId, { label, limit, offset: req.offset });
      return { count: BigInt(page.count), articles: page.items.map((a) => publicView(a, true)) };
    },

    async recordListening(req, ctx) {
      const { projectId } = await listener(ctx);
      if (req.events.length > MAX_EVENTS_PER_BATCH) throw v.invalid(`events: at most ${MAX_EVENTS_PER_BATCH} per batch`);
      const events: ListeningEventIn[] = [];
      for (const [i, e] of req.events.entries()) {
        const type = EVENT_KINDS[e.type];
        if (!type) throw v.invalid(`events[${i}].type: must be impression, play, progress, complete, listen or download`);
        if (e.source !== "" && type !== "download" && !PLAYER_SOURCES.has(e.source)) throw v.invalid(`events[${i}].source: must be player, embed or console`);
        if (type === "progress" && ![25, 50, 75, 100].includes(e.percent)) throw v.invalid(`events[${i}].percent: must be 25, 50, 75 or 100`);
        if (!Number.isFinite(e.seconds) || e.seconds < 0) throw v.invalid(`events[${i}].seconds: must be a non-negative number`);
        const source = type === "download" ? "podcast" : ((e.source || "player") as ListeningSource);
        events.push({ articleId: v.requiredId(`events[${i}].articleId`, e.articleId), type, percent: e.percent, seconds: e.seconds, source });
      }
      await listening.send({ projectId, at: Date.now(), events });
      return { accepted: events.length };
    },

    async getArticleStats(req, ctx) {
      const { projectId } = await publisher(ctx);
      const id = v.requiredId("articleId", req.articleId);
      if (!(await store.get(projectId, id))) throw new ConnectError(`Article '${id}' not found`, Code.NotFound);
      const range = dayRange(req.from, req.to);
      return { report: reportMessage(await stats.article(projectId, id, range.from, range.to), range) };
    },

    async getProjectStats(req, ctx) {
      const { projectId } = await publisher(ctx);
      const range = dayRange(req.from, req.to);
      const report = await stats.project(projectId, range.from, range.to);
      return { report: reportMessage(report, range, await store.titles(projectId, report.articles.map((a) => a.articleId))) };
    },
  };
}
