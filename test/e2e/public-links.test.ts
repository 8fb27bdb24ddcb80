// Absolute links in public answers (player lookups and snippets, embed
// pages, feeds, oEmbed) and audio URLs in article responses come from
// PUBLIC_BASE_URL when it is set, whatever Host or X-Forwarded-* a request
// sends. Without it they follow the request's origin, and the answer says
// Vary: Host; X-Forwarded-Proto/-Host count only with TRUST_PROXY. On the
// embedded default and on the full stack (gateway/main.ts and the articles
// service read the variables there).
import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import http from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "chai";
import { startGateway } from "../../gateway/app.js";
import { startEmbedded, type Embedded } from "../../launch/embedded.js";
import { createFsBlobStore } from "../../lib/blob/fs.js";
import { ConfigError } from "../../lib/config.js";
import { logger } from "../../lib/log.js";
import type { RunningService } from "../../lib/service.js";
import { claimVerifiedHost, OwnerSite } from "../listener/oembed-verify-scenarios.js";
import { api, waitFor } from "../support/http.js";
import { requireMongo, requireNats } from "../support/servers.js";
import { startTestStack, TOKENS, type TestStack } from "./stack-harness.js";
import { sink } from "../support/sink.js";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const PUBLIC = "https://listen.example.org";
const ATTACKER = "attacker.example";
/** oEmbed answers only for a verified host: the systems may reach the article's site, a loopback server. */
const SITE_ENV = { FETCH_ALLOW_PRIVATE: "127.0.0.1" };

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
}

/** A GET with headers fetch() would not send as given (Host). */
function get(base: string, p: string, headers: Record<string, string> = {}): Promise<Answer> {
  return send(base, "GET", p, headers);
}

function send(base: string, method: string, p: string, headers: Record<string, string> = {}, body?: unknown): Promise<Answer> {
  const u = new URL(base);
  const payload = body === undefined ? undefined : JSON.stringify(body);
  const sent = payload === undefined ? headers : { ...headers, "content-type": "application/json", "content-length": String(Buffer.byteLength(payload)) };
  return new Promise((resolve, reject) => {
    const req = http.request({ host: u.hostname, port: u.port, path: p, method, headers: sent, agent: false }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (text += c));
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, text }));
    });
    req.on("error", reject);
    req.end(payload);
  });
}

const varies = (a: Answer) => String(a.headers.vary ?? "").split(/\s*,\s*/).map((v) => v.toLowerCase());

interface Fixture {
  url: string;
  token: string;
  key: string;
  id: string;
  /** The article's page, on the site verified for oEmbed. */
  page: string;
  site: OwnerSite;
}

/** A ready article with a URL on a host verified for oEmbed, and the project's player key. */
async function prepare(url: string, token: string): Promise<Fixture> {
  const A = api(url, token);
  const site = new OwnerSite();
  await site.start();
  const page = `http://${site.host}/links/1`;
  const created = await A("POST", "/api/articles", { title: "Links", text: "Where do the links point? Here.", url: page });
  expect(created.status, created.text).to.equal(200);
  const id = created.body.id as string;
  await waitFor(`article ${id} ready`, async () => ((await A("GET", `/api/articles/${id}`)).body?.article?.status === "ready" ? true : undefined), 120_000, 200);
  const p = await claimVerifiedHost(A, site);
  return { url, token, key: p.body.publicKey, id, page, site };
}

/** Every answer that carries absolute links (oEmbed apart: oembed()), as a client with the given headers gets it. */
async function answers(f: Fixture, headers: Record<string, string>): Promise<Record<string, Answer>> {
  const auth = { ...headers, authorization: `Bearer ${f.token}` };
  const out: Record<string, Answer> = {
    "api player": await get(f.url, "/api/player", auth),
    "api article": await get(f.url, `/api/articles/${f.id}`, auth),
    "api list": await get(f.url, "/api/articles?limit=10", auth),
    "player lookup": await get(f.url, `/player/v1/article?key=${f.key}&id=${f.id}`, headers),
    "embed page": await get(f.url, `/player/v1/embed/${f.key}/${f.id}`, headers),
    feed: await get(f.url, `/feeds/${f.key}.xml`, headers),
  };
  for (const [what, a] of Object.entries(out)) expect(a.status, `${what}: ${a.text.slice(0, 300)}`).to.equal(200);
  return out;
}

