// The job bus port: how articles reach the audio workers. Two adapters
// implement it: an in-process bus (embedded default, fast tests) and NATS
// JetStream (full stack). Both pass test/contract/bus.contract.ts.

export interface AudioJob {
  articleId: string;
  projectId: string;
  revision: number;
  /** Carried into logs end to end. */
  requestId?: string;
  /** Someone waits for this job (audio on demand): it goes before its project's other jobs, never before another project's turn. */
  priority?: boolean;
  /**
   * A priority job is made in two stages: first its preview alone, then (`stage: "full"`, published
   * by the worker once the preview is stored) the full file. Within a project every waiting
   * preview goes before every full render (the preview lane), and those before ordinary jobs.
   */
  stage?: "full";
}

/** Dedup key: a job for the same article revision (and stage) is only delivered once. */
export const jobMessageId = (j: AudioJob) => `${j.articleId}:${j.revision}${j.stage === "full" ? ":full" : ""}`;

/** A job's place in its project's lane: 0 previews (priority jobs), 1 full renders of priority jobs, 2 ordinary jobs. */
export const laneRank = (j: AudioJob): 0 | 1 | 2 => (!j.priority ? 2 : j.stage === "full" ? 1 : 0);

export interface Delivery {
  job: AudioJob;
  /** 1 on the first delivery. */
  attempt: number;
  /** Extends the lease so a long synthesis is not redelivered meanwhile. */
  working(): void;
}

/**
 * Resolving acknowledges the job. Throwing hands it back for redelivery with
 * backoff, unless the error is a PermanentJobError (then it is dropped) or the
 * attempt limit is reached (then onExhausted runs and it is dropped). A
 * HandBackError returns it at once without using up the attempt.
 */
export type JobHandler = (d: Delivery) => Promise<void>;

export class PermanentJobError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "PermanentJobError";
  }
}

/**
 * The consumer, not the job, cannot go on (e.g. the worker is shutting down):
 * the job goes back to the queue at once and this delivery does not count
 * against its attempts, so a job interrupted on its last attempt still runs.
 */
export class HandBackError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "HandBackError";
  }
}

export interface ConsumeOptions {
  /** Jobs handled at once by this consumer. */
  concurrency: number;
  /** Deliveries before a job is given up. */
  maxAttempts: number;
  /** Lease: a job not acked nor kept alive within this is redelivered. */
  ackWaitMs: number;
  /** Delay before redelivery after attempt n (last value repeats). */
  backoffMs: number[];
  onExhausted(job: AudioJob, error: unknown, attempts: number): Promise<void>;
}

export interface JobSubscription {
  /** Stops taking new jobs and waits for the ones in hand. */
  drain(): Promise<void>;
}

export interface JobBus {
  publish(job: AudioJob): Promise<void>;
  consume(handler: JobHandler, opts: ConsumeOptions): Promise<JobSubscription>;
  /** Fire-and-forget notifications, e.g. articles.events.<project>. */
  publishEvent(subject: string, data: unknown): Promise<void>;
  /** Jobs waiting for a worker and jobs delivered but not yet acknowledged (queue-lag metric). */
  backlog?(): Promise<{ pending: number; unacked: number }>;
  /**
   * Calls `listener` each time the bus is reachable again after an outage, so
   * a publisher can re-send what failed meanwhile. Buses that cannot lose
   * their connection (the in-process one) need not offer it.
   */
  onReconnect?(listener: () => void): void;
  close(): Promise<void>;
}
