// A render in flight when the terminal's Ctrl-C reaches the service's process group: a service
// stand-in (its own process group leader, handling SIGINT as the services do: a graceful stop)
// starts `engine` and one render, then the whole group gets SIGINT. What it printed is returned:
// "SIGINT" when it saw the signal, then "BYTES n" when the render finished or "FAILED why".
import { spawn } from "node:child_process";

export async function renderThroughCtrlC(opts: {
  /** Module statements that set `engine` (a SpeechEngine) up. */
  engine: string;
  /** The argument of engine.synthesize(). */
  request: object;
  /** Waits until the render is where the signal should find it (given the stand-in's pid). */
  before(pid: number): Promise<void>;
}): Promise<string> {
  const script = [
    opts.engine,
    `process.on("SIGINT", () => console.log("SIGINT"));`,
    `const pending = engine.synthesize(${JSON.stringify(opts.request)});`,
    `console.log("STARTED");`,
    `try { console.log("BYTES " + (await pending).length); } catch (e) { console.log("FAILED " + e.message); }`,
    `await engine.close();`,
  ].join("\n");
  const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { detached: true, stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  child.stdout!.on("data", (d: Buffer) => (out += d.toString()));
  const exited = new Promise((resolve) => child.on("exit", resolve));
  try {
    for (let i = 0; i < 3000 && !out.includes("STARTED"); i++) await new Promise((r) => setTimeout(r, 20));
    await opts.before(child.pid!);
    process.kill(-child.pid!, "SIGINT");
    await exited;
  } finally {
    if (child.exitCode === null) process.kill(-child.pid!, "SIGKILL");
  }
  return out;
}
