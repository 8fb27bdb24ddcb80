// A real small volume for storage-failure tests: a tmpfs mounted on a fresh
// directory (needs root, which CI has). Filling it, or remounting it
// read-only, makes writes fail the way a full or read-only disk does.
import { execFileSync } from "node:child_process";
import { mkdtempSync, openSync, closeSync, rmSync, writeSync, unlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

export interface SmallVolume {
  dir: string;
  /** Takes every free byte (ENOSPC from then on) until free() is called. */
  fill(): void;
  free(): void;
  readOnly(on: boolean): void;
  unmount(): void;
}

/** undefined when this machine cannot mount (not root); the caller skips, or fails in CI. */
export function mountSmallVolume(sizeBytes: number): SmallVolume | undefined {
  const dir = mkdtempSync(path.join(tmpdir(), "small-volume-"));
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", `size=${sizeBytes}`, "tmpfs", dir], { stdio: "ignore" });
  } catch {
    rmSync(dir, { recursive: true, force: true });
    return undefined;
  }
  const filler = path.join(dir, "filler");
  return {
    dir,
    fill() {
      const fd = openSync(filler, "a");
      const chunk = Buffer.alloc(64 * 1024);
      try {
        for (let size = chunk.length; size >= 1; ) {
          try {
            writeSync(fd, chunk, 0, size);
          } catch {
            size = Math.floor(size / 2);
          }
        }
      } finally {
        closeSync(fd);
      }
    },
    free() {
      try {
        unlinkSync(filler);
      } catch {
        // Not filled.
      }
    },
    readOnly(on) {
      execFileSync("mount", ["-o", `remount,${on ? "ro" : "rw"}`, dir], { stdio: "ignore" });
    },
    unmount() {
      execFileSync("umount", ["-l", dir], { stdio: "ignore" });
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Mocha: skip locally when the volume cannot be mounted, fail in CI (which runs as root). */
export function smallVolumeOrSkip(ctx: Mocha.Context, sizeBytes: number): SmallVolume {
  const v = mountSmallVolume(sizeBytes);
  if (v) return v;
  if (process.env.CI) throw new Error("could not mount a tmpfs (CI runs as root; check that mount is permitted)");
  console.log("      (skipped: mounting a tmpfs needs root)");
  ctx.skip();
}
