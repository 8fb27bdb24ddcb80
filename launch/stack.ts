// The full stack on one machine: every service as its own process against a
// real MongoDB and NATS, several audio workers sharing the job queue.
// `npm run stack` runs this; tests and benchmarks drive it via startStack().
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { ConfigError, loadConfig } from "../lib/config.js";
import { freePort } from "../lib/net/free-port.js";
import { onStopSignals, startedByNpm, watchParent } from "../lib/service.js";

export const STACK_VARS = {
  MONGODB_URL: { type: "string", format: "uri", description: "MongoDB for articles, tokens and audio (GridFS); required" },
  NATS_URL: { type: "string", format: "uri", description: "NATS with JetStream for audio jobs; required" },
  PORT: { type: "integer", minimum: 0, maximum: 65535, default: 8080, description: "public HTTP port of the gateway (0 = free port)" },
  HOST: { type: "string", default: "0.0.0.0", description: "public bind address of the gateway" },
  RPC_HOST: { type: "string", default: "127.0.0.1", description: "bind address of the internal RPC listeners" },
  AUTH_PORT: { type: "integer", minimum: 0, maximum: 65535, default: 7001, description: "auth RPC port (0 = free port)" },
  ARTICLES_PORT: { type: "integer", minimum: 0, maximum: 65535, default: 7002, description: "articles RPC port (0 = free port)" },
  AUDIO_PORT: { type: "integer", minimum: 0, maximum: 65535, default: 7003, description: "RPC port of the first audio replica; the next ones count up (0 = free ports)" },
  AUDIO_REPLICAS: { type: "integer", minimum: 1, maximum: 32, default: 2, description: "audio worker processes" },
  INTERNAL_TOKEN: { type: "string", description: "service-to-service token (16+ characters); random per start when unset" },
  PUBLIC_URL: { type: "string", format: "uri", description: "public gateway URL shown in the auth banner" },
  STACK_CPU_PROF: { type: "string", description: "a directory: every service runs with --cpu-prof and writes its CPU profile there when it stops (profiling; see bench/README.md)" },
} as const;

export type StackEnv = Record<string, string | undefined>;

export interface StackProcess {
  /** auth, articles, audio-1 … audio-N, gateway */
  readonly name: string;
  /** RPC base URL, or the public URL for the gateway. */
  readonly url: string;
  /** Of the current incarnation; undefined while it is not running. */
  readonly pid: number | undefined;
  readonly running: boolean;
  /** Sends a signal to the current incarnation (fault injection). */
  kill(signal?: NodeJS.Signals): void;
  /** Stops it gracefully if it runs, starts it again with the same settings and waits until it is healthy. */
  restart(): Promise<void>;
  /** Resolves when the current incarnation has exited. */
  exited(): Promise<void>;
}

export interface Stack {
  /** Public base URL of the gateway, e.g. http://127.0.0.1:8080 */
  url: string;
  processes: StackProcess[];
  /** Looks a process up by name; throws for an unknown one. */
  process(name: string): StackProcess;
  /** Stops every process, gateway first, then the audio workers, articles and auth. */
  stop(): Promise<void>;
}

export interface StackOptions {
  /** Receives every output line of every process. Default: prefixed and written to this process's stdout. */
  onLine?: (name: string, line: string) => void;
  /** Per process; default 60 s. */
  startTimeoutMs?: number;
  /** SIGTERM to SIGKILL during stop; default 30 s (the services themselves give up after 25 s). */
  stopGraceMs?: number;
  /** Cancels start-up: whatever has started is stopped again and startStack rejects. */
  signal?: AbortSignal;
}

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const CHILD = path.join(ROOT, "launch/stack-child.ts");

const ENTRIES = {
  auth: "services/auth/main.ts",
  articles: "services/articles/main.ts",
  audio: "services/audio/main.ts",
  gateway: "gateway/main.ts",
} as const;

