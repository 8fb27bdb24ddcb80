// The sources store port: the feeds a project follows, their polling state
// and lease, and the items already turned into articles. One implementation
// over the document-collection port (store.ts), opened on SQLite or MongoDB
// by open.ts; both pass test/contract/source-store.contract.ts.
import type { SourceKind } from "./parse-feed.js";

export type SourceMode = "text" | "page";

/** What a publisher sets (POST / PUT /api/sources). */
export interface SourceSettings {
  url: string;
  /** Absent: detected at each poll. */
  kind?: SourceKind;
  pollSeconds: number;
  labels: string[];
  voice?: string;
  lang?: string;
  mode: SourceMode;
  /** The newest N items older than `since` are imported too. */
  backfill: number;
  paused: boolean;
}

export interface SourceState {
  /** Unix ms. */
  lastPoll?: number;
  lastSuccess?: number;
  nextPoll: number;
  /** Items the feed held at the last successful poll. */
  seen: number;
  /** Articles created from this source, in all. */
  created: number;
  /** Articles this source updated because their item changed. */
  updated: number;
  /** Why the last poll failed, in words; absent after a success. */
  error?: string;
}

export interface SourceDoc extends SourceSettings, SourceState {
  _id: string;
  projectId: string;
  /** Unix ms the source was added. */
  added: number;
  /** Items published before this (unix ms) are not imported (the moment added, unless backfill). */
  since: number;
  /** The kind the last successful poll found. */
  detected?: SourceKind;
  /** Conditional request validators of the last 200 answer. */
  etag?: string;
  lastModified?: string;
  /** Polls failed in a row (backoff). */
  failures: number;
  /** Key hashes of undated items that were there at the first poll: not new, never imported (unless backfill). */
  baseline?: string[];
  /** The first successful poll has run (the baseline is set). */
  primed?: boolean;
  /** New items were left for the next poll (the per-poll bound): it must not be answered 304. */
  backlog?: boolean;
  /** Unix ms until which `leaseOwner` polls it; 0 when nobody does. */
  leaseUntil: number;
  leaseOwner?: string;
}

/** One item of a source, once imported (or found already imported). */
export interface SourceItemDoc {
  /** `${sourceId}:${keyHash}` */
  _id: string;
  sourceId: string;
  projectId: string;
  /** Hash of what is spoken of it (title and text): a change re-renders. */
  hash: string;
  articleId: string;
}

export class SourceLimitError extends Error {
  constructor(readonly max: number) {
    super(`a project may follow at most ${max} sources; delete one first`);
    this.name = "SourceLimitError";
  }
}

export interface SourceStore {
  /** Throws SourceLimitError when the project already has `maxPerProject`. */
  insert(doc: SourceDoc, maxPerProject: number): Promise<void>;
  list(projectId: string): Promise<SourceDoc[]>;
  get(projectId: string, id: string): Promise<SourceDoc | null>;
  /** Publisher changes; answers the source as written, or null when there is none. */
  update(projectId: string, id: string, set: Partial<SourceDoc>): Promise<SourceDoc | null>;
  /** Removes the source and its item records; false when there was none. */
  remove(projectId: string, id: string): Promise<boolean>;
  /** Unpaused sources due by `now` whose lease is free, soonest first. */
  due(now: number, limit: number): Promise<SourceDoc[]>;
  /**
   * Takes the lease of one source for `leaseMs`: atomic, so of several replicas exactly one
   * gets it. Without `force` only when it is due and unpaused (the scheduler); with it, whenever
   * nobody polls it (poll now).
   */
  claim(id: string, owner: string, now: number, leaseMs: number, force?: boolean): Promise<SourceDoc | null>;
  /** Ends the lease with the poll's outcome; null when the lease was lost (or the source deleted). */
  release(id: string, owner: string, set: Partial<SourceDoc>): Promise<SourceDoc | null>;
  /** Item records of these key hashes. */
  items(sourceId: string, keyHashes: string[]): Promise<Map<string, SourceItemDoc>>;
  rememberItem(item: SourceItemDoc): Promise<void>;
  close(): Promise<void>;
}
