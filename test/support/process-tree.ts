// Runs an npm script the way a supervisor does (its own process group, so a
// signal can go to npm alone or to the whole group), and sees which processes
// it started and whether any of them is still alive.
import { spawn, type ChildProcess } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { atExit } from "./child-servers.js";
import { sleep } from "./wait.js";
import { ROOMY_RATE_LIMITS } from "./rate-limits.js";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

export interface Script {
  /** The npm process. */
  child: ChildProcess;
  pid: number;
  /** Every output line so far, stdout and stderr. */
  lines: string[];
  /**
   * Resolves once npm has exited and its output is read to the end. A process
   * being gone does not mean its last lines have been read: they may still be
   * in the pipe, so assertions on what was printed at exit wait for this.
   */
  outputDone(timeoutMs?: number): Promise<void>;
  /** Resolves with the first line that matches; rejects if npm exits first or time runs out. */
  line(match: RegExp, timeoutMs?: number): Promise<string>;
  tail(n?: number): string;
  /** npm and everything it runs now; every pid seen is killed when the test process exits. */
  tree(): ProcInfo[];
}

/** `npm run <name>` in the repository, in a process group of its own. */
export function runScript(name: string, env: Record<string, string | undefined>): Script {
  const child = spawn("npm", ["run", "-s", name], { cwd: ROOT, env: env as NodeJS.ProcessEnv, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  const lines: string[] = [];
  const waiters = new Set<() => void>();
  const collect = (stream: NodeJS.ReadableStream) => {
    let buf = "";
    stream.setEncoding("utf8");
    stream.on("data", (d: string) => {
      buf += d;
      let nl: number;
      while ((nl = buf.indexOf("\n")) >= 0) {
        lines.push(buf.slice(0, nl));
        buf = buf.slice(nl + 1);
      }
      for (const w of [...waiters]) w();
    });
    stream.on("end", () => {
      if (buf) lines.push(buf);
      buf = "";
    });
  };
  collect(child.stdout!);
  collect(child.stderr!);
  // "close": npm has exited and every process holding its stdout or stderr has closed them, all read.
  let closed = false;
  const onClose = new Promise<void>((resolve) => child.once("close", () => resolve()));
  void onClose.then(() => (closed = true));
  child.once("exit", () => {
    for (const w of [...waiters]) w();
  });
  // Whatever a failed test leaves behind goes with the test process.
  const pid = child.pid!;
  const seen = new Set([pid]);
  atExit(() => {
    for (const p of seen) if (alive(p)) process.kill(p, "SIGKILL");
  });
  const tail = (n = 30) => lines.slice(-n).map((l) => l.slice(0, 300)).join("\n");
  return {
    child,
    pid,
    lines,
    tail,
    async outputDone(timeoutMs = 10_000) {
      if (closed) return;
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`output of npm run ${name} still open ${timeoutMs} ms later (a process still holds it):\n${tail()}`)), timeoutMs);
      });
      try {
        await Promise.race([onClose, late]);
      } finally {
        clearTimeout(timer);
      }
    },
    tree() {
      const t = [readProc(pid), ...descendants(pid)].filter((p): p is ProcInfo => !!p && p.state !== "Z");
      for (const p of t) seen.add(p.pid);
      return t;
    },
    line(match, timeoutMs = 120_000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => done(new Error(`no line matching ${match} within ${timeoutMs} ms:\n${tail()}`)), timeoutMs);
        const check = () => {
          const hit = lines.find((l) => match.test(l));
          if (hit !== undefined) done(undefined, hit);
          else if (child.exitCode !== null || child.signalCode !== null) done(new Error(`npm run ${name} exited (${child.exitCode ?? child.signalCode}) before a line matching ${match}:\n${tail()}`));
        };
        const done = (err?: Error, hit?: string) => {
          clearTimeout(timer);
          waiters.delete(check);
          if (err) reject(err);
          else resolve(hit!);
        };
        waiters.add(check);
        check();
      });
    },
  };
}

export interface ProcInfo {
  pid: number;
  ppid: number;
  state: string;
  cmd: string;
}

function readProc(pid: number): ProcInfo | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name is in parentheses and may contain spaces.
    const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const cmd = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ").trim();
    return { pid, ppid: Number(rest[1]), state: rest[0], cmd };
  } catch {
    return undefined;
  }
}

/** Every live descendant of pid (not pid itself), with its command line. */
export function descendants(pid: number): ProcInfo[] {
  const all = readdirSync("/proc").filter((d) => /^\d+$/.test(d)).map((d) => readProc(Number(d))).filter((p): p is ProcInfo => !!p);
  const out: ProcInfo[] = [];
  const parents = new Set([pid]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const p of all) {
      if (!parents.has(p.pid) && parents.has(p.ppid)) {
        parents.add(p.pid);
        out.push(p);
        grew = true;
      }
    }
  }
  return out.filter((p) => p.state !== "Z");
}

/** Alive and not a zombie waiting to be reaped. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  const p = readProc(pid);
  return !!p && p.state !== "Z";
}

/** Waits until none of pids is alive; returns the ms it took, or the survivors at the deadline. */
export async function waitGone(pids: number[], timeoutMs: number): Promise<{ ms: number; survivors: ProcInfo[] }> {
  const start = Date.now();
  for (;;) {
    const left = pids.filter(alive);
    if (!left.length) return { ms: Date.now() - start, survivors: [] };
    if (Date.now() - start > timeoutMs) return { ms: Date.now() - start, survivors: left.map((p) => readProc(p) ?? { pid: p, ppid: 0, state: "?", cmd: "?" }) };
    await sleep(50);
  }
}

/** `npm start` for real on a free loopback port, with roomy rate limits and one synthesizer thread. */
export function runEmbeddedScript(dataDir: string, env: Record<string, string | undefined> = {}): Script {
  return runScript("start", { ...process.env, ...ROOMY_RATE_LIMITS, PORT: "0", HOST: "127.0.0.1", DATA_DIR: dataDir, AUDIO_THREADS: "1", LOG_LEVEL: "info", ...env });
}
