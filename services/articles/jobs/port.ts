// The bulk-job storage port. store.ts implements it once over the document
// collection port; on both drivers (SQLite, MongoDB) it passes
// test/contract/bulk-job-store.contract.ts.
//
// A job is its progress (one small document, written once per article) and
// the ids it works through (written once, in chunks). A running job is held by
// one process at a time through a lease that its runner renews; a lapsed lease
// (a process that stopped) lets another runner take the job over where it was.

export const BULK_ACTIONS = ["regenerate", "delete", "addLabels", "removeLabels"] as const;
export type BulkAction = (typeof BULK_ACTIONS)[number];

export const JOB_STATES = ["running", "done", "cancelled", "failed"] as const;
export type JobState = (typeof JOB_STATES)[number];

export interface JobError {
  articleId: string;
  error: string;
}

/** Failures kept per job; the count goes on beyond it. */
export const MAX_KEPT_ERRORS = 100;

export interface BulkJob {
  id: string;
  projectId: string;
  action: BulkAction;
  /** addLabels / removeLabels: the labels. */
  labels: string[];
  state: JobState;
  total: number;
  done: number;
  failed: number;
  /** The first MAX_KEPT_ERRORS failures. */
  errors: JobError[];
  /** Why it stopped before its end. */
  reason?: string;
  /** Epoch ms. */
  createdAt: number;
  finishedAt?: number;
}

export type NewJob = Pick<BulkJob, "id" | "projectId" | "action" | "labels">;

/** One article's outcome, recorded with the lease renewed; none: the lease alone (a heartbeat). */
export type StepOutcome = { ok: true } | { ok: false; error: JobError } | undefined;

export interface JobStore {
  /**
   * Stores the job, running and held by `owner` until `leaseUntil`, over `targets` in that order.
   * Throws JobRunningError when the project already has a running job.
   */
  create(job: NewJob, targets: readonly string[], owner: string, leaseUntil: number, now?: Date): Promise<BulkJob>;
  get(projectId: string, id: string): Promise<BulkJob | null>;
  /** The project's running job, if any. */
  running(projectId: string): Promise<BulkJob | null>;
  /** Up to `count` target ids from position `from`. */
  targets(id: string, from: number, count: number): Promise<string[]>;
  /** Running jobs whose lease has lapsed at `now` (epoch ms), oldest first. */
  lapsed(now: number, limit: number): Promise<BulkJob[]>;
  /** Takes a lapsed job for `owner`; null when another runner took it first or it is no longer running. */
  claim(id: string, owner: string, leaseUntil: number, now: number): Promise<BulkJob | null>;
  /** Records an outcome and renews the lease; null when `owner` no longer holds the job or it stopped (cancelled). */
  step(id: string, owner: string, outcome: StepOutcome, leaseUntil: number): Promise<BulkJob | null>;
  /** Ends the job held by `owner`; null when it is no longer held (cancelled meanwhile). Its targets go. */
  finish(id: string, owner: string, state: Exclude<JobState, "running">, reason: string | undefined, now?: Date): Promise<BulkJob | null>;
  /** Gives up the lease at once (a process shutting down), so the next runner resumes without waiting. */
  release(id: string, owner: string): Promise<void>;
  /** Cancels a running job of the project; answers the job as it is after (unchanged when already finished), null when unknown. */
  cancel(projectId: string, id: string, reason: string, now?: Date): Promise<BulkJob | null>;
  close(): Promise<void>;
}

export class JobRunningError extends Error {
  constructor(readonly jobId: string | undefined) {
    super(`a bulk job${jobId ? ` (${jobId})` : ""} is already running for this project`);
    this.name = "JobRunningError";
  }
}