/** The absolute http(s) links in an answer, whatever its format, but for the publisher's site (the page, its oEmbed verification file). */
const links = (a: Answer, f: Fixture) =>
  [...a.text.replace(/\\\//g, "/").matchAll(/https?:\/\/[^\s"'<>&]+/g)].map((m) => m[0]).filter((l) => new URL(l).host !== f.site.host && !/^https?:\/\/(www\.w3\.org|www\.itunes\.com|podcastindex\.org)\b/.test(l));

/** Every link of every answer starts with `base`, the audio URLs included. */
function expectLinksUnder(f: Fixture, all: Record<string, Answer>, base: string): void {
  for (const [what, a] of Object.entries(all)) {
    const found = links(a, f);
    expect(found.length, `${what} has links`).to.be.greaterThan(0);
    for (const l of found) expect(l.startsWith(`${base}/`) || l === base, `${what}: ${l}`).to.equal(true);
  }
  const audio = JSON.parse(all["api article"].text).article.audio as string;
  expect(audio).to.match(new RegExp(`^${base.replace(/[.:/]/g, "\\$&")}/audio/.+\\.mp3$`));
  expect(JSON.parse(all["api list"].text).articles[0].audio).to.equal(audio);
  expect(JSON.parse(all["player lookup"].text).article.audio).to.equal(audio);
  // The enclosure is the same file, with what counts its requests as podcast downloads (feed key, duration).
  expect(all.feed.text).to.match(new RegExp(`url="${audio.replace(/[.:/?]/g, "\\$&")}\\?feed=pk_[\\w-]+&amp;d=\\d+"`));
  expect(all["embed page"].text).to.include(`<script src="${base}/player/v1/player.js?v=`);
}

/** The oEmbed answer for the fixture's page and the iframe URL in it. */
async function oembed(f: Fixture, headers: Record<string, string>): Promise<{ answer: Answer; src: string }> {
  const answer = await get(f.url, `/oembed?url=${encodeURIComponent(f.page)}&format=json`, headers);
  expect(answer.status, answer.text).to.equal(200);
  return { answer, src: /src="([^"]+)"/.exec(JSON.parse(answer.text).html)![1] };
}

function configuredScenario(target: () => Fixture) {
  it("never hands out links to the Host or X-Forwarded-Host a request names", async () => {
    const all = await answers(target(), { Host: ATTACKER, "X-Forwarded-Host": "forwarded.example", "X-Forwarded-Proto": "http" });
    for (const [what, a] of Object.entries(all)) expect(a.text, what).to.not.include(ATTACKER).and.not.include("forwarded.example");
    expectLinksUnder(target(), all, PUBLIC);
  });

  it("answers the same links to every Host, so they need no Vary: Host", async () => {
    const one = await answers(target(), { Host: ATTACKER });
    const two = await answers(target(), { Host: "other.example" });
    for (const what of Object.keys(one)) {
      expect(varies(one[what]), what).to.not.include("host");
      expect(two[what].text, what).to.equal(one[what].text);
    }
  });

  it("points oEmbed's iframe at PUBLIC_BASE_URL whatever the Host", async () => {
    const { answer, src } = await oembed(target(), { Host: ATTACKER, "X-Forwarded-Host": "forwarded.example" });
    expect(src.startsWith(`${PUBLIC}/player/v1/embed/${target().key}/`), src).to.equal(true);
    expect(answer.text).to.not.include(ATTACKER).and.not.include("forwarded.example");
    expect(varies(answer)).to.not.include("host");
  });
}

describe("public links from PUBLIC_BASE_URL (embedded default)", function () {
  this.timeout(180_000);
  let dir: string;
  let sys: Embedded;
  let f: Fixture;
  const token = "links-config-full-0123456789";

  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "links-config-"));
    sys = await startEmbedded(
      { PORT: "0", HOST: "127.0.0.1", DATA_DIR: dir, SEED_TOKENS: JSON.stringify([{ token, project: "linked", scope: "full" }]), AUDIO_ENGINE: process.env.AUDIO_ENGINE, PUBLIC_BASE_URL: `${PUBLIC}/`, ...SITE_ENV },
      sink(),
    );
    f = await prepare(sys.url, token);
  });
  after(async () => {
    await sys?.close();
    await f?.site.stop();
    await rm(dir, { recursive: true, force: true });
  });

  configuredScenario(() => f);

  it("refuses a PUBLIC_BASE_URL or AUDIO_BASE_URL links cannot be built on, and a TRUST_PROXY that is no boolean, naming the variable", async () => {
    for (const [name, value] of [
      ["PUBLIC_BASE_URL", "ftp://listen.example.org"],
      ["PUBLIC_BASE_URL", "https://listen.example.org/?x=1"],
      ["AUDIO_BASE_URL", "https://cdn.example.org/audio#top"],
      ["TRUST_PROXY", "maybe"],
    ]) {
      const err = await startEmbedded({ PORT: "0", HOST: "127.0.0.1", DATA_DIR: dir, [name]: value }, sink()).then(
        (s) => s.close().then(() => null),
        (e: unknown) => e,
      );
      expect(err, `${name}=${value}`).to.be.instanceOf(ConfigError);
      expect((err as Error).message).to.include(name);
    }
  });
});

