// The articles storage port. The service talks only to this interface;
// store.ts implements it once, and on both drivers (SQLite, MongoDB) it passes
// test/contract/article-store.contract.ts.
//
// Every write touches one document and is conditional where a race matters:
// revision checks make a late worker result or a concurrent edit harmless.
import type { LoudnessSettings } from "../../../lib/loudness.js";
import type { PronunciationRule } from "../../../lib/pronunciations.js";
import type { SearchBounds } from "../../../lib/store/collection.js";
import { nextSeq, sortAtOf } from "./order.js";

export const ARTICLE_STATUSES = [
  "waiting",
  "processing",
  "ready",
  "errored",
  "deleted",
  "retry",
  "fallback",
  "no_money",
  "limit_reached",
  "rejected",
  "parsed",
  "recrawling",
] as const;

export type ArticleStatus = (typeof ARTICLE_STATUSES)[number];

/** Statuses in which an article still expects audio work. */
export const PENDING_STATUSES: readonly ArticleStatus[] = ["waiting", "parsed", "processing", "retry", "fallback"];

/** Admitted later, when the day turns or credit is added. */
export const DEFERRED_STATUSES: readonly ArticleStatus[] = ["limit_reached", "no_money"];

/** Why an article was not (yet) audified: the rule or bound, for operators. */
export interface ArticleDecision {
  /** e.g. "rules.maxChars", "dailyLimit", "creditChars". */
  rule: string;
  detail: string;
  /** ISO 8601. */
  at: string;
}

/** What admission decided for one revision. */
export interface AdmissionResult {
  status: ArticleStatus;
  types: ContentTypeScore[];
  /** Text the speech engine reads when it differs from `text` (parsed or recrawled). */
  spokenText?: string;
  decision?: ArticleDecision;
  reservedChars?: number;
  /** Deferred articles stay pending and are admitted again later. */
  keepPending: boolean;
  /** The project's pronunciation rules for the article's language at admission; absent when none. */
  pronunciations?: PronunciationRule[];
  /** The project's loudness target at admission; absent when the project has none of its own. */
  loudness?: LoudnessSettings;
}

export interface StoredAudio {
  key: string;
  /** Seconds. */
  duration: number;
}

/**
 * The revision's timed text was stored beside its MP3s (segments, WebVTT, SRT; the keys follow
 * from article and revision, lib/revision-files.ts). Revisions rendered by older releases have none.
 */
export interface StoredTranscript {
  /** chapters.json too: the article has headings. */
  chapters: boolean;
}

/** What a finished render leaves on the revision. */
export interface CompletedRender {
  audio: StoredAudio;
  preview?: StoredAudio;
  transcript?: StoredTranscript;
}

export interface ArticleErrorEntry {
  error: string;
  /** ISO 8601. */
  date: string;
}

export interface ContentTypeScore {
  name: string;
  score: number;
}

export interface StoredArticle {
  id: string;
  projectId: string;
  externalId?: string;
  title: string;
  text: string;
  prompt?: string;
  url?: string;
  isRaw: boolean;
  parse: boolean;
  voice: string;
  lang: string;
  types: ContentTypeScore[];
  labels: string[];
  status: ArticleStatus;
  revision: number;
  /** Unix seconds. */
  added: number;
  /** Unix seconds of the last processing result, null before any. */
  updated: number | null;
  audio?: StoredAudio;
  audioPreview?: StoredAudio;
  /** Goes and comes with `audio`: the ready revision's timed text. */
  transcript?: StoredTranscript;
  error?: string;
  errors: ArticleErrorEntry[];
  /** Epoch milliseconds of the last change of any kind; drives the reconciler. */
  changedAt: number;
  /** When the article was published (ISO 8601, UTC, as the publisher or its source said); absent when not given. */
  published?: string;
  /** The list order (order.ts): epoch ms of `published`, else of the creation. */
  sortAt: number;
  /** The creation sequence (order.ts): breaks ties of `sortAt` by creation order. */
  seq: number;
  /** Said to the publisher about this revision, e.g. that its detected language has no voice; absent when nothing. */
  warning?: string;

