// Jobs whose publish failed (the bus was down) wait here, one per article,
// and are published again as soon as the bus says it is back. The reconciler
// still re-queues whatever this misses (a restart, a bus without reconnect
// notices, more failures than fit); this only makes the common case fast.
import type { AudioJob, JobBus } from "../../lib/bus/port.js";
import type { Logger } from "../../lib/log.js";

export interface Republisher {
  /** A publish of this job failed. */
  failed(job: AudioJob): void;
  /** A publish of this article succeeded: an older failure is settled. */
  published(job: AudioJob): void;
  /** Publishes everything waiting; retries for a while when the bus is not ready yet. */
  flush(): Promise<void>;
  readonly waiting: number;
  close(): void;
}

export interface RepublisherOptions {
  bus: JobBus;
  log: Logger;
  /** The publish with its timeout, as the service does it. */
  publish: (job: AudioJob) => Promise<void>;
  /** Jobs remembered at most; beyond that the reconciler takes over. Default 10,000. */
  maxWaiting?: number;
  /** A reconnected server may need a moment before it accepts jobs again: retry this long. Default 20 s. */
  retryForMs?: number;
  retryEveryMs?: number;
}

export function createRepublisher(o: RepublisherOptions): Republisher {
  const waiting = new Map<string, AudioJob>();
  const maxWaiting = o.maxWaiting ?? 10_000;
  const retryForMs = o.retryForMs ?? 20_000;
  const retryEveryMs = o.retryEveryMs ?? 200;
  let flushing: Promise<void> | undefined;
  let closed = false;

  async function publishAll(): Promise<void> {
    const deadline = Date.now() + retryForMs;
    while (!closed && waiting.size > 0) {
      const batch = [...waiting.values()];
      let failures = 0;
      // A few at a time: a long backlog must not flood the bus the moment it returns.
      for (let i = 0; i < batch.length && !closed; i += 16) {
        await Promise.all(
          batch.slice(i, i + 16).map(async (job) => {
            try {
              await o.publish(job);
              // Only this revision's entry: a newer failure recorded meanwhile stays.
              if (waiting.get(job.articleId)?.revision === job.revision) waiting.delete(job.articleId);
            } catch {
              failures++;
            }
          }),
        );
      }
      if (failures === 0) {
        o.log.info({ republished: batch.length }, "jobs that failed to publish during the bus outage were published");
        continue;
      }
      if (Date.now() >= deadline) {
        o.log.warn({ waiting: waiting.size }, "jobs still not published after the bus returned; the reconciler will re-queue them");
        return;
      }
      await new Promise((r) => setTimeout(r, retryEveryMs).unref());
    }
  }

  const r: Republisher = {
    failed(job) {
      if (closed) return;
      if (waiting.size >= maxWaiting && !waiting.has(job.articleId)) return;
      const known = waiting.get(job.articleId);
      if (!known || known.revision <= job.revision) waiting.set(job.articleId, job);
    },
    published(job) {
      const known = waiting.get(job.articleId);
      if (known && known.revision <= job.revision) waiting.delete(job.articleId);
    },
    flush() {
      flushing ??= publishAll().finally(() => {
        flushing = undefined;
      });
      return flushing;
    },
    get waiting() {
      return waiting.size;
    },
    close() {
      closed = true;
      waiting.clear();
    },
  };
  o.bus.onReconnect?.(() => {
    if (waiting.size > 0) void r.flush();
  });
  return r;
}
