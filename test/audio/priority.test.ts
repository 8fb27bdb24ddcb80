// A speech host runs below the service where the kernel weighs it (issue 34: with Kokoro busy on
// both cores, the API's creates waited for the host): every thread of the host niced, not only
// the one that asked, and, where the kernel shares the CPU out by session (autogroups), the host's
// own session's group niced below the service's, while a host that shares the service's group
// leaves the group alone (lowering it would lower the service).
import { expect } from "chai";
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { SPEECH_NICENESS } from "../../services/audio/engine/native.js";

const PRIORITY = fileURLToPath(new URL("../../services/audio/engine/priority.ts", import.meta.url));
const autogroups = existsSync("/proc/self/autogroup");

/** A Node process with worker threads of its own that lowers itself, as a speech host does. */
async function lowered(detached: boolean): Promise<{ child: ChildProcess; report: { threads: number; autogroup?: number } }> {
  const code = `
    import { Worker } from "node:worker_threads";
    import { runBelowService } from ${JSON.stringify(PRIORITY)};
    new Worker("setInterval(() => {}, 1000)", { eval: true }).unref();
    await new Promise((r) => setTimeout(r, 100));
    console.log(JSON.stringify(runBelowService(${SPEECH_NICENESS})));
    setInterval(() => {}, 1000);`;
  const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", code], { detached, stdio: ["ignore", "pipe", "inherit"] });
  const line = await new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (d: Buffer) => {
      out += d.toString();
      if (out.includes("\n")) resolve(out.split("\n")[0]);
    });
    child.once("exit", (code) => reject(new Error(`the child exited (${code}) before it reported`)));
  });
  return { child, report: JSON.parse(line) };
}

/** A thread's fields after its name: [16] its nice value. */
function threadStat(pid: number, tid: number | string): string[] {
  const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
}

function threadNices(pid: number): number[] {
  return readdirSync(`/proc/${pid}/task`).map((tid) => Number(threadStat(pid, tid)[16]));
}


const groupOf = (pid: number | "self") => readFileSync(`/proc/${pid}/autogroup`, "utf8").trim();
/** A process that never started a session since boot (CI runners' jobs can be one) is in the
 * kernel's default group, whose file is empty and whose weight is that of nice 0. */
const groupNice = (pid: number | "self") => Number(/nice\s+(-?\d+)/.exec(groupOf(pid))?.[1] ?? 0);

describe("speech hosts' priority", function () {
  this.timeout(30_000);
  before(function () {
    if (process.platform !== "linux") this.skip();
  });

  it("nices every thread of a host started in a session of its own, and its session's group below the service's", async () => {
    const ownGroup = autogroups ? groupOf("self") : undefined;
    const { child, report } = await lowered(true);
    try {
      const nices = threadNices(child.pid!);
      expect(nices.length, "threads of the host").to.be.at.least(3);
      expect(report.threads).to.equal(nices.length);
      for (const nice of nices) expect(nice, `nice values of the host's threads: ${nices.join(", ")}`).to.be.at.least(SPEECH_NICENESS);
      if (autogroups && groupOf(child.pid!) === "") {
        // A kernel that makes no group per session (autogroups off at boot): nothing to lower.
        expect(report.autogroup, "the host's group").to.equal(undefined);
      } else if (autogroups) {
        expect(groupOf(child.pid!), "the host's group").to.not.equal(ownGroup);
        expect(groupNice(child.pid!), "the host's group's nice value").to.equal(Math.min(19, Math.max(SPEECH_NICENESS, groupNice("self") + SPEECH_NICENESS)));
        expect(groupOf("self"), "the parent's group").to.equal(ownGroup);
      }
    } finally {
      child.kill("SIGKILL");
    }
  });

  it("leaves alone a group the host shares with the service", async function () {
    if (!autogroups) this.skip();
    const before = groupOf("self");
    const { child, report } = await lowered(false);
    try {
      expect(report.autogroup).to.equal(undefined);
      expect(groupOf(child.pid!)).to.equal(before);
      expect(groupOf("self"), "the service's group, after").to.equal(before);
      for (const nice of threadNices(child.pid!)) expect(nice).to.be.at.least(SPEECH_NICENESS);
    } finally {
      child.kill("SIGKILL");
    }
  });
});
