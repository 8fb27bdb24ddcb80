// Bounded text work on the full stack (one process per service, MongoDB, NATS,
// two audio workers): one project's adversarial pronunciation rules and an
// article whose text is slow to prepare do not stall an audio worker. Its text
// work runs on a thread with a deadline (500 ms here, against about 3 s of work;
// at 100 ms, the shortest allowed, the other project's two-sentence article missed it
// in CI on a machine loaded 12 times over, on a thread just started after the megabyte's): the megabyte ends errored once, and the other
// project's article is rendered while health checks keep answering. (Articles
// of "a a a …" render: text-bounds.test.ts on the embedded default.)
import { expect } from "chai";
import { expectNoStall } from "../support/bystander.js";
import { api, waitFor } from "../support/http.js";
import { ADVERSARIAL_RULES, SLOW_TO_PREPARE } from "../support/adversarial-text.js";
import { requireMongo, requireNats } from "../support/servers.js";
import { TOKENS, startTestStack, type TestStack } from "./stack-harness.js";

type Call = ReturnType<typeof api>;

describe("bounded text work (full stack)", function () {
  this.timeout(240_000);
  let t: TestStack;
  let A: Call;
  let B: Call;

  before(async function () {
    const mongoUrl = await requireMongo(this);
    const natsUrl = await requireNats(this);
    t = await startTestStack({ mongoUrl, natsUrl, env: { AUDIO_TEXT_TIMEOUT_MS: "500" } });
    A = api(t.stack.url, TOKENS.aFull);
    B = api(t.stack.url, TOKENS.bFull);
  });
  afterEach(function () {
    if (this.currentTest?.state === "failed" && t) console.log(`--- last stack output ---\n${t.logs.tail()}`);
  });
  after(async () => {
    await t?.cleanup();
  });

  const ended = (call: Call, id: string, timeoutMs: number) =>
    waitFor(`article ${id} ended`, async () => {
      const a = (await call("GET", `/api/articles/${id}`)).body?.article;
      return ["ready", "errored", "rejected"].includes(a?.status) ? a : undefined;
    }, timeoutMs, 100);

  it("the adversarial rules do not stall an audio worker: another project's article renders and health answers", async () => {
    const put = await A("PUT", "/api/pronunciations", ADVERSARIAL_RULES);
    expect(put.status, JSON.stringify(put.body)).to.equal(200);

    // Health is asked all along: every audio worker's event loop must keep answering. First for
    // two seconds with nothing else going on: the reference its answers under load are held against.
    const askHealth = () => {
      const health: number[] = [];
      let asking = true;
      const asker = (async () => {
        while (asking) {
          const s = performance.now();
          const h = await fetch(`${t.stack.url}/healthz`);
          health.push(performance.now() - s);
          expect(h.status).to.equal(200);
          await new Promise((r) => setTimeout(r, 20));
        }
      })();
      return async () => {
        asking = false;
        await asker;
        return health;
      };
    };
    const stopAlone = askHealth();
    await new Promise((r) => setTimeout(r, 2_000));
    const alone = Math.max(...(await stopAlone()));
    const stopAsking = askHealth();

    const started = performance.now();
    const big = await A("POST", "/api/articles", { title: "a a a", text: SLOW_TO_PREPARE });
    const other = await B("POST", "/api/articles", { title: "Opening hours", text: "The library opens a new reading room on Monday. Visitors can borrow books for four weeks." });
    for (const c of [big, other]) expect(c.status).to.equal(200);

    const [bigEnd, otherEnd] = await Promise.all([big, other].map((c, i) => ended(i === 1 ? B : A, c.body.id, 120_000).then((a) => ({ ...a, after: (performance.now() - started) / 1000 }))));
    const health = await stopAsking();
    const worst = Math.max(...health);
    console.log(
      `      full stack: 1 MB ${bigEnd.status} after ${bigEnd.after.toFixed(1)} s, other project's article ${otherEnd.status} after ${otherEnd.after.toFixed(1)} s; /healthz ${health.length} answers, worst ${worst.toFixed(0)} ms (alone ${alone.toFixed(0)} ms)`,
    );

    expect(bigEnd.status).to.equal("errored");
    expect(bigEnd.error).to.match(/^Text preparation took longer than 500 ms/);
    expect(bigEnd.errors).to.have.length(1);
    expect(otherEnd.status).to.equal("ready");
    // Before, a worker spent minutes inside one regular expression and answered nothing meanwhile.
    expectNoStall("worst /healthz while the megabyte is prepared", worst, alone);

    // Failed once, by the worker that claimed it: no second attempt.
    const failures = t.logs.records({ msg: "audio job failed permanently" }).filter((r) => r.articleId === big.body.id);
    expect(failures).to.have.length(1);
  });
});
