// The append-only datafile of one embedded collection, as a write-ahead
// journal: lines are appended synchronously (a few hundred bytes into the page
// cache take microseconds), and a write is acknowledged only after an
// fdatasync that covers it. Syncs are group commits: every write appended
// while one fdatasync runs shares the next, so concurrent writers pay for one
// flush between them rather than one each.
//
// A failed append leaves the file as it was (cut back to its previous length),
// so a half-written line can never glue itself to the next good one.
import { closeSync, fdatasync, fstatSync, ftruncateSync, openSync, readSync, writeSync } from "node:fs";
import { promisify } from "node:util";
import { storageErrorFromFs } from "./errors.js";

const datasync = promisify(fdatasync);

export interface JournalOptions {
  /** Names the store in error messages, e.g. "articles". */
  what: string;
  /** false: acknowledge once written to the page cache (no fdatasync); for the benchmark's reference only. */
  durable?: boolean;
}

export class AppendJournal {
  private fd: number | undefined;
  private size = 0;
  /** Appends made / appends known durable; a sync waits until the second reaches its target. */
  private appended = 0;
  private durableUpTo = 0;
  private syncing: Promise<void> | undefined;
  /** Bumped when the file is replaced (compaction writes and syncs a new one). */
  private epoch = 0;
  private readonly durable: boolean;

  constructor(
    private readonly filename: string,
    private readonly opts: JournalOptions,
  ) {
    this.durable = opts.durable ?? true;
  }

  /** Appends the lines or throws a StorageError, leaving the file as it was. */
  append(text: string): void {
    if (text.length === 0) return;
    try {
      const fd = this.open();
      const bytes = Buffer.from(text, "utf8");
      try {
        for (let at = 0; at < bytes.length; ) at += writeSync(fd, bytes, at);
      } catch (err) {
        this.cutBack(fd);
        throw err;
      }
      this.size += bytes.length;
      this.appended++;
    } catch (err) {
      throw storageErrorFromFs(err, this.opts.what);
    }
  }

  /** Resolves once everything appended so far is on stable storage; throws a StorageError if the flush failed. */
  async sync(): Promise<void> {
    if (!this.durable) return;
    const target = this.appended;
    while (this.durableUpTo < target) {
      this.syncing ??= this.flush().finally(() => (this.syncing = undefined));
      await this.syncing;
    }
  }

  /** The file was replaced by a complete, synced copy: what was appended is durable, the descriptor is stale. */
  replaced(): void {
    this.epoch++;
    this.durableUpTo = this.appended;
    this.drop();
  }

  close(): void {
    this.drop();
  }

  private async flush(): Promise<void> {
    const target = this.appended;
    const epoch = this.epoch;
    const fd = this.fd;
    if (fd !== undefined) {
      try {
        await datasync(fd);
      } catch (err) {
        // Replaced meanwhile: the new file was synced with everything in it.
        if (this.epoch === epoch) throw storageErrorFromFs(err, this.opts.what);
      }
    }
    if (target > this.durableUpTo) this.durableUpTo = target;
  }

  private open(): number {
    if (this.fd !== undefined) return this.fd;
    const fd = openSync(this.filename, "a+", 0o644);
    try {
      this.size = fstatSync(fd).size;
      // A line cut short by a crash (or a failed cut-back) must not swallow the next one.
      if (this.size > 0) {
        const last = Buffer.alloc(1);
        readSync(fd, last, 0, 1, this.size - 1);
        if (last[0] !== 0x0a) {
          writeSync(fd, "\n");
          this.size++;
        }
      }
    } catch (err) {
      closeSync(fd);
      throw err;
    }
    this.fd = fd;
    return fd;
  }

  private cutBack(fd: number): void {
    try {
      ftruncateSync(fd, this.size);
    } catch {
      // Could not cut: reopening checks the file's last byte and starts a fresh line.
      this.drop();
    }
  }

  private drop(): void {
    if (this.fd === undefined) return;
    const was = this.fd;
    this.fd = undefined;
    closeSync(was);
  }
}
