// What every started service hands back to whoever started it (a process
// entry point, the embedded launcher or a test).
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

/** Runs closers in order on SIGINT/SIGTERM, once; a second signal exits at once. */
export function onShutdown(log: { info(msg: string): void; error(o: object, msg: string): void }, close: () => Promise<void>, graceMs = 25_000): void {
  let closing = false;
  const handler = (signal: string) => {
    if (closing) process.exit(1);
    closing = true;
    log.info(`${signal} received, shutting down`);
    const timer = setTimeout(() => {
      log.error({}, "shutdown took too long, exiting");
      process.exit(1);
    }, graceMs);
    timer.unref();
    close().then(
      () => process.exit(0),
      (err) => {
        log.error({ err }, "shutdown failed");
        process.exit(1);
      },
    );
  };
  process.on("SIGINT", () => handler("SIGINT"));
  process.on("SIGTERM", () => handler("SIGTERM"));
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