describe("public links without PUBLIC_BASE_URL (embedded default)", function () {
  this.timeout(180_000);
  let dir: string;
  let sys: Embedded;
  let f: Fixture;
  let proxied: RunningService;
  const token = "links-request-full-0123456789";

  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "links-request-"));
    sys = await startEmbedded({ PORT: "0", HOST: "127.0.0.1", DATA_DIR: dir, SEED_TOKENS: JSON.stringify([{ token, project: "unlinked", scope: "full" }]), AUDIO_ENGINE: process.env.AUDIO_ENGINE, ...SITE_ENV }, sink());
    f = await prepare(sys.url, token);
    // A second gateway in front of the same services, as TRUST_PROXY=true configures it.
    const [auth, articles] = sys.services;
    proxied = await startGateway({ articlesUrl: articles.url, authUrl: auth.url, healthTargets: [], blobs: createFsBlobStore(path.join(dir, "audio")), log: logger("gateway-proxied"), trustProxy: true });
  });
  after(async () => {
    await proxied?.close();
    await sys?.close();
    await f?.site.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it("builds every link, audio URLs included, on the request's origin and answers with Vary: Host", async () => {
    const all = await answers(f, { Host: ATTACKER });
    expectLinksUnder(f, all, `http://${ATTACKER}`);
    for (const [what, a] of Object.entries(all)) expect(varies(a), what).to.include("host");
    // The embed page is cacheable by shared caches: only together with Vary.
    expect(all["embed page"].headers["cache-control"]).to.match(/public/);
    // Audio of the request's origin is served there.
    const audio = JSON.parse((await get(f.url, `/api/articles/${f.id}`, { authorization: `Bearer ${f.token}` })).text).article.audio as string;
    expect(audio.startsWith(`${f.url}/audio/`), audio).to.equal(true);
    expect((await fetch(audio)).status).to.equal(200);
  });

  it("points oEmbed's iframe at the request's origin and answers with Vary: Host", async () => {
    const { answer, src } = await oembed(f, { Host: ATTACKER, "X-Forwarded-Proto": "https" });
    expect(src.startsWith(`http://${ATTACKER}/player/v1/embed/${f.key}/`), src).to.equal(true);
    expect(varies(answer)).to.include("host");
  });

  it("ignores X-Forwarded-Proto and X-Forwarded-Host without TRUST_PROXY", async () => {
    const all = await answers(f, { Host: "direct.example:8080", "X-Forwarded-Proto": "https", "X-Forwarded-Host": "forwarded.example" });
    expectLinksUnder(f, all, "http://direct.example:8080");
    for (const a of Object.values(all)) expect(a.text).to.not.include("forwarded.example");
  });

  it("honours X-Forwarded-Proto and X-Forwarded-Host with TRUST_PROXY, and varies by them", async () => {
    const g: Fixture = { ...f, url: proxied.url };
    const all = await answers(g, { Host: "gateway.internal:8080", "X-Forwarded-Proto": "https", "X-Forwarded-Host": "public.example" });
    expectLinksUnder(g, all, "https://public.example");
    for (const [what, a] of Object.entries(all)) expect(varies(a), what).to.include.members(["host", "x-forwarded-host", "x-forwarded-proto"]);
    const bad = await get(g.url, `/player/v1/embed/${g.key}/${g.id}`, { "X-Forwarded-Proto": "javascript" });
    expect(bad.status).to.equal(400);
    expect(JSON.parse(bad.text).message).to.match(/^X-Forwarded-Proto/);
  });

  it("refuses a Host that could not be a link's authority, without echoing it", async () => {
    for (const host of ['evil.example"><script>alert(1)</script>', "evil.example/path", "evil example"]) {
      const r = await get(f.url, `/player/v1/embed/${f.key}/${f.id}`, { Host: host });
      expect(r.status, host).to.equal(400);
      expect(r.text, host).to.not.include("<script>");
    }
  });

  it("refuses it with 400 on every operation whose answer carries links, changing nothing, as the OpenAPI document says", async () => {
    const doc = JSON.parse((await get(f.url, "/api/openapi.json")).text);
    const before = JSON.parse((await get(f.url, "/api/player", { authorization: `Bearer ${f.token}` })).text);
    const auth = { authorization: `Bearer ${f.token}`, Host: "evil.example/path" };
    const anon = { Host: "evil.example/path" };
    const ops: Array<[string, string, string, Record<string, string>, unknown?]> = [
      ["get", "/api/articles", "/api/articles", auth],
      ["get", "/api/articles/{articleId}", `/api/articles/${f.id}`, auth],
      ["get", "/api/articles_external_id/{externalId}", "/api/articles_external_id/none", auth],
      ["get", "/api/articles_external_url/{externalUrl}", `/api/articles_external_url/${encodeURIComponent(f.page)}`, auth],
      ["get", "/api/player", "/api/player", auth],
      ["put", "/api/player", "/api/player", auth, { oembed: { enabled: false, hosts: [] } }],
      ["post", "/api/player/verify", "/api/player/verify", auth],
      ["post", "/api/player/rotate", "/api/player/rotate", auth],
      ["get", "/player/v1/article", `/player/v1/article?key=${f.key}&id=${f.id}`, anon],
      ["get", "/player/v1/embed/{key}/{articleId}", `/player/v1/embed/${f.key}/${f.id}`, anon],
      ["get", "/feeds/{publicKey}.xml", `/feeds/${f.key}.xml`, anon],
      ["get", "/oembed", `/oembed?url=${encodeURIComponent(f.page)}&format=json`, anon],
    ];
    for (const [method, template, p, headers, body] of ops) {
      const r = await send(f.url, method.toUpperCase(), p, headers, body);
      expect(r.status, `${method} ${p}: ${r.text}`).to.equal(400);
      expect(JSON.parse(r.text).message, `${method} ${p}`).to.match(/^Host: /);
      expect(doc.paths[template]?.[method]?.responses, `${method} ${template} documents 400`).to.have.property("400");
    }
    const after = JSON.parse((await get(f.url, "/api/player", { authorization: `Bearer ${f.token}` })).text);
    expect(after.publicKey).to.equal(before.publicKey);
    expect(after.settings).to.deep.equal(before.settings);
  });
});

