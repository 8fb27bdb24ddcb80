// What the bench suites share: the system under test in a process of its own (bench/sut.ts),
// the load generator in another (bench/load.mjs), the bench's token and its API calls.
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { appendFileSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = join(HERE, "..");

export const TOKEN = `bench-${randomBytes(18).toString("base64url")}`;
export const SEED_TOKENS = JSON.stringify([{ token: TOKEN, project: "bench", scope: "full" }]);
/** File that gets every line the systems under test print on stdout (where V8's --trace-gc* output goes). */
const sutStdout = process.env.BENCH_SUT_STDOUT;

export interface LoadResult {
  reqPerSec: number;
  total: number;
  p50: number;
  p99: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  fiveXx: number;
  statusCodes: Record<string, number>;
  /** CPU of the system under test per answered request, in ms. */
  cpuMsPerReq?: number;
  /** Share of one core the system under test used during the run. */
  cpuShare?: number;
  /** Full stack: CPU ms per answered request of each process (gateway, auth, articles, audio-N, other). */
  cpuMsPerReqByProcess?: Record<string, number>;
  loadavg?: number[];
  /** req/s of the reference in the run just before this one (paired runs). */
  refReqPerSec?: number;
  /** Share of a core the system under test used during that reference run. */
  sutCpuShareDuringRef?: number;
}
export const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

export interface Sut {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
  /** CPU time (user + system) the system under test and its child processes have used so far. */
  cpuMs(): Promise<number>;
  /** The full stack's CPU ms so far per process; undefined for the single-process systems. */
  cpuMsByProcess(): Promise<Record<string, number> | undefined>;
  profileStart(): void;
  profileStop(file: string): Promise<void>;
}

/** The Node flags `npm start` runs the embedded default with (package.json), the loader left out. */
export function npmStartNodeFlags(): string[] {
  const start = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts.start;
  const words = start.split(/\s+/);
  return words.filter((w, i) => w.startsWith("--") && w !== "--import" && words[i - 1] !== "--import");
}

/** `extraNodeArgs`: Node flags for this system under test besides BENCH_SUT_NODE_ARGS. */
export async function startSut(mode: string, extraEnv: Record<string, string> = {}, extraNodeArgs: string[] = []): Promise<Sut | string> {
  // BENCH_SUT_NODE_ARGS: extra Node flags for the systems under test only (e.g. GC tuning experiments).
  const nodeArgs = ["--import", "tsx", ...extraNodeArgs, ...(mode === "reference" ? [] : (process.env.BENCH_SUT_NODE_ARGS ?? "").split(" ").filter(Boolean))];
  const child = spawn(process.execPath, [...nodeArgs, join(HERE, "sut.ts"), mode], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? "warn", NODE_ENV: "production", LOCAL_ENGINES: process.env.LOCAL_ENGINES ?? "espeak", BENCH_SEED_TOKENS: SEED_TOKENS, ...extraEnv },
    stdio: ["pipe", "pipe", "inherit"],
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const waiting = new Map<string, (line: string) => void>();
  const rl = createInterface({ input: child.stdout! });
  rl.on("line", (l) => {
    if (sutStdout) appendFileSync(sutStdout, `${l}\n`);
    const prefix = l.split(" ")[0];
    const w = waiting.get(prefix);
    if (w) {
      waiting.delete(prefix);
      w(l.slice(prefix.length + 1));
    }
  });
  const ask = (command: string, answer: string) =>
    new Promise<string>((resolve) => {
      waiting.set(answer, resolve);
      child.stdin!.write(`${command}\n`);
    });
  const line = await new Promise<string>((resolve) => {
    waiting.set("READY", (l) => resolve(`READY ${l}`));
    waiting.set("SKIP", (l) => resolve(`SKIP ${l}`));
    child.once("exit", (code) => resolve(`SKIP ${mode} exited with code ${code} before it was ready`));
    setTimeout(() => resolve(`SKIP ${mode} not ready after 240 s`), 240_000).unref();
  });
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    const t = setTimeout(() => child.kill("SIGKILL"), 30_000);
    await exited;
    clearTimeout(t);
  };
  if (line.startsWith("SKIP ")) {
    await stop();
    return line.slice(5);
  }
  return {
    url: (JSON.parse(line.slice(6)) as { url: string }).url,
    child,
    stop,
    cpuMs: async () => Number(await ask("CPU", "CPU")),
    cpuMsByProcess: async () => (JSON.parse(await ask("CPUS", "CPUS")) as Record<string, number> | null) ?? undefined,
    profileStart: () => void child.stdin!.write("PROFILE START\n"),
    profileStop: async (file) => void (await ask(`PROFILE STOP ${file}`, "PROFILED")),
  };
}

export function load(job: Record<string, unknown>, connections = Number(process.env.BENCH_CONNECTIONS ?? 50)): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(HERE, "load.mjs")], {
      cwd: ROOT,
      env: { ...process.env, BENCH_LOAD: JSON.stringify({ connections, token: TOKEN, ...job }) },
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.once("exit", (code) => {
      if (code !== 0) return reject(new Error(`load generator exited with ${code}`));
      resolve(JSON.parse(out.trim().split("\n").pop()!) as LoadResult);
    });
  });
}

export async function api(url: string, method: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${TOKEN}`, ...(body ? { "content-type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const json = (await res.json()) as Record<string, unknown>;
  if (!res.ok) throw new Error(`${method} ${path}: HTTP ${res.status} ${JSON.stringify(json)}`);
  return json;
}

/** Creates `n` articles through the API, `workers` requests at a time; answers their ids. */
export async function createArticles(url: string, n: number, bodyOf: (i: number) => Record<string, unknown>, workers: number): Promise<string[]> {
  const ids: string[] = [];
  let next = 0;
  const worker = async () => {
    while (next < n) {
      const r = await api(url, "POST", "/api/articles", bodyOf(next++));
      ids.push(r.id as string);
    }
  };
  await Promise.all(Array.from({ length: workers }, worker));
  return ids;
}
