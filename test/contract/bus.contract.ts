// The behaviour every JobBus adapter must show. Run by bus.test.ts against
// the in-process bus and NATS JetStream.
import { expect } from "chai";
import { HandBackError, PermanentJobError, type AudioJob, type ConsumeOptions, type Delivery, type JobBus, type JobSubscription } from "../../lib/bus/port.js";
import { sleep, waitFor } from "../support/wait.js";

export interface BusUnderTest {
  bus: JobBus;
  cleanup(): Promise<void>;
}
/** Called once per test; `this` is the mocha hook context (for requireNats). */
export type BusFactory = (ctx: Mocha.Context) => Promise<BusUnderTest>;

const ACK_WAIT = 800;

export function busContract(name: string, factory: BusFactory): void {
  describe(`JobBus contract: ${name}`, function () {
    this.timeout(20_000);
    let under: BusUnderTest | undefined;
    let bus: JobBus;
    let subs: JobSubscription[];
    let seq = 0;

    beforeEach(async function () {
      under = await factory(this);
      bus = under.bus;
      subs = [];
    });
    afterEach(async () => {
      await under?.cleanup();
      under = undefined;
    });

    const job = (over: Partial<AudioJob> = {}): AudioJob => ({ articleId: `art-${++seq}`, projectId: "proj-1", revision: 1, ...over });
    const opts = (over: Partial<ConsumeOptions> = {}): ConsumeOptions => ({
      concurrency: 2,
      maxAttempts: 5,
      ackWaitMs: ACK_WAIT,
      backoffMs: [50],
      onExhausted: async () => undefined,
      ...over,
    });
    const consume = async (h: (d: Delivery) => Promise<void>, o: Partial<ConsumeOptions> = {}) => {
      const s = await bus.consume(h, opts(o));
      subs.push(s);
      return s;
    };

    it("delivers a published job once with attempt 1 and its fields intact", async () => {
      const seen: Delivery[] = [];
      await consume(async (d) => void seen.push(d));
      const j = job({ requestId: "req-42" });
      await bus.publish(j);
      await waitFor(() => seen.length === 1, "the delivery");
      expect(seen[0].job).to.deep.equal(j);
      expect(seen[0].attempt).to.equal(1);
      // Acked: nothing comes back after the lease would have lapsed.
      await sleep(ACK_WAIT * 1.6);
      expect(seen).to.have.length(1);
    });

    it("redelivers after a handler throws, with attempt 2 and after the backoff", async () => {
      const times: number[] = [];
      const attempts: number[] = [];
      await consume(
        async (d) => {
          times.push(Date.now());
          attempts.push(d.attempt);
          if (d.attempt === 1) throw new Error("synthesis failed");
        },
        { backoffMs: [300] },
      );
      await bus.publish(job());
      await waitFor(() => attempts.length === 2, "the redelivery");
      expect(attempts).to.deep.equal([1, 2]);
      expect(times[1] - times[0]).to.be.at.least(250);
      await sleep(ACK_WAIT * 1.3);
      expect(attempts).to.deep.equal([1, 2]);
    });

    it("redelivers a job whose handler crashed (never finished, no working()) after ackWait", async () => {
      const seen: { attempt: number; at: number }[] = [];
      await consume(async (d) => {
        seen.push({ attempt: d.attempt, at: Date.now() });
        if (d.attempt === 1) await new Promise(() => undefined);
      });
      await bus.publish(job());
      await waitFor(() => seen.length === 2, "the redelivery after the lease", ACK_WAIT * 5);
      expect(seen.map((s) => s.attempt)).to.deep.equal([1, 2]);
      expect(seen[1].at - seen[0].at).to.be.at.least(ACK_WAIT * 0.9);
    });

    it("does not redeliver while the handler keeps calling working()", async () => {
      const attempts: number[] = [];
      let finished = false;
      await consume(async (d) => {
        attempts.push(d.attempt);
        const until = Date.now() + ACK_WAIT * 2.5;
        while (Date.now() < until) {
          d.working();
          await sleep(ACK_WAIT / 4);
        }
        finished = true;
      });
      await bus.publish(job());
      await waitFor(() => finished, "the long handler", ACK_WAIT * 6);
      await sleep(ACK_WAIT * 1.3);
      expect(attempts).to.deep.equal([1]);
    });

    it("gives up after maxAttempts and calls onExhausted exactly once", async () => {
      const attempts: number[] = [];
      const exhausted: { job: AudioJob; error: unknown; attempts: number }[] = [];
      const j = job();
      await consume(
        async (d) => {
          attempts.push(d.attempt);
          throw new Error(`boom ${d.attempt}`);
        },
        { maxAttempts: 3, backoffMs: [20, 40], onExhausted: async (jb, error, n) => void exhausted.push({ job: jb, error, attempts: n }) },
      );
      await bus.publish(j);
      await waitFor(() => exhausted.length === 1, "onExhausted");
      await sleep(ACK_WAIT * 1.5);
      expect(attempts).to.deep.equal([1, 2, 3]);
      expect(exhausted).to.have.length(1);
      expect(exhausted[0].job).to.deep.equal(j);
      expect(exhausted[0].attempts).to.equal(3);
      expect((exhausted[0].error as Error).message).to.equal("boom 3");
    });

    it("takes a handed-back job again without counting that delivery, even on the last attempt", async () => {
      const seen: Array<[number, string]> = [];
      let exhaustedCalls = 0;
      const j = job({ requestId: "req-hand" });
      await consume(
        async (d) => {
          // Attempt 1 fails for real, attempt 2 is interrupted twice (a worker stopping), then succeeds.
          const handedBack = seen.filter(([a, what]) => a === 2 && what === "handed back").length;
          if (d.attempt === 1) {
            seen.push([1, "failed"]);
            throw new Error("provider down");
          }
          expect(d.job).to.deep.equal(j);
          if (handedBack < 2) {
            seen.push([d.attempt, "handed back"]);
            throw new HandBackError("worker stopping");
          }
          seen.push([d.attempt, "done"]);
        },
        { maxAttempts: 2, backoffMs: [20], onExhausted: async () => void exhaustedCalls++ },
      );
      await bus.publish(j);
      await waitFor(() => seen.some(([, what]) => what === "done"), "the completed delivery");
      await sleep(ACK_WAIT * 1.5);
      expect(seen).to.deep.equal([
        [1, "failed"],
        [2, "handed back"],
        [2, "handed back"],
        [2, "done"],
      ]);
      expect(exhaustedCalls).to.equal(0);
    });

    it("drops a job whose handler throws PermanentJobError, without onExhausted", async () => {
      const attempts: number[] = [];
      let exhaustedCalls = 0;
      await consume(
        async (d) => {
          attempts.push(d.attempt);
          throw new PermanentJobError("article text is empty");
        },
        { onExhausted: async () => void exhaustedCalls++ },
      );
      await bus.publish(job());
      await waitFor(() => attempts.length === 1, "the delivery");
      await sleep(ACK_WAIT * 1.5);
      expect(attempts).to.deep.equal([1]);
      expect(exhaustedCalls).to.equal(0);
    });

    it("delivers the same article revision once, but a new revision again", async () => {
      const seen: AudioJob[] = [];
      await consume(async (d) => void seen.push(d.job));
      const j = job();
      await bus.publish(j);
      await bus.publish({ ...j });
      await bus.publish({ ...j, revision: 2 });
      await waitFor(() => seen.length >= 2, "two deliveries");
      await sleep(300);
      expect(seen.map((s) => s.revision).sort()).to.deep.equal([1, 2]);
    });

    it("shares jobs between competing consumers without duplicates", async () => {
      const byConsumer: [string[], string[]] = [[], []];
      const slow = (i: 0 | 1) => async (d: Delivery) => {
        byConsumer[i].push(d.job.articleId);
        await sleep(100);
      };
      await consume(slow(0), { concurrency: 1 });
      await consume(slow(1), { concurrency: 1 });
      const jobs = Array.from({ length: 8 }, () => job());
      for (const j of jobs) await bus.publish(j);
      await waitFor(() => byConsumer[0].length + byConsumer[1].length === 8, "all jobs", 8000);
      await sleep(200);
      const all = [...byConsumer[0], ...byConsumer[1]];
      expect(new Set(all).size).to.equal(8);
      expect(all).to.have.length(8);
      expect(byConsumer[0].length).to.be.greaterThan(0);
      expect(byConsumer[1].length).to.be.greaterThan(0);
    });

    it("respects the concurrency limit of a consumer", async () => {
      let running = 0;
      let peak = 0;
      let done = 0;
      await consume(
        async () => {
          peak = Math.max(peak, ++running);
          await sleep(80);
          running--;
          done++;
        },
        { concurrency: 3 },
      );
      for (let i = 0; i < 9; i++) await bus.publish(job());
      await waitFor(() => done === 9, "all jobs", 8000);
      expect(peak).to.equal(3);
    });

    it("serves another project's first job right after the job in hand, however long one project's backlog", async () => {
      const order: string[] = [];
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      await consume(
        async (d) => {
          order.push(`${d.job.projectId}/${d.job.articleId}`);
          if (order.length === 1) await gate;
        },
        { concurrency: 1 },
      );
      const flood = Array.from({ length: 30 }, () => job({ projectId: "flood" }));
      await bus.publish(flood[0]);
      await waitFor(() => order.length === 1, "the first flood job in hand");
      for (const j of flood.slice(1)) await bus.publish(j);
      const other = job({ projectId: "quiet" });
      await bus.publish(other);
      // Long enough for every adapter to have seen both publishes.
      await sleep(300);
      release();
      await waitFor(() => order.length >= 3, "the next deliveries", 8000);
      expect(order[1], `delivery order ${order.slice(0, 4).join(", ")}`).to.equal(`quiet/${other.articleId}`);
      await waitFor(() => order.length === 31, "the rest of the flood", 15_000);
    });

    it("takes turns between projects that both have a backlog", async () => {
      const order: string[] = [];
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      await consume(
        async (d) => {
          order.push(d.job.projectId);
          if (order.length === 1) await gate;
        },
        { concurrency: 1 },
      );
      await bus.publish(job({ projectId: "a" }));
      await waitFor(() => order.length === 1, "the first job in hand");
      for (let i = 0; i < 9; i++) await bus.publish(job({ projectId: "a" }));
      for (let i = 0; i < 5; i++) await bus.publish(job({ projectId: "b" }));
      await sleep(300);
      release();
      await waitFor(() => order.length === 15, "all jobs", 15_000);
      // While both have jobs waiting they alternate: b's five come within the next ten.
      expect(order.slice(1, 11).filter((p) => p === "b"), order.join(",")).to.have.length(5);
      expect(order.slice(1, 11).join(","), "no project twice in a row while both wait").to.not.match(/(^|,)(a,a|b,b)(,|$)/);
    });

    it("puts a priority job ahead of its project's backlog, but not ahead of another project's turn", async () => {
      const order: string[] = [];
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      const seen: Delivery[] = [];
      await consume(
        async (d) => {
          seen.push(d);
          order.push(`${d.job.projectId}/${d.job.articleId}`);
          if (order.length === 1) await gate;
        },
        { concurrency: 1 },
      );
      const flood = Array.from({ length: 20 }, () => job({ projectId: "flood" }));
      await bus.publish(flood[0]);
      await waitFor(() => order.length === 1, "the first flood job in hand");
      for (const j of flood.slice(1)) await bus.publish(j);
      const other = job({ projectId: "quiet" });
      await bus.publish(other);
      const urgent = [job({ projectId: "flood", priority: true }), job({ projectId: "flood", priority: true })];
      for (const j of urgent) await bus.publish(j);
      await sleep(300);
      release();
      await waitFor(() => order.length === 23, "every job", 15_000);
      // The quiet project's turn first (it was waiting before), then the flood's priority jobs in their order, then its backlog.
      expect(order.slice(1, 4), order.slice(0, 6).join(", ")).to.deep.equal([`quiet/${other.articleId}`, ...urgent.map((j) => `flood/${j.articleId}`)]);
      expect(order.slice(4)).to.deep.equal(flood.slice(1).map((j) => `flood/${j.articleId}`));
      expect(seen.find((d) => d.job.articleId === urgent[0].articleId)!.job).to.deep.equal(urgent[0]);
    });

    it("the preview lane: a project's waiting previews go before its priority jobs' full stages, and those before its backlog", async () => {
      const order: string[] = [];
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      await consume(
        async (d) => {
          order.push(`${d.job.stage ?? (d.job.priority ? "preview" : "plain")}/${d.job.articleId}`);
          if (order.length === 1) await gate;
        },
        { concurrency: 1 },
      );
      const backlog = Array.from({ length: 3 }, () => job({ projectId: "lane" }));
      await bus.publish(backlog[0]);
      await waitFor(() => order.length === 1, "the first job in hand");
      for (const j of backlog.slice(1)) await bus.publish(j);
      // Full stages queued first (their previews were made), then new previews arrive.
      const fulls = [job({ projectId: "lane", priority: true, stage: "full" }), job({ projectId: "lane", priority: true, stage: "full" })];
      for (const j of fulls) await bus.publish(j);
      const previews = [job({ projectId: "lane", priority: true }), job({ projectId: "lane", priority: true })];
      for (const j of previews) await bus.publish(j);
      // The preview and the full stage of one revision are two jobs, not a duplicate.
      await bus.publish({ ...previews[0], stage: "full" });
      await sleep(300);
      release();
      await waitFor(() => order.length === 8, "every job", 15_000);
      expect(order.slice(1)).to.deep.equal([
        ...previews.map((j) => `preview/${j.articleId}`),
        ...fulls.map((j) => `full/${j.articleId}`),
        `full/${previews[0].articleId}`,
        ...backlog.slice(1).map((j) => `plain/${j.articleId}`),
      ]);
    });

    it("drain() waits for the job in hand and takes no new ones", async () => {
      const started: string[] = [];
      let finished = 0;
      const sub = await consume(async (d) => {
        started.push(d.job.articleId);
        await sleep(400);
        finished++;
      });
      await bus.publish(job());
      await waitFor(() => started.length === 1, "the first job");
      await sub.drain();
      expect(finished).to.equal(1);
      await bus.publish(job());
      await sleep(500);
      expect(started).to.have.length(1);
      // Not lost: the next consumer gets it.
      const later: string[] = [];
      await consume(async (d) => void later.push(d.job.articleId));
      await waitFor(() => later.length === 1, "the job left for the next consumer", ACK_WAIT * 4);
    });
  });
}