  // Internal bookkeeping, never shown to publishers.
  /** "pending" while this revision has not been admitted (including deferred ones). */
  admission?: "pending";
  /** Epoch ms until which one admission run holds this revision. */
  admittingUntil?: number;
  spokenText?: string;
  /** Main text extracted from the article's URL by the last recrawl that changed it. */
  crawledText?: string;
  decision?: ArticleDecision;
  /** Characters debited for this revision, until refunded. */
  reservedChars?: number;
  /** Status to restore when a recrawl finds nothing new. */
  recrawlFrom?: ArticleStatus;
  /** Epoch ms of the last recrawl. */
  crawledAt?: number;
  /** Pronunciation rules snapshotted by admission for this revision. */
  pronunciations?: PronunciationRule[];
  /** The project's loudness target snapshotted by admission for this revision. */
  loudness?: LoudnessSettings;
  /** Audio on demand: stored waiting, not admitted nor queued until someone asks for its audio (unpark). */
  parked?: true;
  /** Epoch ms when a listener or the publisher asked for this revision's audio: its job goes first and listeners wait for it. */
  demandedAt?: number;
  /** Created from its URL: the page is still to be fetched (status recrawling) before the article has its text (pages/). */
  pageFetch?: "pending";
  /** What the creator gave along with the URL, which the page then does not replace. */
  pageKeeps?: PageKept[];
}

export type PageKept = "title" | "voice";

/** What a publisher supplies on create; the store fills in the lifecycle fields. */
export type NewArticle = Pick<
  StoredArticle,
  "id" | "projectId" | "externalId" | "title" | "text" | "prompt" | "url" | "isRaw" | "parse" | "voice" | "lang" | "labels" | "published" | "warning"
> & {
  admission?: "pending";
  admittingUntil?: number;
  parked?: true;
  pageFetch?: "pending";
  pageKeeps?: PageKept[];
  /** The creation sequence (order.ts nextSeq), taken when the request arrived so a batch keeps its order; default: at insert. */
  seq?: number;
};

/** What a fetched page gives an article created from its URL (pages/fetch-page.ts). */
export interface PageFill {
  title: string;
  text: string;
  /** The page's canonical URL, normalised; absent keeps the URL it was created with. */
  url?: string;
  voice: string;
  lang: string;
  /** The page's publication date (ISO 8601, UTC) and the list order it gives (order.ts); absent keeps the article's. */
  published?: string;
  sortAt?: number;
  /** Why the page's text is not read in its own language (voice-choice.ts). */
  warning?: string;
}

/**
 * Content change on update. Absent keys keep their value; `prompt: null`
 * removes the prompt. The store bumps the revision, resets the status to
 * waiting and drops audio and errors of the previous revision.
 */
export interface ArticlePatch {
  title?: string;
  text?: string;
  url?: string;
  externalId?: string;
  voice?: string;
  lang?: string;
  parse?: boolean;
  isRaw?: boolean;
  prompt?: string | null;
  labels?: string[];
  /** ISO 8601; null removes it (the article then lists by its creation). */
  published?: string | null;
  /** The new revision's warning; null removes the previous one. */
  warning?: string | null;
  /** Set by the service: the new revision goes through admission before a job is published. */
  admission?: "pending";
}

export interface ArticlePage<A = StoredArticle> {
  /** All non-deleted articles of the project (that match the list's filter), not just this page. */
  count: number;
  /** Newest first: by `published`, else creation, then by creation order (order.ts). */
  items: A[];
  /** A search's count stopped at its bound (search.ts SEARCH_BOUNDS): more articles match than `count`. */
  countCapped?: boolean;
}

/**
 * An article's large text fields, most of its row: the embedded store keeps them deflated.
 */
