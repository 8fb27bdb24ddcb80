// Where the parts of audio made on demand go while it is made (live-parts.ts): the blob store,
// under the revision's live/ keys, one after another in playing order, then an end marker after
// the last. The gateway streams them to a listener who pressed play (gateway/routes/live-audio.ts);
// on the full stack that is another process, which reads the same store.
import type { BlobStore } from "../../lib/blob/port.js";
import type { Logger } from "../../lib/log.js";
import type { audioKeys } from "../../lib/revision-files.js";
import type { LivePart } from "./live-parts.js";

/** How long the parts stay once the finished file is stored: a listener still on the stream finishes it. */
export const LIVE_KEEP_MS = 10 * 60_000;

export interface LiveWriter {
  onLive(part: LivePart): void;
  /** Resolves once every part handed on so far is stored (or given up). */
  flushed(): Promise<void>;
  /** The parts go after LIVE_KEEP_MS (the revision's own clean-up removes them too, with its prefix). */
  expire(): void;
}

/** `started`: the job's start (Date.now()), from which the stored parts' times are logged (debug; the first at info). */
export function liveWriter(blobs: BlobStore, keys: ReturnType<typeof audioKeys>, log: Logger, started = Date.now()): LiveWriter {
  let chain = Promise.resolve();
  let failed = false;
  return {
    onLive(part) {
      chain = chain.then(async () => {
        if (failed) return;
        try {
          // The full stage hands on the opening parts again (from the chunk cache): they are there already.
          if (!(await blobs.stat(keys.live(part.index)))) {
            await blobs.put(keys.live(part.index), part.mp3, "audio/mpeg");
            const fields = { part: part.index, ms: Date.now() - started };
            if (part.index === 0) log.info(fields, "first live audio part stored");
            else log.debug(fields, "live audio part stored");
          }
          if (part.last) await blobs.put(keys.liveEnd, Buffer.alloc(0), "application/octet-stream");
        } catch (e) {
          // A gap would make the stream another audio than the file: none after it is written.
          failed = true;
          log.warn({ err: e instanceof Error ? e.message : String(e), part: part.index }, "live audio part not stored; listeners wait for the files");
        }
      });
    },
    flushed: () => chain,
    expire() {
      const timer = setTimeout(() => void blobs.deletePrefix(keys.liveDir).catch(() => undefined), LIVE_KEEP_MS);
      timer.unref();
    },
  };
}
