// What a German publisher and a typed client meet on day one, end to end on
// the embedded default: article URLs written as IRIs (stored normalised and
// found however they are written: REST, the player, oEmbed), null for an
// optional field, and a podcast feed with its own language, warnings about
// what Apple Podcasts and Spotify need, and artwork even when none was set.
import { inflateSync } from "node:zlib";
import { execFile } from "node:child_process";
import { lookup } from "node:dns/promises";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { expect } from "chai";
import { XMLParser } from "fast-xml-parser";
import Parser from "rss-parser";
import { AuthService } from "../../gen/auth/v1/auth_pb.js";
import { startEmbedded, type Embedded } from "../../launch/embedded.js";
import { rpcClient } from "../../lib/rpc/client.js";
import { claimVerifiedHost, OwnerSite } from "../listener/oembed-verify-scenarios.js";
import { api, waitFor } from "../support/http.js";
import { ROOMY_RATE_LIMITS } from "../support/rate-limits.js";
import { sink } from "../support/sink.js";

const ADMIN = "day-one-admin-token-0123456789";
const TOKENS = { full: "day-one-full-0123456789", other: "day-one-other-0123456789" };
const SEED = JSON.stringify([
  { token: TOKENS.full, project: "zeitung", scope: "full" },
  { token: TOKENS.other, project: "andere", scope: "full" },
]);

// The three the issue found refused, and a host in capitals.
const IRIS: Array<[string, string]> = [
  ["https://example.com/news/über-uns", "https://example.com/news/%C3%BCber-uns"],
  ["https://bücher.example/x", "https://xn--bcher-kva.example/x"],
  ["https://example.com/suche?q=ü", "https://example.com/suche?q=%C3%BC"],
  ["HTTPS://EXAMPLE.COM/x", "https://example.com/x"],
];