export const TEXT_FIELDS = ["text", "crawledText"] as const;
/** What a publisher's list page leaves out: the recrawled text, which no answer shows. Its items carry `text` (the spec's ArticleListItem). */
export const LIST_OMITS = ["crawledText"] as const;
/** An article as a publisher's list page has it. */
export type ListedArticle = Omit<StoredArticle, (typeof LIST_OMITS)[number]>;

export interface ListFilter {
  status?: ArticleStatus;
  label?: string;
  /**
   * Only articles whose title or text holds each of these folded words (lib/search-words.ts
   * queryWords: a whole word, or a marked one as a word's prefix); the page is then ranked by relevance, then newest first,
   * and the count is of the matches, both bounded (search.ts SEARCH_BOUNDS: relevance among the newest
   * 1,000 matches, then older ones newest first; the count exact up to 1,000, past it `countCapped`).
   */
  words?: readonly string[];
  /** A search's bounds other than search.ts SEARCH_BOUNDS (tests). */
  searchBounds?: SearchBounds;
}

export interface StaleArticle {
  id: string;
  projectId: string;
  revision: number;
  /** Not admitted yet: run admission instead of publishing. */
  pendingAdmission?: boolean;
  /** Someone asked for its audio (demandedAt): published again, its job still goes first. */
  demanded?: boolean;
  /** Created from its URL and its page not read yet: fetched again, never published. */
  pendingFetch?: boolean;
  /** What the query is ordered by before the id (its due time, or when it was added): pass it back in `after`. */
  key?: number;
}

export interface FindStaleOptions {
  /** Keyset paging: the last row of the previous page (its id and key). */
  after?: { id: string; key: number };
  /** Default 500. */
  limit?: number;
}

/** Why a conditional write did not apply. */
export type UpdateOutcome =
  | { ok: true; article: StoredArticle }
  | { ok: false; reason: "not_found" | "deleted" | "revision_changed" };

export interface ArticleStore {
  /** Throws DuplicateExternalIdError or DuplicateIdError. */
  insert(article: NewArticle, now?: Date): Promise<StoredArticle>;
  get(projectId: string, id: string): Promise<StoredArticle | null>;
  getByExternalId(projectId: string, externalId: string): Promise<StoredArticle | null>;
  /**
   * By URL in any spelling: matches the stored URL against the normalised form
   * of `url` (lib/urls.ts; URLs are stored normalised), and against `url`
   * exactly as given, so an article an older release stored under a URL that
   * was not normal is still found by it. Several articles may share a URL: a
   * live one wins over a deleted one, then the newest.
   */
  getByUrl(projectId: string, url: string): Promise<StoredArticle | null>;
  /** Titles of the project's articles among `ids` (a short list, e.g. the statistics' top articles), in one query. */
  titles(projectId: string, ids: readonly string[]): Promise<Map<string, string>>;
  /**
   * The project's live articles, newest first; with a filter, only those in `status` and/or
   * carrying `label` (both: both). Deleted ones never, so `status: "deleted"` answers none.
   * The count is as exact as without a filter, and costs as little (kept per status and label).
   */
  list(projectId: string, limit: number, offset: number, filter?: ListFilter): Promise<ArticlePage<ListedArticle>>;
  /** Ready articles of the project (optionally with `label`), newest first: what listeners may see. */
  listReady(projectId: string, opts: { label?: string; limit: number; offset: number }): Promise<ArticlePage>;
  /** Applies only when the revision is still expectedRevision and the article is not deleted. Throws DuplicateExternalIdError. */
  update(projectId: string, id: string, expectedRevision: number, patch: ArticlePatch, now?: Date): Promise<UpdateOutcome>;
  /**
   * Sets the labels of a live article at `expectedRevision` without a new revision (no new audio):
   * what a bulk job's addLabels and removeLabels do. Same outcomes as update.
   */
  relabel(projectId: string, id: string, expectedRevision: number, labels: string[], now?: Date): Promise<UpdateOutcome>;
  /** Idempotent; null when the project has no such article. */
  markDeleted(projectId: string, id: string, now?: Date): Promise<StoredArticle | null>;