export async function startStack(env: StackEnv = process.env, opts: StackOptions = {}): Promise<Stack> {
  const cfg = loadConfig(STACK_VARS, env);
  const missing = (["MONGODB_URL", "NATS_URL"] as const).filter((k) => !cfg[k]);
  if (missing.length) {
    throw new ConfigError(
      `Invalid configuration: the full stack needs ${missing.join(" and ")} (e.g. MONGODB_URL=mongodb://127.0.0.1:27017 NATS_URL=nats://127.0.0.1:4222); ` +
        "`npm start` runs everything in one process without either",
    );
  }
  if (cfg.INTERNAL_TOKEN !== undefined && !/^\S{16,}$/.test(cfg.INTERNAL_TOKEN)) {
    throw new ConfigError("Invalid configuration: INTERNAL_TOKEN must be at least 16 characters without spaces (or unset: a random one is generated)");
  }
  const onLine = opts.onLine ?? defaultPrinter();
  const startTimeoutMs = opts.startTimeoutMs ?? 60_000;
  const stopGraceMs = opts.stopGraceMs ?? 30_000;

  const rpcHost = cfg.RPC_HOST;
  const callHost = (h: string) => (h === "0.0.0.0" || h === "::" ? "127.0.0.1" : h.includes(":") ? `[${h}]` : h);
  const ports = await assignPorts(cfg, rpcHost);
  const rpcUrl = (port: number) => `http://${callHost(rpcHost)}:${port}`;
  const url = `http://${callHost(cfg.HOST)}:${ports.gateway}`;

  const common: StackEnv = {
    ...env,
    INTERNAL_TOKEN: cfg.INTERNAL_TOKEN ?? randomBytes(32).toString("base64url"),
    RPC_HOST: rpcHost,
    PORT: String(ports.gateway),
    AUTH_PORT: String(ports.auth),
    ARTICLES_PORT: String(ports.articles),
    AUDIO_PORT: String(ports.audio[0]),
    AUTH_URL: rpcUrl(ports.auth),
    ARTICLES_URL: rpcUrl(ports.articles),
    AUDIO_URL: rpcUrl(ports.audio[0]),
    PUBLIC_URL: cfg.PUBLIC_URL ?? `http://localhost:${ports.gateway}`,
  };

  const report = (line: string) => onLine("stack", line);
  const make = (name: string, entry: string, port: number, health: "rpc" | "http", extra: StackEnv = {}) =>
    new ManagedProcess(name, entry, health === "rpc" ? rpcUrl(port) : url, health, { ...common, ...extra }, onLine, report, startTimeoutMs, stopGraceMs, opts.signal);

  const auth = make("auth", ENTRIES.auth, ports.auth, "rpc");
  const articles = make("articles", ENTRIES.articles, ports.articles, "rpc");
  const audio = ports.audio.map((p, i) => make(`audio-${i + 1}`, ENTRIES.audio, p, "rpc", { AUDIO_PORT: String(p) }));
  const gateway = make("gateway", ENTRIES.gateway, ports.gateway, "http");
  const all = [auth, articles, ...audio, gateway];
  // Shutdown order: stop taking requests, then let workers finish and report
  // their jobs while articles and auth still answer.
  const stopOrder = [[gateway], audio, [articles], [auth]];

  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      for (const group of stopOrder) await Promise.all(group.map((p) => p.stop()));
      process.off("exit", killAllNow);
    })());
  // Last resort when the launcher exits without stop(): nothing may outlive it.
  const killAllNow = () => {
    for (const p of all) p.kill("SIGKILL");
  };
  process.on("exit", killAllNow);

  try {
    // The services only call each other lazily, so they can start together;
    // the gateway's readiness needs all of them.
    await Promise.all([auth, articles, ...audio].map((p) => p.start()));
    await gateway.start();
    opts.signal?.throwIfAborted();
  } catch (err) {
    await stop();
    throw err;
  }
  report(`article audio stack ready: API at ${url}/api (${audio.length} audio replica${audio.length === 1 ? "" : "s"})`);

  return {
    url,
    processes: all,
    process(name) {
      const p = all.find((x) => x.name === name);
      if (!p) throw new Error(`no process named ${name} (have ${all.map((x) => x.name).join(", ")})`);
      return p;
    },
    stop,
  };
}

class ManagedProcess implements StackProcess {
  private child: ChildProcess | undefined;
  private exitedP: Promise<void> = Promise.resolve();
  private expectExit = false;
  private tail: string[] = [];

  constructor(
    readonly name: string,
    private entry: string,
    readonly url: string,
    private health: "rpc" | "http",
    private env: StackEnv,
    private onLine: (name: string, line: string) => void,
    private report: (line: string) => void,
    private startTimeoutMs: number,
    private stopGraceMs: number,
    private cancel?: AbortSignal,
  ) {}

  get pid() {
    return this.running ? this.child?.pid : undefined;
  }

  get running() {
    return !!this.child && this.child.exitCode === null && this.child.signalCode === null;
  }

  exited() {
    return this.exitedP;
  }

