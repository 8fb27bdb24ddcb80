// What every started service hands back to whoever started it (a process
// entry point, the embedded launcher or a test).
import { readFileSync } from "node:fs";

export interface RunningService {
  name: string;
  /** Base URL of its RPC (or HTTP) listener. */
  url: string;
  port: number;
  /** Readiness off; used first during a graceful shutdown. */
  setServing(serving: boolean): void;
  close(): Promise<void>;
}

/** Kubernetes waits 30 s by default before SIGKILL; the processes finish within this. */
export const SHUTDOWN_VARS = {
  SHUTDOWN_GRACE_MS: { type: "integer", minimum: 1000, maximum: 600_000, default: 25_000, description: "upper bound of a graceful shutdown after SIGTERM" },
} as const;

/**
 * Signals this close to the first are echoes of it: a terminal's Ctrl-C goes
 * to the whole process group, and npm relays it to its script as well.
 */
export const REPEAT_WINDOW_MS = 2_000;

/**
 * Calls stop on the first SIGINT or SIGTERM; a repeat within REPEAT_WINDOW_MS
 * is the same request, a later one (a deliberate second Ctrl-C) calls force.
 * The reason passed on reads "SIGTERM received"; the returned trigger takes
 * other reasons to stop (see watchParent).
 */
export function onStopSignals(stop: (reason: string) => void, force: (reason: string) => void): (reason: string) => void {
  let first: number | undefined;
  const trigger = (reason: string) => {
    if (first === undefined) {
      first = Date.now();
      stop(reason);
    } else if (Date.now() - first >= REPEAT_WINDOW_MS && /^SIG\w+ received$/.test(reason)) {
      force(reason);
    }
  };
  process.on("SIGINT", () => trigger("SIGINT received"));
  process.on("SIGTERM", () => trigger("SIGTERM received"));
  return trigger;
}

/** The process that started this one (read early: process.ppid may be live on some Node.js versions). */
const STARTED_BY = process.ppid;

/** The parent's pid now (process.ppid is fixed at start-up on Node.js 20); undefined where /proc cannot tell. */
function currentParent(): number | undefined {
  try {
    const stat = readFileSync("/proc/self/stat", "utf8");
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
  } catch {
    return undefined;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Calls gone once when the process that started this one has exited (this
 * process was re-parented). Supervisors signal the process they started; when
 * that is npm, or a shell, the signal may never be passed on, and this is how
 * the processes behind it learn that they are on their own.
 */
export function watchParent(gone: () => void, everyMs = 250): void {
  const parent = STARTED_BY;
  // Started by init (a container's entry point): there is nothing to outlive.
  if (parent <= 1) return;
  const timer = setInterval(() => {
    const now = currentParent();
    if (now === undefined ? !isAlive(parent) : now !== parent) {
      clearInterval(timer);
      gone();
    }
  }, everyMs);
  timer.unref();
}

/** Started by an npm script (`npm start`, `npm run stack`), whose npm may exit without passing its signal on. */
export function startedByNpm(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.npm_lifecycle_event !== undefined;
}

/**
 * Runs close once on SIGINT/SIGTERM (or when the parent exits, with
 * exitWithParent); a deliberate second signal exits at once. close may name
 * the step it is in (`step("engine")`): a shutdown that outlives its grace
 * period says which step it was still waiting for.
 */
export function onShutdown(
  log: { info(msg: string): void; error(o: object, msg: string): void },
  close: (step: (name: string) => void) => Promise<void>,
  graceMs = 25_000,
  o: { exitWithParent?: boolean } = {},
): void {
  const trigger = onStopSignals(
    (reason) => {
      log.info(`${reason}, shutting down`);
      let waitingFor: string | undefined;
      let since = Date.now();
      const timer = setTimeout(() => {
        const step = waitingFor === undefined ? {} : { waitingFor, waitedMs: Date.now() - since };
        log.error(step, "shutdown took too long, exiting");
        process.exit(1);
      }, graceMs);
      timer.unref();
      const step = (name: string) => {
        if (name === waitingFor) return;
        waitingFor = name;
        since = Date.now();
      };
      close(step).then(
        () => process.exit(0),
        (err) => {
          log.error({ err }, "shutdown failed");
          process.exit(1);
        },
      );
    },
    () => process.exit(1),
  );
  if (o.exitWithParent) watchParent(() => trigger("parent process exited"));
}

/**
 * Runs a process entry point: a configuration error prints its message (which
 * names the variable) and exits 1 before anything listens; any other start-up
 * failure is logged with its cause.
 */
export function runMain(log: { fatal(o: object, msg: string): void }, name: string, main: () => Promise<void>): void {
  main().catch((err: unknown) => {
    if (err instanceof Error && err.name === "ConfigError") {
      process.stderr.write(`${name}: ${err.message}\n`);
      log.fatal({ config: err.message }, `${name} not started: invalid configuration`);
    } else {
      log.fatal({ err }, `${name} failed to start`);
    }
    process.exit(1);
  });
}