/** Width, height, bit depth and colour type from a PNG's IHDR, after checking every chunk's CRC; and the inflated image data's length. */
function decodePng(png: Buffer): { width: number; height: number; depth: number; colourType: number; rawBytes: number } {
  expect([...png.subarray(0, 8)]).to.deep.equal([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  let at = 8;
  const idat: Buffer[] = [];
  let ihdr: Buffer | undefined;
  let ended = false;
  // CRC-32 as PNG defines it, written out here so the check does not lean on the encoder's own.
  const crc = (b: Buffer) => {
    let c = ~0;
    for (const byte of b) {
      c ^= byte;
      for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0xedb88320 : c >>> 1;
    }
    return ~c >>> 0;
  };
  while (at < png.length) {
    const len = png.readUInt32BE(at);
    const type = png.toString("latin1", at + 4, at + 8);
    const data = png.subarray(at + 8, at + 8 + len);
    expect(png.readUInt32BE(at + 8 + len), `${type} CRC`).to.equal(crc(png.subarray(at + 4, at + 8 + len)));
    if (type === "IHDR") ihdr = data;
    if (type === "IDAT") idat.push(data);
    if (type === "IEND") ended = true;
    at += 12 + len;
  }
  expect(ended, "IEND").to.equal(true);
  expect(ihdr, "IHDR").to.not.equal(undefined);
  return { width: ihdr!.readUInt32BE(0), height: ihdr!.readUInt32BE(4), depth: ihdr![8], colourType: ihdr![9], rawBytes: inflateSync(Buffer.concat(idat)).length };
}

describe("day one: URLs as people write them, null fields, and a podcast feed the directories take (embedded default)", function () {
  this.timeout(180_000);
  let dataDir: string;
  let sys: Embedded;
  let A: ReturnType<typeof api>;
  let B: ReturnType<typeof api>;
  let anon: ReturnType<typeof api>;
  let admin: ReturnType<typeof rpcClient<typeof AuthService>>;
  let key: string;
  const site = new OwnerSite();

  async function ready(id: string) {
    return waitFor(`article ${id} ready`, async () => {
      const r = await A("GET", `/api/articles/${id}`);
      if (r.body?.article?.status === "errored") throw new Error(`errored: ${r.body.article.error}`);
      return r.body?.article?.status === "ready" ? r.body.article : undefined;
    }, 120_000, 200);
  }

  /** The channel of the feed as rendered now; waits out the 5 s a rendered feed is reused when `until` is given. */
  async function channel(until?: (ch: any) => boolean) {
    return waitFor("the feed", async () => {
      const res = await fetch(`${sys.url}/feeds/${key}.xml`);
      expect(res.status).to.equal(200);
      const xml = await res.text();
      await new Parser().parseString(xml);
      const ch = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: "" }).parse(xml).rss.channel;
      return !until || until(ch) ? ch : undefined;
    }, 20_000, 250);
  }

  before(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), "e2e-day-one-"));
    // The publisher's site, verified for oEmbed: reached by a host name (localhost) so its spelling can vary.
    await site.start((await lookup("localhost")).address);
    sys = await startEmbedded(
      { PORT: "0", HOST: "127.0.0.1", DATA_DIR: dataDir, SEED_TOKENS: SEED, ADMIN_TOKEN: ADMIN, AUDIO_ENGINE: process.env.AUDIO_ENGINE, FETCH_ALLOW_PRIVATE: "localhost", ...ROOMY_RATE_LIMITS },
      sink(),
    );
    A = api(sys.url, TOKENS.full);
    B = api(sys.url, TOKENS.other);
    anon = api(sys.url);
    admin = rpcClient(AuthService, sys.services.find((s) => s.name === "auth")!.url, { token: ADMIN });
    key = (await A("GET", "/api/player")).body.publicKey;
  });

  after(async () => {
    await sys?.close();
    await site.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  describe("article URLs", () => {
    const ids: Record<string, string> = {};

    it("accepts IRIs and a host in capitals, and answers the URL normalised", async () => {
      for (const [given, normal] of IRIS) {
        const r = await A("POST", "/api/articles", { title: `Zu ${given}`, text: "Ein kurzer Text.", url: given });
        expect(r.status, `${given}: ${r.text}`).to.equal(200);
        ids[given] = r.body.id;
        expect((await A("GET", `/api/articles/${r.body.id}`)).body.article.url).to.equal(normal);
        const listed = (await A("GET", "/api/articles?limit=100")).body.articles.find((a: { id: string }) => a.id === r.body.id);
        expect(listed.url).to.equal(normal);
      }
      // An update takes an IRI the same way.
      const id = ids["HTTPS://EXAMPLE.COM/x"];
      const put = await A("PUT", `/api/articles/${id}`, { title: "Zu x", text: "Ein kurzer Text.", url: "https://Example.com/straße?ß=1" });
      expect(put.status, put.text).to.equal(200);
      expect((await A("GET", `/api/articles/${id}`)).body.article.url).to.equal("https://example.com/stra%C3%9Fe?%C3%9F=1");
      await A("PUT", `/api/articles/${id}`, { title: "Zu x", text: "Ein kurzer Text.", url: "HTTPS://EXAMPLE.COM/x" });
    });

    it("finds each by its Unicode form, its percent-encoded form and a differently-cased host (GET /api/articles_external_url)", async () => {
      const spellings: Record<string, string[]> = {
        "https://example.com/news/über-uns": ["https://example.com/news/über-uns", "https://example.com/news/%C3%BCber-uns", "https://example.com/news/%c3%bcber-uns", "HTTPS://Example.COM/news/über-uns"],
        "https://bücher.example/x": ["https://bücher.example/x", "https://xn--bcher-kva.example/x", "https://BÜCHER.example/x", "https://XN--BCHER-KVA.EXAMPLE:443/x"],
        "https://example.com/suche?q=ü": ["https://example.com/suche?q=ü", "https://example.com/suche?q=%C3%BC", "http" + "s://EXAMPLE.com/suche?q=%c3%bc"],
        "HTTPS://EXAMPLE.COM/x": ["HTTPS://EXAMPLE.COM/x", "https://example.com/x", "https://Example.Com/x"],
      };
      for (const [given, forms] of Object.entries(spellings)) {
        for (const form of forms) {
          const r = await A("GET", `/api/articles_external_url/${encodeURIComponent(form)}`);
          expect(r.status, `${form}: ${r.text}`).to.equal(200);
          expect(r.body.article.id, form).to.equal(ids[given]);
        }
      }
      // Unencoded slashes, as some clients send them.
      expect((await A("GET", "/api/articles_external_url/https://example.com/news/%C3%BCber-uns")).body.article?.id).to.equal(ids["https://example.com/news/über-uns"]);
      expect((await A("GET", `/api/articles_external_url/${encodeURIComponent("https://example.com/news/uber-uns")}`)).status).to.equal(404);
      // Another project's article is no closer for being spelt differently.
      expect((await B("GET", `/api/articles_external_url/${encodeURIComponent("https://bücher.example/x")}`)).status).to.equal(404);
    });

    it("still refuses what is not an absolute http(s) URL, with a 400 naming url", async () => {
      for (const url of ["/news/über-uns", "ftp://bücher.example/x", "https://bü cher.example/x", "https:bücher.example/x", "bücher.example/x"]) {
        const r = await A("POST", "/api/articles", { title: "t", text: "t", url });
        expect(r.status, url).to.equal(400);
        expect(r.body.message, url).to.equal("url: must be an absolute http(s) URL");
      }
    });

    it("finds a ready article by the player's lookup and by oEmbed however its URL is written", async () => {
      const created = await A("POST", "/api/articles", { title: "Über uns", text: "Wir sind eine kleine Zeitung. Das ist unsere Geschichte.", url: "https://Bücher.example/lokales/über-uns" });
      expect(created.status).to.equal(200);
      await ready(created.body.id);
      const forms = ["https://bücher.example/lokales/über-uns", "https://xn--bcher-kva.example/lokales/%C3%BCber-uns", "HTTPS://BÜCHER.EXAMPLE/lokales/%c3%bcber-uns"];
      for (const form of forms) {
        const r = await anon("GET", `/player/v1/article?key=${key}&url=${encodeURIComponent(form)}`);
        expect(r.status, `${form}: ${r.text}`).to.equal(200);
        expect(r.body.article).to.include({ id: created.body.id, url: "https://xn--bcher-kva.example/lokales/%C3%BCber-uns" });
      }

      // oEmbed answers only for a host the project verified, so the page lives on a site this test serves.
      const port = site.port;
      const page = await A("POST", "/api/articles", { title: "Über die Stadt", text: "Eine kleine Stadt. Ihre Geschichte.", url: `HTTP://LocalHost:${port}/lokales/über-uns` });
      expect(page.status).to.equal(200);
      await ready(page.body.id);
      await claimVerifiedHost(A, site, `localhost:${port}`);
      const pageForms = [`http://localhost:${port}/lokales/über-uns`, `http://localhost:${port}/lokales/%C3%BCber-uns`, `HTTP://LOCALHOST:${port}/lokales/%c3%bcber-uns`];
      for (const form of pageForms) {
        const r = await anon("GET", `/oembed?url=${encodeURIComponent(form)}&format=json`);
        expect(r.status, `${form}: ${r.text}`).to.equal(200);
        expect(r.body.html).to.include(`/player/v1/embed/${key}/${page.body.id}`);
        const p = await anon("GET", `/player/v1/article?key=${key}&url=${encodeURIComponent(form)}`);
        expect(p.body.article, form).to.include({ id: page.body.id, url: `http://localhost:${port}/lokales/%C3%BCber-uns` });
      }
    });
  });

  describe("null for an optional field", () => {
    it("means absent on create over REST: every optional field null is a plain create with the defaults", async () => {
      const r = await A("POST", "/api/articles", { title: "Nulls", text: "Typed clients send null.", externalId: null, url: null, prompt: null, voice: null, lang: null, labels: null, parse: null, isRaw: null });
      expect(r.status, r.text).to.equal(200);
      const a = (await A("GET", `/api/articles/${r.body.id}`)).body.article;
      expect(a).to.include({ externalId: null, url: null, prompt: null, voice: "alloy", lang: "en-US", isRaw: false });
      expect(a.labels).to.deep.equal([]);
      // Required fields are not optional: null there is a type error, said as such.
      const noTitle = await A("POST", "/api/articles", { title: null, text: "t" });
      expect([noTitle.status, noTitle.body.message]).to.deep.equal([400, "title: must be a string"]);
    });

    it("means absent on the direct RPC in JSON too", async () => {
      const articles = sys.services.find((s) => s.name === "articles")!.url;
      const res = await fetch(`${articles}/articles.v1.ArticlesService/CreateArticle`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${TOKENS.full}` },
        body: JSON.stringify({ title: "Direct nulls", text: "Over Connect JSON.", externalId: null, url: null, prompt: null, voice: null, lang: null, labels: null }),
      });
      const body = (await res.json()) as { id?: string; message?: string };
      expect(res.status, JSON.stringify(body)).to.equal(200);
      expect((await A("GET", `/api/articles/${body.id}`)).body.article).to.include({ externalId: null, url: null, voice: "alloy" });
    });
  });

  describe("the podcast feed", () => {
    it("says the language set for it, else the project's default voice's locale, never the newest article's", async () => {
      const en = await A("POST", "/api/articles", { title: "In English", text: "An English story, read aloud." });
      await ready(en.body.id);
      const de = await A("POST", "/api/articles", { title: "Auf Deutsch", text: "Eine deutsche Geschichte, vorgelesen.", voice: "de-DE-KatjaNeural", lang: "de-DE" });
      await ready(de.body.id);
      // The newest item is German; the project's default voice is the platform's (en-US).
      expect((await channel()).language).to.equal("en-us");
      expect((await A("GET", "/api/player")).body.feedLanguage).to.equal("en-US");

      await admin.updateProjectSettings({ projectId: "zeitung", patchJson: JSON.stringify({ defaultVoice: "de-DE-ConradNeural", defaultLang: "de-DE" }) });
      expect((await channel((ch) => ch.language === "de-de")).language).to.equal("de-de");
      const en2 = await A("POST", "/api/articles", { title: "English again", text: "Newest, and in English.", voice: "alloy", lang: "en-US" });
      await ready(en2.body.id);
      expect((await channel()).language).to.equal("de-de");

      const set = await A("PUT", "/api/player", { feed: { language: "de-AT" } });
      expect(set.status, set.text).to.equal(200);
      expect(set.body.settings.feed.language).to.equal("de-AT");
      expect(set.body.feedLanguage).to.equal("de-AT");
      expect((await channel((ch) => ch.language === "de-at")).language).to.equal("de-at");
      const bad = await A("PUT", "/api/player", { feed: { language: "Deutsch!" } });
      expect(bad.status).to.equal(400);
      expect(bad.body.message).to.match(/feed\.language/);
    });

    it("lists in GET /api/player what Apple Podcasts and Spotify would miss, until it is set", async () => {
      await A("PUT", "/api/player", {});
      const bare = await A("GET", "/api/player");
      expect(bare.body.warnings.map((w: { setting: string }) => w.setting)).to.deep.equal(["feed.imageUrl", "feed.ownerEmail"]);
      for (const w of bare.body.warnings) expect(w.message).to.be.a("string").and.not.equal("");

      const odd = await A("PUT", "/api/player", { feed: { imageUrl: "https://zeitung.example/podcast.png", ownerEmail: "podcast@zeitung.example", category: "Nachrichten" } });
      expect(odd.body.warnings.map((w: { setting: string }) => w.setting)).to.deep.equal(["feed.category"]);
      const wrongSub = await A("PUT", "/api/player", { feed: { imageUrl: "https://zeitung.example/podcast.png", ownerEmail: "podcast@zeitung.example", category: "News/Gossip" } });
      expect(wrongSub.body.warnings.map((w: { setting: string }) => w.setting)).to.deep.equal(["feed.category"]);

      const complete = await A("PUT", "/api/player", { feed: { imageUrl: "https://zeitung.example/podcast.png", ownerEmail: "podcast@zeitung.example", category: "News/Daily News" } });
      expect(complete.body.warnings).to.deep.equal([]);
      expect((await A("GET", "/api/player")).body.warnings).to.deep.equal([]);
      const off = await A("PUT", "/api/player", { feed: { enabled: false } });
      expect(off.body.warnings).to.deep.equal([]);
    });

    it("shows generated artwork when none is set: a valid 1400×1400 PNG at a stable public URL", async () => {
      await A("PUT", "/api/player", {});
      const ch = await channel((c) => c["itunes:image"]?.href !== "https://zeitung.example/podcast.png");
      const href = ch["itunes:image"].href as string;
      expect(href).to.equal(`${sys.url}/feeds/artwork.png`);
      expect(ch.image.url).to.equal(href);

      const res = await fetch(href);
      expect(res.status).to.equal(200);
      expect(res.headers.get("content-type")).to.equal("image/png");
      expect(res.headers.get("access-control-allow-origin")).to.equal("*");
      const png = Buffer.from(await res.arrayBuffer());
      const info = decodePng(png);
      expect(info).to.deep.equal({ width: 1400, height: 1400, depth: 8, colourType: 2, rawBytes: 1400 * (1400 * 3 + 1) });
      // An independent decoder agrees.
      const file = path.join(dataDir, "artwork.png");
      await writeFile(file, png);
      const { stdout } = await promisify(execFile)("ffprobe", ["-v", "error", "-show_entries", "stream=codec_name,width,height,pix_fmt", "-of", "json", file]);
      expect(JSON.parse(stdout).streams[0]).to.include({ codec_name: "png", width: 1400, height: 1400, pix_fmt: "rgb24" });
      // Cached: the same bytes, and a 304 for a client that has them.
      const again = await fetch(href, { headers: { "if-none-match": res.headers.get("etag")! } });
      expect(again.status).to.equal(304);

      // The project's own artwork wins.
      await A("PUT", "/api/player", { feed: { imageUrl: "https://zeitung.example/podcast.png" } });
      expect((await channel((c) => c["itunes:image"].href === "https://zeitung.example/podcast.png"))["itunes:image"].href).to.equal("https://zeitung.example/podcast.png");
    });
  });
});
