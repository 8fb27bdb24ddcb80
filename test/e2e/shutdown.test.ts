// Graceful shutdown of real processes: SIGTERM to an audio worker in the
// middle of a job (the job finishes, or is aborted at the drain deadline and
// handed back to another worker: never lost), and SIGTERM to the gateway in
// the middle of a request (the request completes). Every process must exit 0
// within its grace period.
import { expect } from "chai";
import http from "node:http";
import { Health, HealthCheckResponse_ServingStatus } from "../../gen/grpc/health/v1/health_pb.js";
import { closeRpcClients, rpcClient } from "../../lib/rpc/client.js";
import { api, waitFor } from "../support/http.js";
import { requireNats } from "../support/servers.js";
import { linesOf, startStack, TOKEN, type Proc, type Stack } from "../observability/stack.js";

const paragraphs = (n: number) =>
  Array.from({ length: n }, (_, i) => `Paragraph ${i + 1} describes the harbour, the ferries and the people who wait for them in the early morning fog. ` +
    `Nobody on the pier seems to mind the cold, and the conversation turns to the weather, the tides and the price of coffee.`).join("\n\n");

describe("graceful shutdown (processes over NATS)", function () {
  // Renders run below the services' priority: beside a busy machine's other work a long one takes minutes.
  this.timeout(600_000);
  let stack: Stack;
  let A: ReturnType<typeof api>;

  before(async function () {
    const natsUrl = await requireNats(this);
    stack = await startStack(natsUrl, { roles: ["auth", "articles", "gateway"] });
    A = api(stack.gatewayUrl, TOKEN);
  });

  after(async () => {
    closeRpcClients();
    await stack?.stop();
  });

  async function create(title: string, text: string): Promise<string> {
    const r = await A("POST", "/api/articles", { title, text });
    expect(r.status, r.text).to.equal(200);
    return r.body.id as string;
  }

  const ready = (id: string) =>
    waitFor(
      `article ${id} ready`,
      async () => {
        const r = await A("GET", `/api/articles/${id}`);
        if (r.body?.article?.status === "errored") throw new Error(`errored: ${r.body.article.error}`);
        return r.body?.article?.status === "ready" ? r.body.article : undefined;
      },
      420_000,
      200,
    );

  const claimed = (p: Proc, id: string) =>
    waitFor(`${id} claimed by the worker`, async () => (p.lines.some((l) => l.msg === "audio job claimed" && l.articleId === id) ? true : undefined), 60_000, 20);

  const jobLines = (p: Proc, id: string) => p.lines.filter((l) => l.articleId === id).map((l) => l.msg);

  it("lets a short job finish before the audio worker exits 0", async function () {
    // The programs render below the worker's priority: beside a busy machine's other work a
    // short job took over 85 s once. The longest grace there is: a limit, not a speed.
    this.timeout(1_200_000);
    const worker = await stack.start("audio", { SHUTDOWN_GRACE_MS: "600000" });
    // Long enough to be mid-render when the signal lands, short enough for the grace period.
    const id = await create("Finish me", paragraphs(6));
    await claimed(worker, id);
    worker.child.kill("SIGTERM");
    const exit = await worker.exited;
    expect(exit.code, worker.tail()).to.equal(0);
    // Finished inside the grace period: not aborted at its end.
    expect(jobLines(worker, id)).not.to.include("render aborted by shutdown; job handed back");
    // The job was still in hand when the signal came, and finished afterwards.
    const at = (msg: string) => worker.lines.findIndex((l) => l.msg === msg && (l.articleId === undefined || l.articleId === id));
    expect(at("SIGTERM received, shutting down")).to.be.greaterThan(at("audio job claimed"));
    expect(at("audio job completed")).to.be.greaterThan(at("SIGTERM received, shutting down"));
    const article = await ready(id);
    expect(article.audio).to.be.a("string").and.match(/\.mp3$/);
  });

  it("refuses to start when the drain would leave less than a second of the grace period", async () => {
    const err = await stack.start("audio", { SHUTDOWN_GRACE_MS: "5000", AUDIO_DRAIN_MS: "4500" }).then(() => undefined, (e: Error) => e);
    expect(err?.message, "start-up refused").to.include("AUDIO_DRAIN_MS");
  });

  it("aborts a long render at the drain deadline, hands the job back, and another worker finishes it", async () => {
    // Renders still running 1 s after SIGTERM are aborted and handed back; closing the rest may
    // take a busy machine far longer than it takes an idle one, and a late exit is not graceful.
    const first = await stack.start("audio", { SHUTDOWN_GRACE_MS: "120000", AUDIO_DRAIN_MS: "1000" });
    const id = await create("Hand me back", paragraphs(40));
    await claimed(first, id);
    const health = rpcClient(Health, `http://127.0.0.1:${portOf(first)}`, { timeoutMs: 1_000 });

    first.child.kill("SIGTERM");
    // Readiness turns false while the worker drains, before the listener goes away.
    const status = await waitFor("NOT_SERVING during the drain", async () => {
      const r = await health.check({ service: "" });
      return r.status === HealthCheckResponse_ServingStatus.NOT_SERVING ? r.status : undefined;
    }, 5_000, 20);
    expect(status).to.equal(HealthCheckResponse_ServingStatus.NOT_SERVING);

    const exit = await first.exited;
    expect(exit.code, first.tail()).to.equal(0);
    expect(jobLines(first, id)).to.include("render aborted by shutdown; job handed back");
    expect(jobLines(first, id)).not.to.include("audio job completed");
    const mid = await A("GET", `/api/articles/${id}`);
    expect(mid.body.article.status, "not failed by the shutdown").to.be.oneOf(["processing", "waiting"]);

    const second = await stack.start("audio", { SHUTDOWN_GRACE_MS: "20000" });
    const article = await ready(id);
    expect(article.audio).to.match(/\.mp3$/);
    // The article can read ready a moment before the worker's log line for it arrives.
    const done = await waitFor("the second worker completed the redelivered job", async () => second.lines.find((l) => l.msg === "audio job completed" && l.articleId === id), 5_000, 20).catch(() => undefined);
    expect(done, `the second worker completed the redelivered job\n${second.tail()}\n--- first worker:\n${first.tail()}`).to.exist;
    // The interrupted delivery did not use up an attempt: a job stopped on its last attempt still runs.
    expect(done!.attempt).to.equal(1);
  });

  it("completes a request in flight when the gateway gets SIGTERM, refuses new connections, and exits 0", async () => {
    const gateway = stack.procs.find((p) => p.role === "gateway")!;
    const body = Buffer.from(JSON.stringify({ title: "Slow upload", text: "Sent in two halves, with a SIGTERM in between." }));
    const half = Math.floor(body.length / 2);

    let signalled!: (at: number) => void;
    const sigterm = new Promise<number>((r) => (signalled = r));
    const response = new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = http.request(
        `${stack.gatewayUrl}/api/articles`,
        { method: "POST", headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json", "content-length": body.length } },
        (res) => {
          let text = "";
          res.on("data", (d) => (text += d));
          res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
        },
      );
      req.on("error", reject);
      req.write(body.subarray(0, half), () => {
        // The request is on the wire; the gateway now gets SIGTERM.
        setTimeout(() => {
          gateway.child.kill("SIGTERM");
          signalled(Date.now());
          setTimeout(() => req.end(body.subarray(half)), 700);
        }, 200);
      });
    });
    await sigterm;

    // Once draining, the listener is closed: nothing new gets in.
    await waitFor("new connections to be refused", async () => {
      try {
        await fetch(`${stack.gatewayUrl}/livez`);
        return undefined;
      } catch {
        return true;
      }
    }, 5_000, 20);

    const res = await response;
    expect(res.status, res.text).to.equal(200);
    expect(JSON.parse(res.text).id).to.be.a("string");
    const exit = await gateway.exited;
    expect(exit.code, gateway.tail()).to.equal(0);
    expect(linesOf(stack, "gateway").some((l) => l.msg === "SIGTERM received, shutting down")).to.equal(true);
  });
});

/** The RPC port a process was started on, from its "listening" log line. */
function portOf(p: Proc): number {
  const line = p.lines.find((l) => typeof l.url === "string" && / listening$/.test(String(l.msg)));
  if (!line) throw new Error(`no listening line from ${p.role}: ${p.tail()}`);
  return Number(new URL(String(line.url)).port);
}
