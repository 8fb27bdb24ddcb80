// A shutdown that outlives its grace period says which step it was still waiting for
// (lib/service.ts onShutdown): the log line an operator reads when a pod is killed at its grace.
import { expect } from "chai";
import { spawn } from "node:child_process";

async function stopped(closeBody: string): Promise<{ code: number | null; lines: Array<Record<string, unknown>> }> {
  const script = [
    `import { onShutdown } from ${JSON.stringify(new URL("../../lib/service.ts", import.meta.url).href)};`,
    `const log = { info: (msg) => console.log(JSON.stringify({ msg })), error: (o, msg) => console.log(JSON.stringify({ ...o, msg })) };`,
    `onShutdown(log, async (step) => { ${closeBody} }, 300);`,
    `console.log(JSON.stringify({ msg: "ready" }));`,
    `setInterval(() => {}, 1000);`,
  ].join("\n");
  const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  child.stdout!.on("data", (d: Buffer) => {
    out += d.toString();
    if (out.includes('"ready"')) child.kill("SIGTERM");
  });
  const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
  return { code, lines: out.trim().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>) };
}

describe("shutdown steps", function () {
  this.timeout(30_000);

  it("names the step still open when the grace period runs out, and exits 1", async () => {
    const { code, lines } = await stopped(`step("jobs in hand"); step("speech engine"); await new Promise(() => {});`);
    expect(code).to.equal(1);
    const late = lines.find((l) => l.msg === "shutdown took too long, exiting");
    expect(late, JSON.stringify(lines)).to.include({ waitingFor: "speech engine" });
    expect(late!.waitedMs).to.be.a("number").and.at.least(200);
  });

  it("exits 0 when every step finished in time", async () => {
    const { code, lines } = await stopped(`step("jobs in hand"); step("speech engine");`);
    expect(code).to.equal(0);
    expect(lines.map((l) => l.msg)).to.not.include("shutdown took too long, exiting");
  });
});
