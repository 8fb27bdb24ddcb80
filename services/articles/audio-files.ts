// Takedown and clean-up of an article's audio files. The articles service
// decides when audio stops being the article's (delete, a newer revision), so
// it owns the removal; the audio service only writes files, the gateway only
// reads them. Files live under "<articleId>/<revision>/…" (services/audio/worker.ts).
//
// Deleted articles lose their files at once. A superseded revision keeps its
// files for a grace period, so a listener who started it before the update can
// finish. Nothing here is remembered across a restart: sweep() on start finds
// what is still due from the store and the files themselves.
import type { BlobStore } from "../../lib/blob/port.js";
import type { Logger } from "../../lib/log.js";
import type { ArticleStore, StoredArticle } from "./store/port.js";

export interface AudioFiles {
  /** The article was deleted: its files go now (retried in the background if storage fails). */
  removeAll(articleId: string): Promise<void>;
  /** Revisions below `current` are superseded: their files go after the grace period (sooner when `immediately`). */
  supersede(articleId: string, current: number, immediately?: boolean): void;
  /** Removes what is due for every article that has files, and schedules what is not due yet. */
  sweep(): Promise<{ removedArticles: number; removedRevisions: number }>;
  close(): void;
}

export interface AudioFilesOptions {
  blobs: BlobStore;
  store: Pick<ArticleStore, "getById">;
  log: Logger;
  /** How long a superseded revision's files stay; default 10 minutes. */
  graceMs?: number;
  /** Retry pause after a failed removal; default 30 s. */
  retryMs?: number;
}

export const DEFAULT_SUPERSEDED_GRACE_MS = 600_000;

export const AUDIO_FILES_VARS = {
  SUPERSEDED_AUDIO_GRACE_MS: {
    type: "integer",
    minimum: 0,
    maximum: 7 * 86_400_000,
    default: DEFAULT_SUPERSEDED_GRACE_MS,
    description: "how long a superseded revision's audio files stay after an update (listeners mid-play finish)",
  },
} as const;

/** "<id>/<revision>/<file>" → [id, revision]; other keys (ad-hoc audio, foreign files) → undefined. */
function parseKey(key: string): [string, number] | undefined {
  const parts = key.split("/");
  if (parts.length !== 3 || !/^[1-9]\d*$/.test(parts[1])) return undefined;
  return [parts[0], Number(parts[1])];
}

export function createAudioFiles(opts: AudioFilesOptions): AudioFiles {
  const { blobs, store, log } = opts;
  const graceMs = opts.graceMs ?? DEFAULT_SUPERSEDED_GRACE_MS;
  const retryMs = opts.retryMs ?? 30_000;
  const timers = new Set<NodeJS.Timeout>();
  let closed = false;

  const later = (ms: number, fn: () => Promise<unknown>) => {
    if (closed) return;
    const t = setTimeout(() => {
      timers.delete(t);
      fn().catch(() => undefined);
    }, Math.max(0, ms));
    t.unref();
    timers.add(t);
  };

  async function removeAll(articleId: string): Promise<void> {
    try {
      await blobs.deletePrefix(`${articleId}/`);
      log.info({ articleId }, "audio files of deleted article removed");
    } catch (err) {
      log.warn({ err, articleId }, "removing a deleted article's audio failed; retrying");
      later(retryMs, () => removeAll(articleId));
    }
  }

  /** Removes the files of every revision below `current`; true when some were there. */
  async function removeBelow(articleId: string, current: number): Promise<boolean> {
    try {
      const revisions = new Set<number>();
      if (blobs.list) {
        for (const key of await blobs.list(`${articleId}/`)) {
          const parsed = parseKey(key);
          if (parsed && parsed[0] === articleId && parsed[1] < current) revisions.add(parsed[1]);
        }
      } else {
        for (let r = 1; r < current; r++) revisions.add(r);
      }
      for (const r of revisions) await blobs.deletePrefix(`${articleId}/${r}/`);
      if (revisions.size) log.info({ articleId, revisions: [...revisions] }, "audio files of superseded revisions removed");
      return revisions.size > 0;
    } catch (err) {
      log.warn({ err, articleId }, "removing superseded audio failed; retrying");
      later(retryMs, () => removeBelow(articleId, current));
      return false;
    }
  }

  return {
    removeAll,

    supersede(articleId, current, immediately = false) {
      later(immediately ? 0 : graceMs, () => removeBelow(articleId, current));
    },

    async sweep() {
      let removedArticles = 0;
      let removedRevisions = 0;
      const byArticle = new Map<string, number[]>();
      for (const key of (await blobs.list?.("")) ?? []) {
        const parsed = parseKey(key);
        if (!parsed) continue;
        const revs = byArticle.get(parsed[0]) ?? [];
        revs.push(parsed[1]);
        byArticle.set(parsed[0], revs);
      }
      for (const [id, revs] of byArticle) {
        let a: StoredArticle | null;
        try {
          a = await store.getById(id);
        } catch (err) {
          log.warn({ err, articleId: id }, "audio sweep could not read the article; left for the next sweep");
          continue;
        }
        // Files of no known article are left alone: they may not be an article's at all.
        if (!a) continue;
        if (a.status === "deleted") {
          await removeAll(id);
          removedArticles++;
          continue;
        }
        if (!revs.some((r) => r < a.revision)) continue;
        // The revision was superseded no later than the article's last change.
        const dueIn = a.changedAt + graceMs - Date.now();
        if (dueIn <= 0) {
          if (await removeBelow(id, a.revision)) removedRevisions++;
        } else {
          later(dueIn, () => removeBelow(id, a.revision));
        }
      }
      if (removedArticles || removedRevisions) log.info({ removedArticles, removedRevisions }, "audio sweep done");
      return { removedArticles, removedRevisions };
    },

    close() {
      closed = true;
      for (const t of timers) clearTimeout(t);
      timers.clear();
    },
  };
}
