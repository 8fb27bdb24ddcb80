// `npm run stack` and `npm start` end with whatever started them. A supervisor
// (systemd, supervisord, a container running the script) signals npm, or the
// whole process group, or kills a process outright; in every case no process
// of the platform may be left behind, re-parented and still serving.
import { expect } from "chai";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { runEmbeddedScript, runScript, waitGone, type ProcInfo, type Script } from "../support/process-tree.js";
import { requireMongo, requireNats } from "../support/servers.js";
import { sleep } from "../support/wait.js";
import { prepareTestStack, type TestStackRun } from "./stack-harness.js";

// The launcher gives each service 30 s after SIGTERM (the services give up after 25 s).
const GRACE_MS = 30_000;

const describeProc = (ps: ProcInfo[]) => ps.map((p) => `${p.pid} (parent ${p.ppid}) ${p.cmd.slice(0, 120)}`).join("\n");

/** Sends the signal, then waits for every process the script had started to be gone and for all it printed. */
async function endAndCount(script: Script, procs: ProcInfo[], send: () => void): Promise<number> {
  const started = Date.now();
  send();
  const { survivors } = await waitGone(procs.map((p) => p.pid), GRACE_MS);
  const ms = Date.now() - started;
  expect(survivors, `still running ${GRACE_MS} ms after the signal:\n${describeProc(survivors)}\n${script.tail()}`).to.deep.equal([]);
  // What they printed last may still be in the pipe.
  await script.outputDone();
  return ms;
}

const figures: string[] = [];
after(() => {
  if (figures.length) console.log(`      time to stop:\n${figures.map((f) => `        ${f}`).join("\n")}`);
});

describe("process lifetime: npm run stack ends with its parent", function () {
  this.timeout(600_000);
  let mongoUrl: string;
  let natsUrl: string;
  let run: TestStackRun | undefined;

  before(async function () {
    mongoUrl = await requireMongo(this);
    natsUrl = await requireNats(this);
  });

  afterEach(async () => {
    await run?.cleanup();
    run = undefined;
  });

  /** `npm run stack` until ready; returns npm, its shell if any, the launcher and the five services. */
  async function startStackScript(): Promise<{ script: Script; procs: ProcInfo[]; launcher: ProcInfo }> {
    run = await prepareTestStack({ mongoUrl, natsUrl, env: { LOG_LEVEL: "warn" } });
    const script = runScript("stack", run.env);
    await script.line(/article audio stack ready/, 180_000);
    const procs = script.tree();
    const launcher = procs.find((p) => /launch\/stack\.ts/.test(p.cmd) && !/^(\/bin\/)?sh /.test(p.cmd));
    const services = procs.filter((p) => /stack-child\.ts/.test(p.cmd));
    expect(launcher, describeProc(procs)).to.exist;
    // auth, articles, two audio workers, gateway
    expect(services, describeProc(procs)).to.have.length(5);
    return { script, procs, launcher: launcher! };
  }

  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    it(`${signal} to the npm process stops the launcher and all five services`, async () => {
      const { script, procs } = await startStackScript();
      const ms = await endAndCount(script, procs, () => process.kill(script.pid, signal));
      figures.push(`stack, ${signal} to npm: ${ms} ms`);
      expect(script.lines.join("\n")).to.match(/auth stopped \(code 0\)/);
    });
  }

  it("SIGTERM to the process group stops everything once, gracefully", async () => {
    const { script, procs } = await startStackScript();
    const ms = await endAndCount(script, procs, () => process.kill(-script.pid, "SIGTERM"));
    figures.push(`stack, SIGTERM to the group: ${ms} ms`);
    const out = script.lines.join("\n");
    expect(out, `launcher output:\n${script.tail(60)}\n`).to.match(/auth stopped \(code 0\)/);
    expect(out, `the echo of the signal is not taken as a second one; launcher output:\n${script.tail(60)}\n`).not.to.match(/killing every process now/);
  });

  it("SIGTERM during start-up stops what has started, gracefully", async () => {
    run = await prepareTestStack({ mongoUrl, natsUrl, env: { LOG_LEVEL: "warn" } });
    const script = runScript("stack", run.env);
    // The services are spawned; they take a while to answer their health checks.
    let procs: ProcInfo[] = [];
    for (const until = Date.now() + 60_000; Date.now() < until; await sleep(20)) {
      procs = script.tree();
      if (procs.filter((p) => /stack-child\.ts/.test(p.cmd)).length >= 4) break;
    }
    expect(procs.filter((p) => /stack-child\.ts/.test(p.cmd)), describeProc(procs)).to.have.length.of.at.least(4);
    const ms = await endAndCount(script, procs, () => process.kill(-script.pid, "SIGTERM"));
    figures.push(`stack, SIGTERM to the group during start-up: ${ms} ms`);
    const out = script.lines.join("\n");
    expect(out, `launcher output:\n${script.tail(60)}\n`).to.match(/SIGTERM received: stopping/);
    expect(out, `launcher output:\n${script.tail(60)}\n`).to.match(/auth stopped/);
    expect(out).not.to.match(/killing every process now|exited unexpectedly/);
    expect(script.child.exitCode, "npm's exit code").to.equal(0);
  });

  it("SIGKILL to the launcher: the services stop by themselves", async () => {
    const { script, procs, launcher } = await startStackScript();
    const ms = await endAndCount(script, procs, () => process.kill(launcher.pid, "SIGKILL"));
    figures.push(`stack, SIGKILL to the launcher: ${ms} ms`);
  });

  it("SIGKILL to npm: the launcher notices and stops the services", async () => {
    const { script, procs } = await startStackScript();
    const ms = await endAndCount(script, procs, () => process.kill(script.pid, "SIGKILL"));
    figures.push(`stack, SIGKILL to npm: ${ms} ms`);
  });
});

describe("process lifetime: npm start ends with its parent", function () {
  this.timeout(300_000);
  let dataDir: string;

  beforeEach(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), "lifetime-embedded-"));
  });
  afterEach(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  async function startEmbeddedScript(): Promise<{ script: Script; procs: ProcInfo[] }> {
    const script = runEmbeddedScript(dataDir);
    await script.line(/article audio platform ready/, 120_000);
    return { script, procs: script.tree() };
  }

  for (const signal of ["SIGTERM", "SIGINT", "SIGKILL"] as const) {
    it(`${signal} to the npm process stops the platform`, async () => {
      const { script, procs } = await startEmbeddedScript();
      const ms = await endAndCount(script, procs, () => process.kill(script.pid, signal));
      figures.push(`npm start, ${signal} to npm: ${ms} ms`);
      if (signal !== "SIGKILL") expect(script.lines.join("\n")).to.match(/received, shutting down/);
    });
  }

  it("SIGTERM to the npm process during start-up stops the platform gracefully", async () => {
    const script = runEmbeddedScript(dataDir);
    // Its first log line: started, not ready yet.
    await script.line(/^\{/, 120_000);
    const procs = script.tree();
    const ms = await endAndCount(script, procs, () => process.kill(script.pid, "SIGTERM"));
    figures.push(`npm start, SIGTERM to npm during start-up: ${ms} ms`);
    expect(script.lines.join("\n"), script.tail()).to.match(/received, shutting down/);
  });

});