  /**
   * Audio on demand: the parked article becomes a pending admission with its lease held until
   * `admittingUntil` (epoch ms), stamped `demandedAt`; one conditional write, so of concurrent
   * askers exactly one gets the article back (the others null).
   */
  unpark(projectId: string, id: string, admittingUntil: number, now?: Date): Promise<StoredArticle | null>;

  // Worker side, keyed by article id (the job carries it).
  /** Moves to processing when the revision is current and the article neither deleted nor already ready. */
  claim(id: string, revision: number, now?: Date): Promise<StoredArticle | null>;
  // Each answers the article as changed, or null when the revision is stale or no longer live.
  reportStatus(id: string, revision: number, status: "processing" | "retry" | "fallback", error?: string, now?: Date): Promise<StoredArticle | null>;
  /** A worker still renders the revision: its due time moves to `now`, nothing else changes (null: not in hand any more). */
  keepDue(id: string, revision: number, now?: Date): Promise<StoredArticle | null>;
  /** The preview is stored before the full audio: kept on the processing revision for listeners. */
  reportPreview(id: string, revision: number, preview: StoredAudio, now?: Date): Promise<StoredArticle | null>;
  /** The revision is ready with its files; a transcript absent is none (an older worker), not "keep". */
  complete(id: string, revision: number, render: CompletedRender, now?: Date): Promise<StoredArticle | null>;
  fail(id: string, revision: number, error: string, now?: Date): Promise<StoredArticle | null>;

  /** Due articles (due.ts) in one of `statuses` whose due time is before `olderThan` (epoch ms), by due time then id; never parked ones. */
  findStale(statuses: readonly ArticleStatus[], olderThan: number, opts?: FindStaleOptions): Promise<StaleArticle[]>;
  /** Articles per status over all projects, for the articles_by_status metric; every status is present. */
  countByStatus?(): Promise<Record<ArticleStatus, number>>;
  /** Recomputes the counts behind list totals and countByStatus from the articles (an operator's repair; a full pass). */
  recount?(): Promise<void>;

  /** Any project; for the internal calls keyed by article id. */
  getById(id: string): Promise<StoredArticle | null>;

  // Admission (services/articles/admission/admit.ts).
  /** Takes a lease on a pending revision so one admission runs at a time; null when not pending, leased or superseded. */
  claimAdmission(id: string, revision: number, leaseMs: number, now?: Date): Promise<StoredArticle | null>;
  /** Records the decision for the revision; null when it was superseded or deleted meanwhile. */
  finishAdmission(id: string, revision: number, result: AdmissionResult, now?: Date): Promise<StoredArticle | null>;
  /** Deferred articles, oldest first (added, then id), of one project or of all but `excludeProjects`. */
  findDeferred(projectId: string | undefined, limit: number, excludeProjects?: readonly string[]): Promise<StaleArticle[]>;
  /** Clears the reservation of the revision once; true for the one caller that should refund it. */
  takeReservation(id: string, revision: number, chars: number): Promise<boolean>;

  // Recrawl.
  /** Moves the article to recrawling when it is still in `from` at `revision`. */
  startRecrawl(id: string, revision: number, from: ArticleStatus, now?: Date): Promise<StoredArticle | null>;
  /** Nothing changed: back to the status before the recrawl. */
  endRecrawl(id: string, revision: number, now?: Date): Promise<StoredArticle | null>;
  /** New content: a new revision waiting for admission, with the crawled text to speak. */
  recrawled(id: string, revision: number, crawledText: string, now?: Date): Promise<StoredArticle | null>;
  // Create from a URL (pages/).
  /**
   * The page of an article stored with `pageFetch` was read: its title, text, URL and voice are
   * set, and it is `parsed` and pending admission, in the same revision. Null when it was
   * updated, deleted or filled meanwhile.
   */
  pageFetched(id: string, revision: number, fill: PageFill, now?: Date): Promise<StoredArticle | null>;
  /** Its page could not be read: errored with `error`, in words. Null when it was updated, deleted or filled meanwhile. */
  pageFetchFailed(id: string, revision: number, error: string, now?: Date): Promise<StoredArticle | null>;
  /** The project's live articles with a URL added since `addedSince` (unix seconds), newest first. */
  findRecrawlCandidates(projectId: string, addedSince: number, opts?: FindStaleOptions): Promise<Array<StaleArticle & { crawledAt?: number; added: number; status: ArticleStatus }>>;

