// `npm start`'s process as users run it (the node flags and script of
// package.json's start script, without npm in between), on a data directory
// of the caller's, with one full token: for measuring the process itself
// (memory, start-up), which an in-process startEmbedded() cannot show.
import { spawn, type ChildProcess } from "node:child_process";
import { createWriteStream, readFileSync } from "node:fs";
import http from "node:http";
import { fileURLToPath } from "node:url";
import { freePort } from "../../lib/net/free-port.js";
import { descendantsOf } from "./processes.js";

export const EMBEDDED_TOKEN = "embedded-process-full-token-0123456789";
const SEED_TOKENS = JSON.stringify([{ token: EMBEDDED_TOKEN, project: "measured", scope: "full" }]);
const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** Resident and peak resident memory of a process, in MB. */
export function memoryOf(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+)`, "m").exec(status)?.[1] ?? 0);
  return { rss: kb("VmRSS") / 1024, peak: kb("VmHWM") / 1024 };
}

/**
 * The same over a process and everything it started that is still running (the native speech host,
 * its eSpeak and LAME): what the system holds, in MB. The process counts with its RSS; the others
 * with their private pages only, since the pages they share are, for the most part, the Node binary
 * and libraries the process holds already (the speech host: RSS ~60 MB, ~40 of them shared).
 */
export function treeMemoryOf(pid: number): { rss: number; processes: number } {
  const total = { rss: memoryOf(pid).rss, processes: 1 };
  for (const { pid: p } of descendantsOf(pid)) {
    try {
      const rollup = readFileSync(`/proc/${p}/smaps_rollup`, "utf8");
      const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+)`, "m").exec(rollup)?.[1] ?? 0);
      total.rss += (kb("Private_Clean") + kb("Private_Dirty")) / 1024;
      total.processes++;
    } catch {
      // gone meanwhile
    }
  }
  return total;
}

/**
 * The highest RSS of a process with everything it started, sampled every `everyMs` (a few small
 * /proc reads each), and never below the process's own peak.
 */
export class TreePeak {
  private max = 0;
  private readonly timer: NodeJS.Timeout;
  constructor(
    private readonly pid: number,
    everyMs = 250,
  ) {
    this.sample();
    this.timer = setInterval(() => this.sample(), everyMs);
    this.timer.unref();
  }

  /** MB. */
  stop(): number {
    clearInterval(this.timer);
    this.sample();
    try {
      return Math.max(this.max, memoryOf(this.pid).peak);
    } catch {
      return this.max;
    }
  }

  private sample(): void {
    const now = treeMemoryOf(this.pid).rss;
    if (now > this.max) this.max = now;
  }
}

/** The Node flags and script of `npm start` (package.json), so what is measured is what users run. */
export function npmStartArgs(): string[] {
  const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { scripts: { start: string } };
  const m = /^exec node (.+)$/.exec(pkg.scripts.start);
  if (!m) throw new Error(`package.json's start script is not "exec node …": ${pkg.scripts.start}`);
  return m[1].split(/\s+/);
}

const healthz = (url: string) =>
  new Promise<number>((resolve) => {
    http.get(`${url}/healthz`, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    }).on("error", () => resolve(0));
  });

export interface StartedEmbedded {
  url: string;
  child: ChildProcess;
  stderr(): string;
  stop(): Promise<void>;
}

/** `npm start`'s process on `dataDir` (its node, without npm in between), answered once /healthz says 200. */
export async function startEmbeddedProcess(dataDir: string, extraEnv: NodeJS.ProcessEnv = {}, nodeArgs: string[] = [], opts: { onLogLine?(line: string): void } = {}): Promise<StartedEmbedded> {
  const port = await freePort("127.0.0.1");
  const child = spawn(process.execPath, [...nodeArgs, ...npmStartArgs()], {
    cwd: ROOT,
    env: {
      ...process.env,
      NODE_ENV: "production",
      LOG_LEVEL: "warn",
      PORT: String(port),
      HOST: "127.0.0.1",
      DATA_DIR: dataDir,
      SEED_TOKENS,
      // The limiter stays in the path; a measuring load must not be refused by it.
      RATE_LIMIT_READS_PER_SECOND: "100000",
      RATE_LIMIT_READS_BURST: "1000000",
      ...extraEnv,
    },
    // BENCH_SUT_STDOUT: its log lines appended to that file (a bench's breakdown of where the time goes).
    stdio: ["ignore", process.env.BENCH_SUT_STDOUT || opts.onLogLine ? "pipe" : "ignore", "pipe"],
  });
  if (process.env.BENCH_SUT_STDOUT) child.stdout!.pipe(createWriteStream(process.env.BENCH_SUT_STDOUT, { flags: "a" }));
  if (opts.onLogLine) {
    let rest = "";
    child.stdout!.on("data", (d: Buffer) => {
      const lines = (rest + d.toString("utf8")).split("\n");
      rest = lines.pop() ?? "";
      for (const line of lines) opts.onLogLine!(line);
    });
  }
  let err = "";
  child.stderr!.on("data", (d: Buffer) => (err = (err + d.toString()).slice(-8000)));
  const url = `http://127.0.0.1:${port}`;
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once("exit", () => resolve());
      child.kill("SIGTERM");
    });
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the embedded default exited (${child.exitCode}):\n${err}`);
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`the embedded default did not answer /healthz within 120 s:\n${err}`);
    }
    const status = await healthz(url);
    if (status === 200) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  return { url, child, stderr: () => err, stop };
}

/** Waits until RSS stops moving (start-up leaves timers, lazy compiles and GC behind it), at most `maxMs`. */
export async function settledRss(pid: number, maxMs = 5_000): Promise<number> {
  const end = Date.now() + maxMs;
  let last = memoryOf(pid).rss;
  await new Promise((r) => setTimeout(r, 1_000));
  while (Date.now() < end) {
    await new Promise((r) => setTimeout(r, 500));
    const now = memoryOf(pid).rss;
    if (Math.abs(now - last) < 1) return now;
    last = now;
  }
  return memoryOf(pid).rss;
}