  kill(signal: NodeJS.Signals = "SIGTERM") {
    if (this.running) this.child!.kill(signal);
  }

  async start(): Promise<void> {
    this.expectExit = false;
    this.tail = [];
    const profile = this.env.STACK_CPU_PROF ? ["--cpu-prof", `--cpu-prof-dir=${this.env.STACK_CPU_PROF}`] : [];
    const child = spawn(process.execPath, [...profile, "--import", "tsx", CHILD, this.entry], {
      cwd: ROOT,
      env: this.env as NodeJS.ProcessEnv,
      // stdin is the lifeline (see stack-child.ts).
      stdio: ["pipe", "pipe", "pipe"],
      // Its own process group: Ctrl-C in a terminal reaches only the launcher,
      // which then stops the services in order.
      detached: true,
    });
    this.child = child;
    child.stdin!.on("error", () => undefined);
    this.exitedP = new Promise((resolve) => {
      child.once("exit", (code, signal) => {
        if (!this.expectExit) {
          this.report(`${this.name} (pid ${child.pid}) exited unexpectedly (${signal ?? `code ${code}`}); not restarted`);
        }
        resolve();
      });
      child.once("error", (err) => {
        this.report(`${this.name} could not be started: ${err.message}`);
        resolve();
      });
    });
    this.forward(child.stdout!, false);
    this.forward(child.stderr!, true);

    try {
      await this.waitHealthy(child);
    } catch (err) {
      this.expectExit = true;
      if (this.running) await this.stop();
      throw err;
    }
  }

  async stop(): Promise<void> {
    const child = this.child;
    if (!child || !this.running) return;
    this.expectExit = true;
    child.kill("SIGTERM");
    const timer = setTimeout(() => {
      this.report(`${this.name} did not stop within ${this.stopGraceMs} ms; killing it`);
      child.kill("SIGKILL");
    }, this.stopGraceMs);
    await this.exitedP;
    clearTimeout(timer);
    child.stdin?.destroy();
    this.report(`${this.name} stopped (${child.signalCode ?? `code ${child.exitCode}`})`);
  }

  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }

  private forward(stream: NodeJS.ReadableStream, isStderr: boolean): void {
    let buf = "";
    stream.setEncoding("utf8");
    stream.on("data", (d: string) => {
      buf += d;
      let nl: number;
      while ((nl = buf.indexOf("\n")) >= 0) {
        this.line(buf.slice(0, nl), isStderr);
        buf = buf.slice(nl + 1);
      }
    });
    stream.on("end", () => {
      if (buf) this.line(buf, isStderr);
      buf = "";
    });
  }

  private line(l: string, isStderr: boolean): void {
    this.onLine(this.name, l);
    const summary = summarize(l, isStderr);
    if (summary) {
      this.tail.push(summary);
      if (this.tail.length > 20) this.tail.shift();
    }
  }

  private async waitHealthy(child: ChildProcess): Promise<void> {
    const deadline = Date.now() + this.startTimeoutMs;
    while (Date.now() < deadline) {
      if (this.cancel?.aborted) throw new Error(`${this.name}: start-up cancelled`);
      if (child.exitCode !== null || child.signalCode !== null) {
        throw new Error(`${this.name} exited (${child.signalCode ?? `code ${child.exitCode}`}) during start-up: ${this.lastLines()}`);
      }
      if (await this.isHealthy()) return;
      await new Promise((r) => setTimeout(r, 150));
    }
    throw new Error(`${this.name} was not healthy within ${this.startTimeoutMs} ms at ${this.url}: ${this.lastLines()}`);
  }

  private async isHealthy(): Promise<boolean> {
    const signal = AbortSignal.timeout(1000);
    try {
      if (this.health === "http") return (await fetch(`${this.url}/readyz`, { signal })).ok;
      // grpc.health.v1 over the Connect protocol's JSON form: a plain POST.
      const res = await fetch(`${this.url}/grpc.health.v1.Health/Check`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{}",
        signal,
      });
      return res.ok && ((await res.json()) as { status?: string }).status === "SERVING";
    } catch {
      return false;
    }
  }

  private lastLines(): string {
    return this.tail.slice(-8).join(" | ") || "(no output)";
  }
}

/**
 * What a start-up error may quote from a child's output: its warnings and
 * errors and whatever it wrote to stderr, never plain stdout text, which is
 * where the auth service prints freshly created demo tokens.
 */
