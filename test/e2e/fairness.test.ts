// Fair audio scheduling end to end (issue 12, point 3): one project floods
// the queue with articles, another project's single article still becomes
// ready while most of the flood is waiting (how long it takes is printed; the
// figure on an idle machine is the bench's, not a test's). Runs on the embedded default (in-process bus), with
// the same launcher on NATS JetStream, and on the full stack (one process per
// service, two audio workers, MongoDB, NATS).
import { expect } from "chai";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { connect } from "nats";
import { startEmbedded, type Embedded } from "../../launch/embedded.js";
import { ROOMY_RATE_LIMITS } from "../support/rate-limits.js";
import { api, waitFor } from "../support/http.js";
import { requireMongo, requireNats } from "../support/servers.js";
import { startTestStack, TOKENS } from "./stack-harness.js";
import { sink } from "../support/sink.js";

const FLOOD_TOKEN = "fair-flood-full-0123456789";
const QUIET_TOKEN = "fair-quiet-full-0123456789";
const SEED = JSON.stringify([
  { token: FLOOD_TOKEN, project: "flood", scope: "full" },
  { token: QUIET_TOKEN, project: "quiet", scope: "full" },
]);
const FLOOD_ARTICLES = 2000;
/** The flood is cut short after this, so the test stays bounded on a slow machine. */
const FLOOD_BUDGET_MS = 90_000;
/** Only a ceiling so a broken queue fails rather than hangs: FIFO took minutes, and would leave no flood article waiting. */
const QUIET_READY_CEILING_MS = 120_000;
const QUIET_TEXT = (
  "The harbour authority opened the new ferry terminal on Monday morning. Passengers can now buy tickets " +
  "at the gate, and the waiting room has space for two hundred people. Services to the islands run every hour."
).padEnd(300, " More details follow.");


interface System {
  url: string;
  floodToken: string;
  quietToken: string;
  stop(): Promise<void>;
}

function fairnessCase(name: string, start: (ctx: Mocha.Context) => Promise<System>) {
  describe(`fair audio scheduling end to end (${name})`, function () {
    this.timeout(300_000);
    let sys: System | undefined;

    before(async function () {
      sys = await start(this);
    });

    after(async () => {
      await sys?.stop();
    });

    it(`readies another project's 300-character article ahead of ${FLOOD_ARTICLES} queued articles of one project`, async () => {
      const flood = api(sys!.url, sys!.floodToken);
      const quiet = api(sys!.url, sys!.quietToken);
      const started = Date.now();
      let created = 0;
      let next = 0;
      // 16 publishers at once, each creating short articles until the count or the time budget is used.
      await Promise.all(
        Array.from({ length: 16 }, async () => {
          while (next < FLOOD_ARTICLES && Date.now() - started < FLOOD_BUDGET_MS) {
            const i = next++;
            const r = await flood("POST", "/api/articles", { title: `Flood ${i}`, text: `Short flood article number ${i} for the queue.` });
            if (r.status === 200) created++;
            else if (r.status === 429) await new Promise((res) => setTimeout(res, 1000 * Number(r.headers.get("retry-after") ?? 1)));
            else throw new Error(`flood create answered ${r.status}: ${r.text}`);
          }
        }),
      );
      const floodMs = Date.now() - started;
      expect(created, "flood articles queued").to.be.at.least(500);

      const t0 = Date.now();
      const r = await quiet("POST", "/api/articles", { title: "Ferry terminal opens", text: QUIET_TEXT });
      expect(r.status).to.equal(200);
      const id = r.body.id;
      await waitFor(`quiet article ${id} ready`, async () => {
        const g = await quiet("GET", `/api/articles/${id}`);
        if (g.body?.article?.status === "errored") throw new Error(`errored: ${g.body.article.error}`);
        return g.body?.article?.status === "ready" ? true : undefined;
      }, QUIET_READY_CEILING_MS, 50);
      const readyMs = Date.now() - t0;

      // The flood is mostly still queued: the quiet article did not merely come after it.
      let floodDone = 0;
      for (let offset = 0; offset < created; offset += 100) {
        const page = await flood("GET", `/api/articles?limit=100&offset=${offset}`);
        floodDone += (page.body?.articles ?? []).filter((a: { status: string }) => a.status === "ready").length;
      }
      // eslint-disable-next-line no-console
      console.log(
        `    [fairness ${name}] ${created} flood articles queued in ${floodMs} ms; ` +
          `the other project's ${QUIET_TEXT.length}-char article was ready ${readyMs} ms after its create, ` +
          `while ${created - floodDone} flood articles were not ready yet`,
      );
      expect(created - floodDone, "flood articles still waiting").to.be.greaterThan(100);
    });
  });
}

/** The embedded launcher; extra env selects the NATS bus. */
async function embedded(extraEnv: Record<string, string> = {}, cleanup: () => Promise<void> = async () => undefined): Promise<System> {
  const dataDir = await mkdtemp(path.join(tmpdir(), "e2e-fair-"));
  let sys: Embedded;
  try {
    // The flood is created as fast as the API takes it: rate limits it cannot reach (the limiter stays in the path).
    sys = await startEmbedded({ PORT: "0", HOST: "127.0.0.1", DATA_DIR: dataDir, SEED_TOKENS: SEED, AUDIO_ENGINE: process.env.AUDIO_ENGINE, ...ROOMY_RATE_LIMITS, ...extraEnv } as never, sink());
  } catch (err) {
    await cleanup();
    await rm(dataDir, { recursive: true, force: true });
    throw err;
  }
  return {
    url: sys.url,
    floodToken: FLOOD_TOKEN,
    quietToken: QUIET_TOKEN,
    async stop() {
      await sys.close();
      await cleanup();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

fairnessCase("embedded default, in-process bus", () => embedded());

fairnessCase("embedded launcher, NATS JetStream bus", async (ctx) => {
  const url = await requireNats(ctx);
  const run = randomBytes(3).toString("hex");
  const names = { NATS_STREAM: `FAIR_${run}`, NATS_SUBJECT: `fair.${run}.jobs`, NATS_DURABLE: `fair_${run}` };
  return embedded({ NATS_URL: url, ...names }, async () => {
    const nc = await connect({ servers: url });
    try {
      await (await nc.jetstreamManager()).streams.delete(names.NATS_STREAM).catch(() => undefined);
    } finally {
      await nc.close();
    }
  });
});

fairnessCase("full stack: MongoDB, NATS, two audio workers", async (ctx) => {
  const mongoUrl = await requireMongo(ctx);
  const natsUrl = await requireNats(ctx);
  // Warnings only: two thousand jobs of info lines would be kept in memory for nothing.
  const t = await startTestStack({ mongoUrl, natsUrl, env: { LOG_LEVEL: "warn" } });
  return { url: t.stack.url, floodToken: TOKENS.aFull, quietToken: TOKENS.bFull, stop: () => t.cleanup() };
});
