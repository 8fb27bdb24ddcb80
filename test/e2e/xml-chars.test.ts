// Characters XML 1.0 cannot carry (C0 controls but TAB/LF/CR, U+FFFE, U+FFFF,
// unpaired surrogates) on the embedded default: refused with a 400 naming
// the field on every REST path and InvalidArgument on direct RPC, nothing
// changed; and when rows written by an older release hold them, every feed,
// embed page, oEmbed answer and SSML document is still well-formed, as a
// strict parser (expat, what podcast apps use) reads it.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Code, ConnectError } from "@connectrpc/connect";
import { expect } from "chai";
import { ArticlesService } from "../../gen/articles/v1/articles_pb.js";
import { PlayerService } from "../../gen/auth/v1/player_pb.js";
import { startEmbedded, type Embedded } from "../../launch/embedded.js";
import { rpcClient } from "../../lib/rpc/client.js";
import { openSqliteCollection } from "../../lib/store/sqlite-collection.js";
import { buildSsml } from "../../services/audio/providers/azure.js";
import { claimVerifiedHost, OwnerSite } from "../listener/oembed-verify-scenarios.js";
import { api, waitFor } from "../support/http.js";
import { strictXmlProblems } from "../support/strict-xml.js";
import { sink } from "../support/sink.js";

const TOKEN = "xml-chars-full-0123456789";
const hex = (c: string) => `U+${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")}`;

/** Every character XML 1.0 forbids that a UTF-16 string can hold (one unpaired surrogate stands for all). */
const C0 = Array.from({ length: 32 }, (_, i) => String.fromCharCode(i)).filter((c) => !"\t\n\r".includes(c));
const FORBIDDEN = [...C0, "\uFFFE", "\uFFFF", "\uD800"];
/** Protobuf strings travel as UTF-8, which cannot carry an unpaired surrogate at all, so direct RPC gets the rest. */
const FORBIDDEN_RPC = FORBIDDEN.filter((c) => c !== "\uD800");
const ALL = FORBIDDEN.join("");
const XML_FORBIDDEN = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|\p{Cs}/u;

