// Upgrade without loss: the embedded default started on a data directory the
// NeDB release wrote (test/fixtures/nedb-release, made by its generate.ts on
// that release) finds all of it through the public API and the admin CLI.
// Articles the release left pending (waiting, parsed, processing, retry,
// fallback) are re-queued at start, as after any restart, so through the API
// they are seen on their way to ready; test/unit/nedb-upgrade.test.ts checks
// that the upgraded store holds them exactly as the release left them.
import { expect } from "chai";
import { readFile, readdir, rm, stat } from "node:fs/promises";
import path from "node:path";
import { Writable } from "node:stream";
import { startEmbedded, type Embedded } from "../../launch/embedded.js";
import { runCli } from "../../services/auth/cli.js";
import { api, waitFor } from "../support/http.js";
import { listedNewsIds, NEDB_FIXTURE, nedbDataDir, nedbManifest, type NedbManifest } from "../support/nedb-fixture.js";
import { ROOMY_RATE_LIMITS } from "../support/rate-limits.js";
import { sink } from "../support/sink.js";

const PENDING = ["waiting", "parsed", "processing", "retry", "fallback"];
const ADMIN = "admin-token-for-the-upgrade-0123456789";
const INTERNAL = "internal-token-for-the-upgrade-0123456789";

/** The article as the API shows it, with the audio links relative to the gateway that served them. */
const portable = (a: Record<string, unknown>) => Object.fromEntries(Object.entries(a).map(([k, v]) => [k, typeof v === "string" && /^https?:\/\/127\.0\.0\.1:\d+\/audio\//.test(v) ? new URL(v).pathname : v]));

describe("upgrade from a NeDB data directory (embedded default)", function () {
  this.timeout(180_000);
  let dataDir: string;
  let sys: Embedded;
  let m: NedbManifest;
  let banner = "";
  let limitDecision: Record<string, unknown>;

  before(async () => {
    m = await nedbManifest();
    dataDir = await nedbDataDir();
    sys = await startEmbedded(
      { PORT: "0", HOST: "127.0.0.1", DATA_DIR: dataDir, ADMIN_TOKEN: ADMIN, INTERNAL_TOKEN: INTERNAL, LOG_LEVEL: "warn", ...ROOMY_RATE_LIMITS },
      new Writable({ write: (c, _e, cb) => ((banner += String(c)), cb()) }),
    );
    // Asked at once: the day has turned since the release wrote its data, so the periodic retry of
    // deferred articles (every 30 s) soon admits the one the daily limit held back.
    limitDecision = await cli("articles:decision", "limited", m.ids.limitReached);
  });
  after(async () => {
    await sys?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  const cli = async (...argv: string[]) => {
    let out = "";
    const code = await runCli([...argv, "--json"], { AUTH_URL: sys.services[0].url, ADMIN_TOKEN: ADMIN, ARTICLES_URL: sys.services[1].url, INTERNAL_TOKEN: INTERNAL }, { out: (s) => (out += s), err: () => {} });
    expect(code).to.equal(0);
    return JSON.parse(out);
  };

  const callFor = (name: string) => api(sys.url, name.startsWith("limit") ? m.tokens.limitedFull : name === "noMoney" ? m.tokens.payingFull : m.tokens.newsFull);

  it("finds every article in the status it had, by id, externalId and url, with the same fields; pending ones are finished", async () => {
    for (const [name, expected] of Object.entries(m.articles)) {
      const call = callFor(name);
      const id = m.ids[name];
      const byId = await call("GET", `/api/articles/${id}`);
      expect(byId.status, `${name}: ${byId.text}`).to.equal(200);
      const got = byId.body.article;
      if (PENDING.includes(name)) {
        expect(got.status, name).to.be.oneOf([name, "processing", "retry", "fallback", "ready"]);
        expect(got, name).to.include({ id, title: expected.title, externalId: expected.externalId, url: expected.url });
      } else if ("audio_duration" in expected || "prompt" in expected) {
        // Written through the API: the whole article as the publisher saw it then (with the
        // publication date added since, which that release had none of).
        expect(portable(got), name).to.deep.equal(portable({ ...expected, published: null }));
      } else {
        expect(got, name).to.include({ id, status: expected.status, title: expected.title, externalId: expected.externalId, url: expected.url });
        expect(got.labels, name).to.deep.equal(expected.labels);
      }
      if (got.status === "deleted") continue;
      if (got.externalId != null) {
        const byExternal = await call("GET", `/api/articles_external_id/${encodeURIComponent(got.externalId)}`);
        expect(byExternal.body.article?.id, `${name} by externalId`).to.equal(id);
      }
      if (got.url != null) {
        const byUrl = await call("GET", `/api/articles_external_url/${encodeURIComponent(got.url)}`);
        expect(byUrl.body.article?.id, `${name} by url`).to.equal(id);
      }
    }
    for (const name of PENDING) {
      await waitFor(`${name} article rendered`, async () => ((await callFor(name)("GET", `/api/articles/${m.ids[name]}`)).body.article.status === "ready" ? true : undefined), 120_000, 250);
    }
  });

  it("lists each project's articles with the count it had, and knows the errors and decisions", async () => {
    const news = api(sys.url, m.tokens.newsFull);
    const list = await news("GET", "/api/articles?limit=100");
    const newsIds = listedNewsIds(m);
    expect(list.body.count).to.equal(newsIds.length);
    expect(list.body.articles.map((a: { id: string }) => a.id).sort()).to.deep.equal(newsIds.sort());
    const errored = m.articles.errored as { errors: Array<{ error: string }> };
    expect(errored.errors.length).to.be.greaterThan(1);
    expect(await cli("articles:decision", "news", m.ids.rejected)).to.include({ status: "rejected", rule: "rules.urlDeny" });
    expect(limitDecision).to.include({ status: "limit_reached", rule: "dailyLimit" });
    for (const project of ["news", "limited", "paying"]) {
      const { usage: _now, ...settings } = await cli("settings:get", project);
      const { usage: _then, ...expected } = m.settings[project];
      // Settings this release added show their defaults (audio: when audio is generated).
      expect(settings, project).to.deep.equal({ audio: "immediate", ...expected });
    }
  });

  it("serves the audio files the release rendered, byte for byte", async () => {
    for (const name of ["ready", "revised", "parsedThenReady", "limitedReady"]) {
      const a = (await callFor(name)("GET", `/api/articles/${m.ids[name]}`)).body.article;
      expect(a.audio, name).to.be.a("string");
      for (const link of [a.audio, a.audio_preview]) {
        const res = await fetch(link);
        expect(res.status, link).to.equal(200);
        expect(res.headers.get("content-type")).to.equal("audio/mpeg");
        const key = new URL(link).pathname.replace(/^\/audio\//, "");
        expect(Buffer.from(await res.arrayBuffer()).equals(await readFile(path.join(NEDB_FIXTURE, "data", "audio", key))), link).to.equal(true);
      }
    }
  });

  it("authenticates the release's tokens: full writes, read only reads, the revoked one is refused", async () => {
    const full = api(sys.url, m.tokens.newsFull);
    const read = api(sys.url, m.tokens.newsRead);
    const revoked = api(sys.url, m.tokens.newsRevoked);
    expect((await read("GET", `/api/articles/${m.ids.ready}`)).status).to.equal(200);
    expect((await read("POST", "/api/articles", { title: "Nope", text: "A read token cannot create articles." })).status).to.equal(403);
    expect((await revoked("GET", `/api/articles/${m.ids.ready}`)).status).to.equal(401);
    const created = await full("POST", "/api/articles", { title: "After the upgrade", text: "The first article written after the upgrade.", externalId: "after-upgrade" });
    expect(created.status, created.text).to.equal(200);
    // A taken externalId is still taken: the unique index holds the old documents too.
    const clash = await full("POST", "/api/articles", { title: "Clash", text: "An article with an externalId from the release.", externalId: "cms-1001" });
    expect(clash.status).to.equal(400);
    expect(clash.body.message).to.match(/externalId/);
    // The start found the projects: it printed no first-start banner.
    expect(banner).to.not.match(/demo/i);
  });

  it("keeps pronunciation rules, the player key, listening statistics and the verified oEmbed host", async () => {
    const news = api(sys.url, m.tokens.newsRead);
    expect((await news("GET", "/api/pronunciations")).body.pronunciations).to.deep.equal([{ match: "NATO", say: "nay toe" }, { match: "km", say: "kilometres", lang: "en-US" }]);
    const player = (await news("GET", "/api/player")).body;
    expect(player.publicKey).to.equal(m.publicKey);
    expect(player.oembedHosts.find((h: { host: string }) => h.host === m.oembedHost)).to.include({ status: "verified" });
    const stats = await news("GET", `/api/articles/${m.ids.ready}/stats?from=${m.articleStats.from}&to=${m.articleStats.to}`);
    // As the old release counted them; podcast downloads came later, none were counted then.
    expect(stats.body.total).to.deep.equal({ ...m.articleStats.total, downloads: 0 });
    const project = await news("GET", `/api/stats?from=${m.articleStats.from}&to=${m.articleStats.to}`);
    expect(project.body.total).to.deep.equal({ ...m.projectStats.total, downloads: 0 });
    const anon = api(sys.url);
    expect((await anon("GET", `/player/v1/article?key=${m.publicKey}&externalId=cms-1002`)).body.article.id).to.equal(m.ids.revised);
    const page = `http://${m.oembedHost}/tides`;
    const oembed = await anon("GET", `/oembed?url=${encodeURIComponent(page)}&format=json`);
    expect(oembed.status, oembed.text).to.equal(200);
    expect(oembed.body.html).to.contain(m.ids.parsedThenReady);
    const feed = await fetch(`${sys.url}/feeds/${m.publicKey}.xml`);
    expect(feed.status).to.equal(200);
    const xml = await feed.text();
    for (const name of ["ready", "revised", "parsedThenReady"]) expect(xml, name).to.contain(m.ids[name]);
  });

  it("moved the NeDB files aside, kept the audio files where they were, and a second start changes nothing", async () => {
    const aside = path.join(dataDir, "nedb-before-sqlite");
    expect((await readdir(path.join(aside, "articles"))).sort()).to.deep.equal(["articles.db", "listening-stats.db", "pronunciations.db"]);
    expect((await readdir(path.join(aside, "auth"))).sort()).to.deep.equal(["oembed-claims.db", "projects.db", "tokens.db"]);
    for (const f of ["articles/articles.db", "auth/tokens.db"]) {
      expect(await readFile(path.join(aside, f), "utf8")).to.equal(await readFile(path.join(NEDB_FIXTURE, "data", f), "utf8"));
      await stat(path.join(dataDir, f)).then(
        () => expect.fail(`${f} is still in place`),
        (err) => expect(err.code).to.equal("ENOENT"),
      );
    }
    expect((await stat(path.join(dataDir, "audio", m.ids.ready, "1", "full.mp3"))).size).to.be.greaterThan(0);

    await sys.close();
    sys = await startEmbedded({ PORT: "0", HOST: "127.0.0.1", DATA_DIR: dataDir, ADMIN_TOKEN: ADMIN, INTERNAL_TOKEN: INTERNAL, LOG_LEVEL: "warn", ...ROOMY_RATE_LIMITS }, sink());
    const news = api(sys.url, m.tokens.newsFull);
    expect((await news("GET", "/api/articles_external_id/after-upgrade")).status).to.equal(200);
    const listed = await news("GET", "/api/articles?limit=10");
    expect(listed.body.count, listed.text).to.equal(listedNewsIds(m).length + 1);
    expect((await readdir(path.join(aside, "articles"))).sort()).to.deep.equal(["articles.db", "listening-stats.db", "pronunciations.db"]);
  });
});
