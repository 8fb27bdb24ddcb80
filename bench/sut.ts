// The system under test, in its own process so the load generator never
// shares an event loop (or a profile) with it. Modes:
//   reference  bare Koa + @koa/router answering a fixed JSON body (optionally
//              after BENCH_REFERENCE_WORK_US of busy work: the calibration rows)
//   embedded   launch/embedded.ts, the `npm start` default
//   stack      launch/stack.ts over a local nats-server and MongoDB stand-in
// Prints one line `READY {"url":...}` (or `SKIP <why>`) on stdout, and stops
// on SIGTERM or when stdin closes (the harness died).
import http from "node:http";
import type net from "node:net";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";

type Stop = () => Promise<void>;

const mode = process.argv[2];
const announce = (line: string) => process.stdout.write(`${line}\n`);

async function reference(): Promise<{ url: string; stop: Stop }> {
  const { default: Koa } = await import("koa");
  const { Router } = await import("@koa/router");
  // The harness hands over the real GET answer, so both sides serialise the same bytes.
  const body = JSON.parse(process.env.BENCH_REFERENCE_BODY ?? '{"result":"ok"}') as unknown;
  // Or every seeded article's answer by its id (bench/read-path.ts), held in memory as parsed JSON.
  const bodies = process.env.BENCH_REFERENCE_BODIES ? new Map(Object.entries(JSON.parse(readFileSync(process.env.BENCH_REFERENCE_BODIES, "utf8")) as Record<string, unknown>)) : undefined;
  // Calibration: the same route spending this much synchronous CPU per request
  // shows in the same run what a given amount of extra work costs in req/s.
  const workMs = Number(process.env.BENCH_REFERENCE_WORK_US ?? 0) / 1000;
  const app = new Koa();
  const router = new Router();
  router.get("/api/articles/:articleId", (ctx) => {
    if (workMs > 0) {
      const until = performance.now() + workMs;
      while (performance.now() < until);
    }
    ctx.body = bodies?.get(ctx.params.articleId) ?? body;
  });
  app.use(router.routes());
  const server = http.createServer(app.callback());
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    stop: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function benchEnv(dataDir: string): Record<string, string | undefined> {
  return {
    ...process.env,
    PORT: "0",
    HOST: "127.0.0.1",
    DATA_DIR: dataDir,
    SEED_TOKENS: process.env.BENCH_SEED_TOKENS,
    // The limiter stays in the measured path; the load must not be refused by it.
    RATE_LIMIT_READS_PER_SECOND: process.env.RATE_LIMIT_READS_PER_SECOND ?? "100000",
    RATE_LIMIT_READS_BURST: process.env.RATE_LIMIT_READS_BURST ?? "1000000",
    RATE_LIMIT_WRITES_PER_SECOND: process.env.RATE_LIMIT_WRITES_PER_SECOND ?? "100000",
    RATE_LIMIT_WRITES_BURST: process.env.RATE_LIMIT_WRITES_BURST ?? "1000000",
    AUDIO_CONCURRENCY: process.env.AUDIO_CONCURRENCY ?? "1",
    AUDIO_THREADS: process.env.AUDIO_THREADS ?? "1",
  };
}

async function embedded(): Promise<{ url: string; stop: Stop }> {
  const dataDir = mkdtempSync(join(tmpdir(), "bench-embedded-"));
  const { startEmbedded } = await import("../launch/embedded.js");
  const admin = `bench-admin-${process.pid}-${Date.now()}`;
  const sys = await startEmbedded({ ...benchEnv(dataDir), ADMIN_TOKEN: admin });
  if (process.env.BENCH_AUDIO === "onDemand") {
    // Creates then store articles waiting, as an import with ?audio=onDemand does: a write mix measures the API, not renders.
    const { rpcClient } = await import("../lib/rpc/client.js");
    const { AuthService } = await import("../gen/auth/v1/auth_pb.js");
    const auth = rpcClient(AuthService, sys.services.find((s) => s.name === "auth")!.url, { token: admin });
    // Every project of BENCH_SEED_TOKENS, or the bench project without them.
    const seeded = process.env.BENCH_SEED_TOKENS ? (JSON.parse(process.env.BENCH_SEED_TOKENS) as Array<{ project: string }>).map((t) => t.project) : ["bench"];
    for (const projectId of new Set(seeded)) {
      await auth.updateProjectSettings({ projectId, patchJson: JSON.stringify({ audio: "onDemand" }) });
    }
  }
  return {
    url: sys.url,
    stop: async () => {
      await sys.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

interface StackHandle {
  url: string;
  processes?: Array<{ name: string; pid: number | undefined }>;
  stop(): Promise<void>;
}

/** The stack's own processes by name (gateway, auth, articles, audio-N), for per-process CPU. */
let stackProcesses: StackHandle["processes"];
type StartStack = (env: Record<string, string | undefined>, opts?: unknown) => Promise<StackHandle>;

async function stack(): Promise<{ url: string; stop: Stop } | string> {
  let startStack: StartStack | undefined;
  try {
    const modPath = "../launch/stack.js";
    startStack = ((await import(modPath)) as { startStack?: StartStack }).startStack;
  } catch (e) {
    return `launch/stack.ts could not be loaded (${(e as Error).message.split("\n")[0]})`;
  }
  if (typeof startStack !== "function") return "launch/stack.ts exports no startStack()";
  const { startMongoServer, startNatsServer } = await import("../test/support/servers.js");
  let nats: { url: string; stop(): Promise<void> } | undefined;
  let mongo: { url: string; stop(): Promise<void> } | undefined;
  try {
    nats = process.env.NATS_URL ? undefined : await startNatsServer();
    mongo = process.env.MONGODB_URL ? undefined : await startMongoServer();
  } catch (e) {
    await nats?.stop();
    return `no local NATS/MongoDB (${(e as Error).message.split("\n")[0]})`;
  }
  const dataDir = mkdtempSync(join(tmpdir(), "bench-stack-"));
  const env = {
    ...benchEnv(dataDir),
    NATS_URL: process.env.NATS_URL ?? nats!.url,
    MONGODB_URL: process.env.MONGODB_URL ?? mongo!.url,
    MONGODB_DB: `bench_${process.pid}`,
    INTERNAL_TOKEN: process.env.INTERNAL_TOKEN ?? `bench-internal-${process.pid}-${Date.now()}`,
  };
  try {
    const s = await startStack(env);
    stackProcesses = s.processes;
    return {
      url: s.url,
      stop: async () => {
        await s.stop();
        await mongo?.stop();
        await nats?.stop();
        rmSync(dataDir, { recursive: true, force: true });
      },
    };
  } catch (e) {
    await mongo?.stop();
    await nats?.stop();
    rmSync(dataDir, { recursive: true, force: true });
    return `startStack failed (${(e as Error).message.split("\n")[0]})`;
  }
}

const TICK_MS = 10; // USER_HZ is 100 on Linux

/** Every live process: parent and CPU ticks (its own plus its finished children's), from /proc/<pid>/stat. */
function processTable(): Map<number, { ppid: number; ticks: number }> | undefined {
  let entries: string[];
  try {
    entries = readdirSync("/proc").filter((e) => /^\d+$/.test(e));
  } catch {
    return undefined;
  }
  const stats = new Map<number, { ppid: number; ticks: number }>();
  for (const e of entries) {
    try {
      const raw = readFileSync(`/proc/${e}/stat`, "utf8");
      // The command name may hold spaces and parentheses: fields start after the last ")".
      const f = raw.slice(raw.lastIndexOf(")") + 2).split(" ");
      stats.set(Number(e), { ppid: Number(f[1]), ticks: Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]) });
    } catch {
      // the process ended meanwhile
    }
  }
  return stats;
}

/** CPU ms of `root` and every live process below it (finished ones count through their parents' cutime/cstime). */
function subtreeCpuMs(stats: Map<number, { ppid: number; ticks: number }>, root: number): number {
  const children = new Map<number, number[]>();
  for (const [pid, st] of stats) children.set(st.ppid, [...(children.get(st.ppid) ?? []), pid]);
  let ticks = 0;
  const todo = [root];
  while (todo.length) {
    const pid = todo.pop()!;
    ticks += stats.get(pid)?.ticks ?? 0;
    todo.push(...(children.get(pid) ?? []));
  }
  return ticks * TICK_MS;
}

/** One process's CPU ticks (its own plus its finished children's), from /proc/<pid>/stat. */
function ticksOf(pid: number): number {
  const raw = readFileSync(`/proc/${pid}/stat`, "utf8");
  const f = raw.slice(raw.lastIndexOf(")") + 2).split(" ");
  return Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
}

/**
 * CPU ms of `root` and the processes below it, found through /proc/<pid>/task/<tid>/children
 * rather than by reading every process of the machine: on a shared machine with hundreds of
 * processes that scan cost the measured process ~90 ms per measurement. Undefined where the
 * kernel has no children lists.
 */
function subtreeCpuMsByChildren(root: number): number | undefined {
  let ticks = 0;
  const todo = [root];
  try {
    while (todo.length) {
      const pid = todo.pop()!;
      try {
        ticks += ticksOf(pid);
        for (const tid of readdirSync(`/proc/${pid}/task`)) {
          const kids = readFileSync(`/proc/${pid}/task/${tid}/children`, "utf8").trim();
          if (kids) todo.push(...kids.split(" ").map(Number));
        }
      } catch (e) {
        // A process (or thread) that ended meanwhile counts through its parent; a missing root or list does not.
        if (pid === root) throw e;
      }
    }
  } catch {
    return undefined;
  }
  return ticks * TICK_MS;
}

/**
 * CPU time of this process and every process below it (the stack's service
 * processes, the synthesizer's espeak-ng/lame runs). Without /proc, this
 * process alone.
 */
function treeCpuMs(): number {
  const own = subtreeCpuMsByChildren(process.pid);
  if (own !== undefined) return own;
  const stats = processTable();
  if (!stats) {
    const { user, system } = process.cpuUsage();
    return (user + system) / 1000;
  }
  return subtreeCpuMs(stats, process.pid);
}

/**
 * The stack's CPU split by process, as the kernel accounts it for each of them
 * (what their own process_cpu_seconds_total reports): gateway, auth, articles,
 * audio-N each with its children, and `other` for the rest of the tree (the
 * MongoDB stand-in, nats-server, this launcher).
 */
function perProcessCpuMs(): Record<string, number> | undefined {
  const stats = processTable();
  if (!stats || !stackProcesses) return undefined;
  const out: Record<string, number> = {};
  let named = 0;
  for (const p of stackProcesses) {
    if (p.pid === undefined) continue;
    named += out[p.name] = subtreeCpuMs(stats, p.pid);
  }
  out.other = subtreeCpuMs(stats, process.pid) - named;
  return out;
}

let profiler: Session | undefined;

async function profileCommand(line: string): Promise<void> {
  const [cmd, arg, file] = line.split(" ");
  if (cmd === "CPU") {
    announce(`CPU ${treeCpuMs()}`);
    return;
  }
  if (cmd === "CPUS") {
    announce(`CPUS ${JSON.stringify(perProcessCpuMs() ?? null)}`);
    return;
  }
  if (cmd !== "PROFILE") return;
  if (arg === "START" && !profiler) {
    profiler = new Session();
    profiler.connect();
    await profiler.post("Profiler.enable");
    await profiler.post("Profiler.start");
  } else if (arg === "STOP" && profiler && file) {
    const { profile } = await profiler.post("Profiler.stop");
    profiler.disconnect();
    profiler = undefined;
    writeFileSync(file, JSON.stringify(profile));
    announce(`PROFILED ${file}`);
  }
}

async function main(): Promise<void> {
  // embedded-nofsync: the embedded default acknowledging writes before fdatasync, the reference for its cost.
  if (mode === "embedded-nofsync") (await import("../lib/store/sqlite-collection.js")).acknowledgeBeforeFsync();
  const started =
    mode === "reference" ? await reference() : mode === "embedded" || mode === "embedded-nofsync" ? await embedded() : mode === "stack" ? await stack() : `unknown mode '${mode}'`;
  if (typeof started === "string") {
    announce(`SKIP ${started}`);
    process.exit(0);
  }
  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= started
      .stop()
      .catch((e: unknown) => {
        process.stderr.write(`stop failed: ${String(e)}\n`);
      })
      // exit() rather than waiting for the loop to drain: --cpu-prof still writes its file.
      .finally(() => process.exit(0));
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
  process.stdin.on("end", stop);
  // The harness profiles only the measured runs ("PROFILE START", "PROFILE
  // STOP <file>"), not start-up, seeding and synthesis of the seeds.
  createInterface({ input: process.stdin }).on("line", (line) => {
    void profileCommand(line).catch((e: unknown) => process.stderr.write(`profile: ${String(e)}\n`));
  });
  announce(`READY ${JSON.stringify({ url: started.url })}`);
}

main().catch((e: unknown) => {
  process.stderr.write(`${(e as Error).stack ?? String(e)}\n`);
  process.exit(1);
});
