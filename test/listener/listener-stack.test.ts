// The listener side on the full stack: player keys from the auth process,
// listening events through JetStream into MongoDB, feeds with GridFS sizes,
// and the forgeries of issue 21 (forgery-scenarios.ts) against that path.
import { expect } from "chai";
import Parser from "rss-parser";
import { TOKENS, startTestStack, withMongo, type TestStack } from "../e2e/stack-harness.js";
import { api, waitFor } from "../support/http.js";
import { requireMongo, requireNats } from "../support/servers.js";
import { forgeryScenarios, metricSum, projectWithArticles, type ForgeryEnv } from "./forgery-scenarios.js";

const FORGERY_TOKENS = { forge: "stack-forge-full-0123456789", flood: "stack-flood-full-0123456789" };
const SEED = JSON.stringify([
  { token: TOKENS.aFull, project: "alpha", scope: "full" },
  { token: TOKENS.aRead, project: "alpha", scope: "read" },
  { token: TOKENS.bFull, project: "beta", scope: "full" },
  { token: FORGERY_TOKENS.forge, project: "forge", scope: "full" },
  { token: FORGERY_TOKENS.flood, project: "flood", scope: "full" },
]);

describe("listener side on the full stack (MongoDB, GridFS, NATS)", function () {
  this.timeout(180_000);
  let t: TestStack;
  let env: ForgeryEnv;

  before(async function () {
    t = await startTestStack({ mongoUrl: await requireMongo(this), natsUrl: await requireNats(this), env: { AUDIO_REPLICAS: "1", SEED_TOKENS: SEED, METRICS_ON_PUBLIC_PORT: "true" } });
  });
  afterEach(function () {
    if (this.currentTest?.state === "failed" && t) console.log(`--- last stack output ---\n${t.logs.tail()}`);
  });
  after(async () => t?.cleanup());

  it("plays back, counts events that travelled over the bus, and feeds the GridFS file sizes", async () => {
    const A = api(t.stack.url, TOKENS.aFull);
    const created = await A("POST", "/api/articles", { title: "Stack story", text: "A story on the full stack. It is short.", url: "https://news.example/stack" });
    const id = created.body.id;
    await waitFor("ready", async () => ((await A("GET", `/api/articles/${id}`)).body?.article?.status === "ready" ? true : undefined), 90_000, 200);
    const key = (await A("GET", "/api/player")).body.publicKey;
    const found = await fetch(`${t.stack.url}/player/v1/article?key=${key}&url=${encodeURIComponent("https://news.example/stack")}`);
    expect(found.status).to.equal(200);

    const beacon = await fetch(`${t.stack.url}/player/v1/events`, {
      method: "POST",
      headers: { "content-type": "text/plain" },
      body: JSON.stringify({ key, events: [{ type: "impression", articleId: id }, { type: "play", articleId: id }, { type: "complete", articleId: id, seconds: 3 }] }),
    });
    expect(beacon.status).to.equal(204);
    const stats = await waitFor("stats", async () => {
      const r = await A("GET", `/api/articles/${id}/stats`);
      return r.body?.total?.completions === 1 ? r.body.total : undefined;
    }, 30_000, 250);
    expect(stats).to.include({ impressions: 1, plays: 1, completions: 1, secondsListened: 3 });
    const stored = await withMongo(t.mongoUrl, t.db, (c) => c.db(t.db).collection("listening_stats").countDocuments({ articleId: id }));
    expect(stored).to.equal(1);
    // The project's top list names the article by its title, read from MongoDB.
    expect((await A("GET", "/api/stats")).body.articles).to.deep.include.members([{ articleId: id, title: "Stack story", ...stats }]);

    const feed = await new Parser().parseURL(`${t.stack.url}/feeds/${key}.xml`);
    expect(feed.items.map((i) => i.guid)).to.deep.equal([id]);
    const audio = await fetch(feed.items[0].enclosure!.url.replace("localhost", "127.0.0.1"), { method: "HEAD" });
    expect(Number(feed.items[0].enclosure!.length)).to.equal(Number(audio.headers.get("content-length")));
  });

  describe("statistics a listener cannot forge", () => {
    before(async () => {
      const url = t.stack.url;
      const [forge, flood] = await Promise.all([projectWithArticles(url, FORGERY_TOKENS.forge), projectWithArticles(url, FORGERY_TOKENS.flood)]);
      env = {
        url,
        forge,
        flood,
        // The gateway's calls to the articles service; the key lookups behind them happen in other processes.
        async upstreamCalls() {
          const text = await (await fetch(`${url}/metrics`)).text();
          return { recordListening: metricSum(text, "rpc_client_duration_seconds_count", { service: "articles.v1.ListenerService", method: "RecordListening" }) };
        },
      };
    });
    forgeryScenarios(() => env, "full stack");
  });

  it("finds an article by its URL however written, and gives the feed the project's language, warnings and artwork", async () => {
    const A = api(t.stack.url, TOKENS.aFull);
    const created = await A("POST", "/api/articles", { title: "Über uns", text: "Eine kurze Geschichte auf dem ganzen Stapel.", url: "https://Bücher.example/stack/über-uns?q=ü", voice: "de-DE-KatjaNeural", lang: "de-DE" });
    expect(created.status, created.text).to.equal(200);
    const id = created.body.id;
    await waitFor("ready", async () => ((await A("GET", `/api/articles/${id}`)).body?.article?.status === "ready" ? true : undefined), 90_000, 200);
    expect((await A("GET", `/api/articles/${id}`)).body.article.url).to.equal("https://xn--bcher-kva.example/stack/%C3%BCber-uns?q=%C3%BC");
    const key = (await A("GET", "/api/player")).body.publicKey;
    for (const form of ["https://bücher.example/stack/über-uns?q=ü", "https://xn--bcher-kva.example/stack/%c3%bcber-uns?q=%C3%BC", "HTTPS://BÜCHER.EXAMPLE/stack/über-uns?q=ü"]) {
      expect((await A("GET", `/api/articles_external_url/${encodeURIComponent(form)}`)).body.article?.id, form).to.equal(id);
      const r = await fetch(`${t.stack.url}/player/v1/article?key=${key}&url=${encodeURIComponent(form)}`);
      expect(r.status, form).to.equal(200);
    }

    const player = (await A("GET", "/api/player")).body;
    expect(player.feedLanguage).to.equal("en-US");
    expect(player.warnings.map((w: { setting: string }) => w.setting)).to.deep.equal(["feed.imageUrl", "feed.ownerEmail"]);
    // A rendered feed is reused for 5 s: wait for the one with the new item, German and newest.
    const xml = await waitFor("the feed with the new item", async () => {
      const text = await (await fetch(`${t.stack.url}/feeds/${key}.xml`)).text();
      return text.includes(`>${id}</guid>`) ? text : undefined;
    }, 20_000, 250);
    const feed = await new Parser({ customFields: { feed: ["language"] } }).parseString(xml);
    expect(feed.items[0].guid).to.equal(id);
    expect((feed as unknown as { language: string }).language).to.equal("en-us");
    const artwork = /<itunes:image href="([^"]+)"/.exec(xml)![1];
    expect(artwork).to.match(/\/feeds\/artwork\.png$/);
    const png = await fetch(`${t.stack.url}/feeds/artwork.png`);
    expect([png.status, png.headers.get("content-type")]).to.deep.equal([200, "image/png"]);
    const head = Buffer.from(await png.arrayBuffer()).subarray(16, 24);
    expect([head.readUInt32BE(0), head.readUInt32BE(4)]).to.deep.equal([1400, 1400]);
  });
});
