// The full stack as real processes (one per service, as on Kubernetes) over a
// NATS server, with every process's JSON log lines kept for assertions.
import type { ChildProcess } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { captureTail, freePort, spawnTracked, stopChild, waitForPort } from "../support/child-servers.js";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

export const TOKEN = "obs-full-token-0123456789";
export const INTERNAL_TOKEN = "obs-internal-token-0123456789";

export type Role = "auth" | "articles" | "audio" | "gateway";

const ENTRY: Record<Role, string> = {
  auth: "services/auth/main.ts",
  articles: "services/articles/main.ts",
  audio: "services/audio/main.ts",
  gateway: "gateway/main.ts",
};

export interface LogLine {
  service?: string;
  msg?: string;
  reqId?: string;
  [k: string]: unknown;
}

export interface Proc {
  role: Role;
  child: ChildProcess;
  /** Every JSON line the process wrote to stdout so far. */
  lines: LogLine[];
  /** Resolves with the exit code (null when killed by a signal) and when it happened. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>;
  metricsPort?: number;
  tail(): string;
}

export interface Stack {
  dataDir: string;
  natsUrl: string;
  ports: { auth: number; articles: number; audio: number; gateway: number };
  gatewayUrl: string;
  procs: Proc[];
  /** Starts one more process of a role (e.g. a second audio worker). */
  start(role: Role, extraEnv?: Record<string, string>): Promise<Proc>;
  stop(): Promise<void>;
}

function spawnRole(role: Role, env: Record<string, string>): Proc {
  const child = spawnTracked(process.execPath, ["--import", "tsx", ENTRY[role]], {
    cwd: ROOT,
    // eSpeak unless a test asks for more: these processes get no NODE_ENV, and on their own they
    // would load Kokoro, whose renders take seconds per sentence and outlast the drain windows here.
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", LOG_LEVEL: "info", LOCAL_ENGINES: "espeak", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const lines: LogLine[] = [];
  let partial = "";
  child.stdout!.on("data", (d: Buffer) => {
    const parts = (partial + d.toString()).split("\n");
    partial = parts.pop() ?? "";
    for (const p of parts) {
      if (!p.startsWith("{")) continue;
      try {
        lines.push(JSON.parse(p) as LogLine);
      } catch {
        // a banner or other non-JSON output
      }
    }
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal, at: Date.now() })),
  );
  return { role, child, lines, exited, tail: captureTail(child) };
}

export async function startStack(natsUrl: string, opts: { env?: Partial<Record<Role, Record<string, string>>>; roles?: Role[] } = {}): Promise<Stack> {
  const dataDir = await mkdtemp(path.join(tmpdir(), "obs-stack-"));
  const ports = { auth: await freePort(), articles: await freePort(), audio: await freePort(), gateway: await freePort() };
  const urls = {
    AUTH_URL: `http://127.0.0.1:${ports.auth}`,
    ARTICLES_URL: `http://127.0.0.1:${ports.articles}`,
    AUDIO_URL: `http://127.0.0.1:${ports.audio}`,
  };
  const common = { DATA_DIR: dataDir, RPC_HOST: "127.0.0.1", METRICS_HOST: "127.0.0.1", INTERNAL_TOKEN, NATS_URL: natsUrl, ...urls };
  const base: Record<Role, Record<string, string>> = {
    auth: { ...common, AUTH_PORT: String(ports.auth), SEED_TOKENS: JSON.stringify([{ token: TOKEN, project: "obs", scope: "full" }]) },
    articles: { ...common, ARTICLES_PORT: String(ports.articles), PORT: String(ports.gateway) },
    audio: { ...common, AUDIO_PORT: String(ports.audio), AUDIO_THREADS: "1", AUDIO_CONCURRENCY: "1" },
    gateway: { ...common, PORT: String(ports.gateway), HOST: "127.0.0.1" },
  };
  const procs: Proc[] = [];

  async function start(role: Role, extraEnv: Record<string, string> = {}): Promise<Proc> {
    const env = { ...base[role], ...opts.env?.[role], ...extraEnv };
    // A second process of a role needs its own RPC port.
    if (procs.some((p) => p.role === role) && role !== "gateway") env[`${role.toUpperCase()}_PORT`] = String(await freePort());
    const p = spawnRole(role, env);
    if (env.METRICS_PORT) p.metricsPort = Number(env.METRICS_PORT);
    procs.push(p);
    const port = role === "gateway" ? Number(env.PORT) : Number(env[`${role.toUpperCase()}_PORT`]);
    await waitForPort(port, p.child, role, 60_000, p.tail);
    return p;
  }

  const stack: Stack = {
    dataDir,
    natsUrl,
    ports,
    gatewayUrl: `http://127.0.0.1:${ports.gateway}`,
    procs,
    start,
    async stop() {
      await Promise.all(procs.map((p) => stopChild(p.child, 10_000)));
      await rm(dataDir, { recursive: true, force: true });
    },
  };
  try {
    for (const role of opts.roles ?? (["auth", "articles", "audio", "gateway"] as Role[])) await start(role);
  } catch (e) {
    await stack.stop();
    throw e;
  }
  return stack;
}

export const linesOf = (stack: Stack, role: Role): LogLine[] => stack.procs.filter((p) => p.role === role).flatMap((p) => p.lines);