  // Pronunciation rules, one list per project (kept beside the articles, in a collection of their own).
  /** The project's list; empty when it has none. */
  getPronunciations(projectId: string): Promise<PronunciationRule[]>;
  /** Replaces the project's whole list (an empty list removes it). */
  setPronunciations(projectId: string, rules: PronunciationRule[], now?: Date): Promise<void>;
  /** Settles once the articles stored before search existed (an upgraded store) are found by words too. */
  searchComplete?(): Promise<void>;
  /**
   * Grows whenever reads may see a new write of an article; absent where this process does not
   * make every write (DocumentCollection.changes).
   */
  changes?(): number;
  /** As `changes`, not grown by the insert of a new article (DocumentCollection.rewrites). */
  rewrites?(): number;
  close(): Promise<void>;
}

export class DuplicateExternalIdError extends Error {
  constructor(readonly externalId: string) {
    super(`externalId '${externalId}' is already used`);
    this.name = "DuplicateExternalIdError";
  }
}

/** The generated id is taken; the caller picks another. */
export class DuplicateIdError extends Error {
  constructor(readonly id: string) {
    super(`article id '${id}' already exists`);
    this.name = "DuplicateIdError";
  }
}

export const unixSeconds = (d: Date) => Math.floor(d.getTime() / 1000);

/** The document a fresh article starts as; shared by both document layouts. */
export function initialArticle(a: NewArticle, now: Date): StoredArticle {
  const seq = a.seq ?? nextSeq(now.getTime());
  const doc: StoredArticle = {
    id: a.id,
    projectId: a.projectId,
    title: a.title,
    text: a.text,
    isRaw: a.isRaw,
    parse: a.parse,
    voice: a.voice,
    lang: a.lang,
    types: [],
    labels: [...a.labels],
    // Created from its URL: "Content is being fetched" until its page is read.
    status: a.pageFetch ? "recrawling" : "waiting",
    revision: 1,
    added: unixSeconds(now),
    updated: null,
    errors: [],
    changedAt: now.getTime(),
    sortAt: sortAtOf(a.published, unixSeconds(now), seq),
    seq,
  };
  if (a.published !== undefined) doc.published = a.published;
  if (a.warning !== undefined) doc.warning = a.warning;
  if (a.externalId !== undefined) doc.externalId = a.externalId;
  if (a.prompt !== undefined) doc.prompt = a.prompt;
  if (a.url !== undefined) doc.url = a.url;
  if (a.admission) doc.admission = a.admission;
  // Created with its admission lease already held (the create path admits at once: one write fewer).
  if (a.admittingUntil !== undefined) doc.admittingUntil = a.admittingUntil;
  if (a.parked) doc.parked = true;
  if (a.pageFetch) doc.pageFetch = a.pageFetch;
  if (a.pageKeeps?.length) doc.pageKeeps = [...a.pageKeeps];
  return doc;
}

/** Fields a new revision must not inherit from the previous one. */
export const REVISION_SCOPED: readonly (keyof StoredArticle)[] = [
  "audio",
  "audioPreview",
  "transcript",
  "error",
  "admittingUntil",
  "spokenText",
  "decision",
  "reservedChars",
  "recrawlFrom",
  "pronunciations",
  "loudness",
  "demandedAt",
  "pageFetch",
  "pageKeeps",
];

/**
 * Audio on demand: a parked article waits for someone to ask for its audio, and no background
 * work (reconciler, admission, a due time) may pick it up meanwhile. The one place this rule
 * lives; the store's queries use its filter form, PARKED_EXCLUDED (store.ts).
 */
export const isParked = (a: Pick<StoredArticle, "parked">): boolean => a.parked === true;