describe("XML-forbidden characters: refused at the API, dropped from every XML and HTML we write (embedded)", function () {
  this.timeout(240_000);
  let dir: string;
  let sys: Embedded | undefined;
  let A: ReturnType<typeof api>;
  let anon: ReturnType<typeof api>;
  const ids: Record<string, string> = {};
  let key: string;
  // The site of the Plain article, verified for oEmbed.
  const site = new OwnerSite();

  const start = async () => {
    sys = await startEmbedded(
      {
        PORT: "0",
        HOST: "127.0.0.1",
        DATA_DIR: dir,
        AUDIO_ENGINE: process.env.AUDIO_ENGINE,
        // Hundreds of refused writes in a row; the limits are not what is tested here.
        RATE_LIMIT_ENABLED: "false",
        FETCH_ALLOW_PRIVATE: "127.0.0.1",
        SEED_TOKENS: JSON.stringify([{ token: TOKEN, project: "xml", scope: "full" }]),
      },
      sink(),
    );
    A = api(sys.url, TOKEN);
    anon = api(sys.url);
  };
  const ready = (id: string) =>
    waitFor(`article ${id} ready`, async () => ((await A("GET", `/api/articles/${id}`)).body?.article?.status === "ready" ? true : undefined), 120_000, 200);

  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "e2e-xml-chars-"));
    await site.start();
    await start();
    const make = async (name: string, body: Record<string, unknown>) => {
      const r = await A("POST", "/api/articles", { title: name, text: `The story of ${name}. It is short.`, ...body });
      expect(r.status, r.text).to.equal(200);
      ids[name] = r.body.id;
    };
    await make("Plain", { url: `http://${site.host}/plain`, externalId: "xml-plain", labels: ["news"] });
    await make("Second", { url: "https://news.example/second", labels: ["news"] });
    for (const id of Object.values(ids)) await ready(id);
    const put = await claimVerifiedHost(A, site, site.host, {
      feed: { title: "Show", description: "About the show", author: "Newsroom", ownerEmail: "pod@news.example", imageUrl: "https://news.example/art.png" },
    });
    await A("PUT", "/api/pronunciations", [{ match: "story", say: "storee" }]);
    key = put.body.publicKey;
  });

  after(async () => {
    await sys?.close();
    await site.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it("refuses each one on every REST path with a 400 naming the field, and changes nothing", async () => {
    const before = {
      list: (await A("GET", "/api/articles?limit=100")).body,
      article: (await A("GET", `/api/articles/${ids.Plain}`)).body,
      rules: (await A("GET", "/api/pronunciations")).body,
      player: (await A("GET", "/api/player")).body.settings,
    };
    const base = { title: "Fine", text: "Fine text." };
    for (const c of FORBIDDEN) {
      const v = `a${c}b`;
      const cases: Array<[string, string, unknown, string]> = [
        ["POST", "/api/articles", { ...base, title: v }, "title"],
        ["POST", "/api/articles", { ...base, text: v }, "text"],
        ["POST", "/api/articles", { ...base, prompt: v }, "prompt"],
        ["POST", "/api/articles", { ...base, externalId: v }, "externalId"],
        ["POST", "/api/articles", { ...base, url: `https://news.example/${v}` }, "url"],
        ["POST", "/api/articles", { ...base, labels: ["ok", v] }, "labels[1]"],
        ["PUT", `/api/articles/${ids.Plain}`, { ...base, title: v }, "title"],
        ["PUT", `/api/articles/${ids.Plain}`, { ...base, labels: [v] }, "labels[0]"],
        ["PUT", `/api/articles/${ids.Plain}`, { ...base, prompt: v }, "prompt"],
        ["PUT", "/api/articles_external_id/xml-plain", { ...base, text: v }, "text"],
        ["PUT", "/api/articles_external_id/xml-plain", { ...base, externalId: v }, "externalId"],
        ["PUT", "/api/pronunciations", [{ match: v, say: "x" }], "pronunciations[0].match"],
        ["PUT", "/api/pronunciations", [{ match: "x", say: v }], "pronunciations[0].say"],
        ["PUT", "/api/pronunciations", [{ match: "x", ipa: v }], "pronunciations[0].ipa"],
        ["PUT", "/api/player", { feed: { title: v } }, "feed.title"],
        ["PUT", "/api/player", { feed: { description: v } }, "feed.description"],
        ["PUT", "/api/player", { feed: { author: v } }, "feed.author"],
        ["PUT", "/api/player", { feed: { ownerEmail: `a${c}@news.example` } }, "feed.ownerEmail"],
      ];
      for (const [method, url, body, field] of cases) {
        const r = await A(method, url, body);
        expect(r.status, `${method} ${url} ${field} ${hex(c)}: ${r.text}`).to.equal(400);
        expect(r.body?.message, `${method} ${url} ${field} ${hex(c)}`).to.satisfy((m: string) => m.startsWith(`${field}:`) || m.includes(`; ${field}:`));
      }
    }
    expect((await A("GET", "/api/articles?limit=100")).body).to.deep.equal(before.list);
    expect((await A("GET", `/api/articles/${ids.Plain}`)).body).to.deep.equal(before.article);
    expect((await A("GET", "/api/pronunciations")).body).to.deep.equal(before.rules);
    expect((await A("GET", "/api/player")).body.settings).to.deep.equal(before.player);
  });

  it("accepts tab, line feed and carriage return in titles and text (XML carries them)", async () => {
    const r = await A("POST", "/api/articles", { title: "Tab\there", text: "Line one.\r\nLine two.\tTabbed." });
    expect(r.status, r.text).to.equal(200);
    ids.Whitespace = r.body.id;
    await ready(ids.Whitespace);
  });

  it("refuses each one on direct RPC with InvalidArgument naming the field, and changes nothing", async () => {
    const articlesUrl = sys!.services.find((s) => s.name === "articles")!.url;
    const authUrl = sys!.services.find((s) => s.name === "auth")!.url;
    const articles = rpcClient(ArticlesService, articlesUrl);
    const player = rpcClient(PlayerService, authUrl);
    const as = { headers: { authorization: `Bearer ${TOKEN}` } };
    const before = (await articles.getArticle({ id: ids.Plain }, as)).article;
    const count = (await articles.listArticles({ limit: 100, offset: 0 }, as)).count;
    const fails = (p: Promise<unknown>) => p.then(() => undefined, (e: unknown) => ConnectError.from(e));
    for (const c of FORBIDDEN_RPC) {
      const v = `a${c}b`;
      const cases: Array<[Promise<unknown>, string]> = [
        [articles.createArticle({ title: v, text: "Fine." }, as), "title"],
        [articles.createArticle({ title: "Fine", text: v }, as), "text"],
        [articles.createArticle({ title: "Fine", text: "Fine.", prompt: v }, as), "prompt"],
        [articles.createArticle({ title: "Fine", text: "Fine.", externalId: v }, as), "externalId"],
        [articles.createArticle({ title: "Fine", text: "Fine.", url: `https://news.example/${v}` }, as), "url"],
        [articles.createArticle({ title: "Fine", text: "Fine.", labels: [v] }, as), "labels[0]"],
        [articles.updateArticle({ target: { case: "id", value: ids.Plain }, title: v, text: "Fine." }, as), "title"],
        [articles.updateArticle({ target: { case: "id", value: ids.Plain }, title: "Fine", text: "Fine.", prompt: { value: v, clear: false } }, as), "prompt"],
        [articles.setPronunciations({ pronunciations: [{ match: v, say: "x" }] }, as), "pronunciations[0].match"],
        [player.updatePlayer({ settingsJson: JSON.stringify({ feed: { title: v } }) }, as), "feed.title"],
      ];
      for (const [call, field] of cases) {
        const e = await fails(call);
        expect(e?.code, `${field} ${hex(c)}`).to.equal(Code.InvalidArgument);
        expect(e?.rawMessage, `${field} ${hex(c)}`).to.include(field);
      }
    }
    expect((await articles.getArticle({ id: ids.Plain }, as)).article).to.deep.equal(before);
    expect((await articles.listArticles({ limit: 100, offset: 0 }, as)).count).to.equal(count);
  });

  it("writes well-formed feeds, embed pages and oEmbed HTML from rows an older release stored with them", async () => {
    await sys!.close();
    sys = undefined;
    // As an older release left them: straight into the stores, past every check.
    const articles = await openSqliteCollection<{ _id: string }>("articles", { filename: path.join(dir, "articles", "articles.sqlite"), what: "articles" });
    await articles.updateOne({ _id: ids.Plain }, { $set: { title: `Plain${ALL} title` } });
    await articles.updateOne({ _id: ids.Second }, { $set: { title: `Second${ALL}`, url: `https://news.example/second${ALL}`, labels: ["news", `bad${ALL}`] } });
    await articles.close();
    const projects = await openSqliteCollection<{ _id: string }>("projects", { filename: path.join(dir, "auth", "auth.sqlite"), what: "auth" });
    await projects.updateMany({}, { $set: { name: `xml${ALL}`, "player.feed.title": `Show${ALL}`, "player.feed.description": `About${ALL}`, "player.feed.author": `News${ALL}room` } });
    await projects.close();
    await start();

    const bytes = async (p: string) => {
      const res = await fetch(sys!.url + p);
      expect(res.status, p).to.equal(200);
      return new Uint8Array(await res.arrayBuffer());
    };
    const feeds = [await bytes(`/feeds/${key}.xml`), await bytes(`/feeds/${key}.xml?label=news`)];
    expect(strictXmlProblems(feeds)).to.deep.equal([null, null]);
    const feed = Buffer.from(feeds[0]).toString("utf8");
    expect(feed).to.include("<title>Plain title</title>").and.include("<title>Show</title>").and.include("About").and.include("Newsroom");
    expect(feed).to.include(ids.Plain).and.include(ids.Second).and.include(ids.Whitespace);

    const embed = Buffer.from(await bytes(`/player/v1/embed/${key}/${ids.Plain}`)).toString("utf8");
    expect(embed).to.include("<title>Plain title</title>");
    expect(XML_FORBIDDEN.test(embed)).to.equal(false);

    const oembed = await anon("GET", `/oembed?url=${encodeURIComponent(`http://${site.host}/plain`)}&format=json`);
    expect(oembed.status, oembed.text).to.equal(200);
    expect(strictXmlProblems([oembed.body.html])).to.deep.equal([null]);
    expect(oembed.body.html).to.include('title="Listen: Plain title"');
  });

  it("writes well-formed SSML for Azure from text that holds them", () => {
    const ssml = buildSsml({ text: `Hello${ALL} world & <friends>. Tab\tand\r\nbreaks stay.`, voice: "en-US-JennyNeural", lang: "en-US" });
    expect(strictXmlProblems([ssml])).to.deep.equal([null]);
    expect(ssml).to.include("Hello world &amp; &lt;friends&gt;.").and.include("Tab\tand\r\nbreaks stay.");
  });
});
