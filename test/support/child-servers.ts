// Plumbing shared by the local test servers: free ports, readiness polling and
// making sure no child outlives the test process, whatever way it ends.
import { spawn, type ChildProcess, type SpawnOptions } from "node:child_process";
import { connect } from "node:net";
import { freePort } from "../../lib/net/free-port.js";
export { freePort };

const children = new Set<ChildProcess>();
const exitCleanups = new Set<() => void>();
let hooked = false;

function hookExit(): void {
  if (hooked) return;
  hooked = true;
  // Only synchronous work runs in 'exit'.
  process.on("exit", () => {
    // SIGTERM lets the wrappers stop their servers; stdin closing right
    // after is the backstop.
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill("SIGTERM");
    for (const f of exitCleanups) {
      try {
        f();
      } catch {
        // best effort at exit
      }
    }
  });
}

/** Runs fn synchronously when the process exits (temp dirs and the like). */
export function atExit(fn: () => void): () => void {
  hookExit();
  exitCleanups.add(fn);
  return () => exitCleanups.delete(fn);
}

export function spawnTracked(cmd: string, args: string[], opts: SpawnOptions): ChildProcess {
  hookExit();
  const child = spawn(cmd, args, opts);
  children.add(child);
  child.once("exit", () => children.delete(child));
  // A missing binary surfaces as 'error'; callers read it via waitForExit/startup.
  child.on("error", () => undefined);
  return child;
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ host: "127.0.0.1", port });
    s.once("connect", () => {
      s.destroy();
      resolve(true);
    });
    s.once("error", () => resolve(false));
  });
}

/** Resolves once the port accepts; rejects if the child dies first or time runs out. */
export async function waitForPort(port: number, child: ChildProcess, what: string, timeoutMs: number, logTail: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let spawnError: Error | undefined;
  child.once("error", (e) => (spawnError = e));
  while (Date.now() < deadline) {
    if (spawnError) throw new Error(`${what} could not start: ${spawnError.message}`);
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`${what} exited (${child.exitCode ?? child.signalCode}) before accepting connections: ${logTail()}`);
    }
    if (await canConnect(port)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  child.kill("SIGKILL");
  throw new Error(`${what} did not accept connections on 127.0.0.1:${port} within ${timeoutMs} ms: ${logTail()}`);
}

export async function stopChild(child: ChildProcess, graceMs = 5000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
  await exited;
  clearTimeout(timer);
}

/** Keeps the last few KB of a child's output for error messages. */
export function captureTail(child: ChildProcess, max = 4000): () => string {
  let buf = "";
  const add = (d: Buffer) => {
    buf = (buf + d.toString()).slice(-max);
  };
  child.stdout?.on("data", add);
  child.stderr?.on("data", add);
  return () => buf.trim().split("\n").slice(-8).join(" | ") || "(no output)";
}