function summarize(line: string, isStderr: boolean): string | undefined {
  if (!line.startsWith("{")) return isStderr && line.trim() ? line.trim().slice(0, 300) : undefined;
  try {
    const r = JSON.parse(line) as { level?: number; msg?: string; err?: { message?: string }; config?: string };
    if ((r.level ?? 0) < 40) return undefined;
    const why = r.err?.message ?? r.config;
    return `${r.msg ?? "error"}${why ? `: ${why}` : ""}`.slice(0, 300);
  } catch {
    return undefined;
  }
}

interface Ports {
  gateway: number;
  auth: number;
  articles: number;
  audio: number[];
}

async function assignPorts(
  cfg: { PORT: number; HOST: string; AUTH_PORT: number; ARTICLES_PORT: number; AUDIO_PORT: number; AUDIO_REPLICAS: number },
  rpcHost: string,
): Promise<Ports> {
  const taken = new Set<number>();
  // Port 0 means "any", but the children need the number up front for each other's URLs.
  const pick = async (host: string) => {
    let p: number;
    do p = await freePort(host);
    while (taken.has(p));
    taken.add(p);
    return p;
  };
  const fixed = [cfg.PORT, cfg.AUTH_PORT, cfg.ARTICLES_PORT, ...Array.from({ length: cfg.AUDIO_REPLICAS }, (_, i) => (cfg.AUDIO_PORT ? cfg.AUDIO_PORT + i : 0))].filter(
    (p) => p !== 0,
  );
  const dup = fixed.find((p, i) => fixed.indexOf(p) !== i);
  if (dup !== undefined) {
    throw new ConfigError(
      `Invalid configuration: port ${dup} is assigned twice (PORT, AUTH_PORT, ARTICLES_PORT and AUDIO_PORT…AUDIO_PORT+AUDIO_REPLICAS-1 must differ)`,
    );
  }
  if (cfg.AUDIO_PORT && cfg.AUDIO_PORT + cfg.AUDIO_REPLICAS - 1 > 65535) {
    throw new ConfigError("Invalid configuration: AUDIO_PORT + AUDIO_REPLICAS - 1 exceeds 65535");
  }
  for (const p of fixed) taken.add(p);
  const gateway = cfg.PORT || (await pick(cfg.HOST));
  const auth = cfg.AUTH_PORT || (await pick(rpcHost));
  const articles = cfg.ARTICLES_PORT || (await pick(rpcHost));
  const audio: number[] = [];
  for (let i = 0; i < cfg.AUDIO_REPLICAS; i++) audio.push(cfg.AUDIO_PORT ? cfg.AUDIO_PORT + i : await pick(rpcHost));
  return { gateway, auth, articles, audio };
}

function defaultPrinter(): (name: string, line: string) => void {
  const width = 10;
  return (name, line) => process.stdout.write(`${name.padEnd(width)}| ${line}\n`);
}

const isMain = import.meta.url === `file://${process.argv[1]}` || process.argv[1]?.endsWith("launch/stack.ts");
if (isMain) {
  const say = (line: string) => process.stdout.write(`${"stack".padEnd(10)}| ${line}\n`);
  const cancelStart = new AbortController();
  let stack: Stack | undefined;
  const stopAndExit = (s: Stack) =>
    s.stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  // Listening before anything starts: without a listener SIGTERM's default
  // action kills the launcher on the spot, and a supervisor may well signal
  // the moment "ready" appears. A stop during start-up cancels it.
  // A terminal's Ctrl-C reaches the launcher directly and again relayed by
  // npm: a repeat that close is the same request (onStopSignals); only a
  // deliberate second signal later means "kill everything now".
  const trigger = onStopSignals(
    (reason) => {
      say(`${reason}: stopping gateway, audio workers, articles, auth`);
      if (stack) void stopAndExit(stack);
      else cancelStart.abort();
    },
    (reason) => {
      say(`${reason} again: killing every process now`);
      for (const p of stack?.processes ?? []) p.kill("SIGKILL");
      // During start-up the exit handler of startStack kills what has started.
      process.exit(1);
    },
  );
  // Supervisors signal npm; when npm is killed outright it passes nothing on.
  if (startedByNpm()) watchParent(() => trigger("npm (the parent process) exited"));
  startStack(process.env, { signal: cancelStart.signal }).then(
    (s) => {
      stack = s;
      if (cancelStart.signal.aborted) void stopAndExit(s);
    },
    (err: unknown) => {
      // Asked to stop during start-up: what had started is stopped again.
      if (cancelStart.signal.aborted) process.exit(0);
      process.stderr.write(`stack: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(1);
    },
  );
}
