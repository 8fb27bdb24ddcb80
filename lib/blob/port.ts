// Audio file storage port. The audio service writes immutable files; the
// gateway streams them. Adapters: a directory (embedded) and MongoDB GridFS.
import type { Readable } from "node:stream";

export interface BlobInfo {
  size: number;
  /** Strong validator, stable for the file's lifetime (files are immutable). */
  etag: string;
  contentType: string;
  modified: Date;
}

export interface BlobStore {
  /** Writes atomically: readers never see a partial file. */
  put(key: string, data: Buffer, contentType: string): Promise<BlobInfo>;
  stat(key: string): Promise<BlobInfo | null>;
  /** Inclusive byte range, as in HTTP. No such file (never written, or removed meanwhile): rejects with an error whose `code` is "ENOENT". */
  read(key: string, range?: { start: number; end: number }): Promise<Readable>;
  deletePrefix(prefix: string): Promise<void>;
  /**
   * Keys starting with `prefix` ("" for all), in no particular order; for
   * clean-up sweeps. Both real adapters have it; a store without it gets no
   * start-up sweep (services/articles/audio-files.ts).
   */
  list?(prefix: string): Promise<string[]>;
  close(): Promise<void>;
}

/** What BlobStore.read rejects with for a file that is not there (or went while being read). */
export function blobNotFound(key: string, detail = "not found"): Error {
  return Object.assign(new Error(`blob ${detail}: ${key}`), { code: "ENOENT" });
}

/** Whether an error says the file is not there: a missing path, or blobNotFound. */
export const isGone = (err: unknown): boolean => (err as NodeJS.ErrnoException | undefined)?.code === "ENOENT";

/** Keys are "<segment>/<segment>/<file>.mp3" of safe characters only. */
export const SAFE_KEY = /^[A-Za-z0-9_-]+(\/[A-Za-z0-9_.-]+)*$/;
export function assertSafeKey(key: string): void {
  if (!SAFE_KEY.test(key) || key.split("/").some((p) => p === "." || p === "..")) {
    throw new Error(`unsafe storage key: ${JSON.stringify(key)}`);
  }
}