describe("public links on the full stack", function () {
  this.timeout(240_000);
  let t: TestStack;
  let f: Fixture;

  before(async function () {
    const mongoUrl = await requireMongo(this);
    const natsUrl = await requireNats(this);
    t = await startTestStack({ mongoUrl, natsUrl, env: { PUBLIC_BASE_URL: PUBLIC, NODE_ENV: "production", ...SITE_ENV } });
    f = await prepare(t.stack.url, TOKENS.aFull);
  });
  afterEach(function () {
    if (this.currentTest?.state === "failed" && t) console.log(`--- last stack output ---\n${t.logs.tail()}`);
  });
  after(async () => {
    await t?.cleanup();
    await f?.site.stop();
  });

  configuredScenario(() => f);

  it("does not warn about PUBLIC_BASE_URL when it is set", () => {
    expect(t.logs.records({ proc: "gateway" }).filter((r) => /PUBLIC_BASE_URL/.test(String(r.msg)))).to.deep.equal([]);
  });
});

describe("the gateway process warns at start-up when PUBLIC_BASE_URL is missing in production", function () {
  this.timeout(60_000);

  /** Starts gateway/main.ts until it listens and returns what it logged. */
  async function startOutput(env: Record<string, string>): Promise<string> {
    const dir = await mkdtemp(path.join(tmpdir(), "links-main-"));
    const child = spawn(process.execPath, ["--import", "tsx", path.join(ROOT, "gateway/main.ts")], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, PORT: "0", HOST: "127.0.0.1", ARTICLES_URL: "http://127.0.0.1:9", RATE_LIMIT_ENABLED: "false", DATA_DIR: dir, LOG_LEVEL: "info", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (c) => (out += String(c)));
    child.stderr.on("data", (c) => (out += String(c)));
    try {
      await waitFor("gateway listening", async () => (out.includes("gateway listening") ? true : child.exitCode !== null ? Promise.reject(new Error(out)) : undefined), 45_000, 50);
      return out;
    } finally {
      child.kill("SIGTERM");
      await new Promise((r) => (child.exitCode !== null ? r(null) : child.once("exit", r)));
      await rm(dir, { recursive: true, force: true });
    }
  }

  const warnings = (out: string) => out.split("\n").filter((l) => l.includes('"level":40') && l.includes("PUBLIC_BASE_URL"));

  it("warns with NODE_ENV=production and no PUBLIC_BASE_URL, and not otherwise", async () => {
    expect(warnings(await startOutput({ NODE_ENV: "production" }))).to.have.length(1);
    expect(warnings(await startOutput({ NODE_ENV: "production", PUBLIC_BASE_URL: PUBLIC }))).to.deep.equal([]);
    expect(warnings(await startOutput({}))).to.deep.equal([]);
  });
});
