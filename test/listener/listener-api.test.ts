// The listener side over HTTP on the embedded default: player keys and their
// isolation, the public article lookup, feeds (parsed by a feed reader and
// checked against what Apple Podcasts requires), oEmbed and statistics.
import { expect } from "chai";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import Parser from "rss-parser";
import { XMLParser } from "fast-xml-parser";
import { startEmbedded, type Embedded } from "../../launch/embedded.js";
import { api, waitFor } from "../support/http.js";
import { parseSrtStrict, parseWebVttStrict } from "../support/captions.js";
import { strictXmlProblems } from "../support/strict-xml.js";
import { beacon, beaconFrom, getFrom, untilRefused, type Answer } from "./beacons.js";
import { sink } from "../support/sink.js";

const TOKENS = { aFull: "listener-a-full-0123456789", aRead: "listener-a-read-0123456789", bFull: "listener-b-full-0123456789" };
const SEED = JSON.stringify([
  { token: TOKENS.aFull, project: "alpha", scope: "full" },
  { token: TOKENS.aRead, project: "alpha", scope: "read" },
  { token: TOKENS.bFull, project: "beta", scope: "full" },
]);

describe("listener side: keys, public lookups, feeds, oEmbed and statistics (embedded)", function () {
  this.timeout(180_000);
  let dataDir: string;
  let sys: Embedded;
  let A: ReturnType<typeof api>;
  let AR: ReturnType<typeof api>;
  let B: ReturnType<typeof api>;
  let anon: ReturnType<typeof api>;
  let keyA: string;
  let keyB: string;
  const ids: Record<string, string> = {};

  async function ready(id: string) {
    return waitFor(`article ${id} ready`, async () => {
      const r = await A("GET", `/api/articles/${id}`);
      return r.body?.article?.status === "ready" ? r.body.article : undefined;
    }, 120_000, 200);
  }

  before(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), "e2e-listener-"));
    sys = await startEmbedded({ PORT: "0", HOST: "127.0.0.1", DATA_DIR: dataDir, SEED_TOKENS: SEED, AUDIO_ENGINE: process.env.AUDIO_ENGINE }, sink());
    A = api(sys.url, TOKENS.aFull);
    AR = api(sys.url, TOKENS.aRead);
    B = api(sys.url, TOKENS.bFull);
    anon = api(sys.url);
    const make = async (name: string, body: Record<string, unknown>) => {
      const r = await A("POST", "/api/articles", { title: name, text: `The story of ${name}. It is short.`, ...body });
      expect(r.status).to.equal(200);
      ids[name] = r.body.id;
    };
    await make("Sport one", { url: "https://news.example/sport/1", labels: ["sport"], externalId: "listener-sport-1" });
    await make("Politics one", { url: "https://news.example/politics/1", labels: ["politics"] });
    await make("Gone soon", { url: "https://news.example/gone" });
    for (const id of Object.values(ids)) await ready(id);
    await A("DELETE", `/api/articles/${ids["Gone soon"]}`);
    const b = await B("POST", "/api/articles", { title: "Beta secret", text: "Only for beta.", url: "https://news.example/sport/1" });
    ids.beta = b.body.id;
    await waitFor("beta ready", async () => ((await B("GET", `/api/articles/${ids.beta}`)).body?.article?.status === "ready" ? true : undefined), 120_000, 200);
    keyA = (await AR("GET", "/api/player")).body.publicKey;
    keyB = (await B("GET", "/api/player")).body.publicKey;
  });

  after(async () => {
    await sys?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it("gives each project one stable public key with a copy-paste snippet, to read and full tokens alike", async () => {
    expect(keyA).to.match(/^pk_[A-Za-z0-9_-]{16,}$/);
    const again = await A("GET", "/api/player");
    expect(again.body.publicKey).to.equal(keyA);
    expect(again.body.snippet).to.include(`${sys.url}/player/v1/player.js`).and.include(`key="${keyA}"`);
    expect(again.body.feedUrl).to.equal(`${sys.url}/feeds/${keyA}.xml`);
    expect(keyB).to.not.equal(keyA);
    expect((await anon("GET", "/api/player")).status).to.equal(401);
  });

  it("answers only what a listener may see, only for ready articles of the key's own project", async () => {
    const r = await anon("GET", `/player/v1/article?key=${keyA}&externalId=listener-sport-1`);
    expect(r.status).to.equal(200);
    expect(r.headers.get("access-control-allow-origin")).to.equal("*");
    expect(Object.keys(r.body.article).sort()).to.deep.equal(["audio", "audio_duration", "audio_preview", "audio_preview_duration", "id", "lang", "revision", "segments", "title", "transcript", "url"]);
    expect(r.text).to.not.include("The story of");
    // Revalidated on every load: unchanged is a 304, a new revision a new ETag.
    const unchanged = await fetch(`${sys.url}/player/v1/article?key=${keyA}&externalId=listener-sport-1`, { headers: { "if-none-match": r.headers.get("etag")! } });
    expect(unchanged.status).to.equal(304);
    // By URL, a project sees its own article even when another project used the same URL.
    expect((await anon("GET", `/player/v1/article?key=${keyB}&url=${encodeURIComponent("https://news.example/sport/1")}`)).body.article.id).to.equal(ids.beta);
    expect((await anon("GET", `/player/v1/article?key=${keyA}&url=${encodeURIComponent("https://news.example/sport/1")}`)).body.article.id).to.equal(ids["Sport one"]);
    // Another project's article, a deleted one: not found, indistinguishable.
    const other = await anon("GET", `/player/v1/article?key=${keyA}&id=${ids.beta}`);
    const deleted = await anon("GET", `/player/v1/article?key=${keyA}&id=${ids["Gone soon"]}`);
    expect([other.status, deleted.status]).to.deep.equal([404, 404]);
    expect(other.body.message).to.equal(deleted.body.message);
    expect((await anon("GET", `/player/v1/article?key=pk_unknownunknownunknown&id=${ids["Sport one"]}`)).status).to.equal(401);
    // A player key is no API token.
    expect((await anon("GET", `/api/articles/${ids["Sport one"]}`, undefined, { authorization: `Bearer ${keyA}` })).status).to.be.oneOf([401, 403]);
  });

  it("serves a podcast feed a feed reader parses, with what Apple Podcasts requires, newest first, per label, and 304 when unchanged", async () => {
    await A("PUT", "/api/player", { feed: { title: "Alpha Audio", description: "Alpha's articles, read aloud.", imageUrl: "https://news.example/art.png", author: "Alpha News", category: "News/Daily News", explicit: false } });
    const res = await fetch(`${sys.url}/feeds/${keyA}.xml`);
    expect(res.status).to.equal(200);
    expect(res.headers.get("content-type")).to.match(/^application\/rss\+xml/);
    const xml = await res.text();
    const feed = await new Parser({ customFields: { item: ["itunes:duration"] } }).parseString(xml);
    expect(feed.title).to.equal("Alpha Audio");
    // Newest first, the same order as the publisher's list (created in one second: ties go by id).
    const listed = (await A("GET", "/api/articles?limit=100")).body.articles.map((a: { id: string }) => a.id);
    expect(feed.items.map((i) => i.guid)).to.deep.equal(listed);
    expect(listed).to.have.members([ids["Politics one"], ids["Sport one"]]);
    expect(feed.items[0].enclosure?.type).to.equal("audio/mpeg");
    expect(Number(feed.items[0].enclosure?.length)).to.be.greaterThan(1000);
    const audio = await fetch(feed.items[0].enclosure!.url);
    expect(Number(audio.headers.get("content-length"))).to.equal(Number(feed.items[0].enclosure?.length));

    const doc = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: "" }).parse(xml);
    const ch = doc.rss.channel;
    expect(doc.rss["xmlns:itunes"]).to.equal("http://www.itunes.com/dtds/podcast-1.0.dtd");
    expect(doc.rss["xmlns:podcast"]).to.equal("https://podcastindex.org/namespace/1.0");
    for (const required of ["title", "description", "language", "link", "itunes:image", "itunes:author", "itunes:category", "itunes:explicit"]) expect(ch, required).to.have.property(required);
    expect(ch["itunes:category"]).to.deep.include({ text: "News" });
    for (const it of [ch.item].flat()) {
      for (const required of ["title", "guid", "pubDate", "enclosure", "itunes:duration", "link"]) expect(it, required).to.have.property(required);
      expect(it["itunes:duration"]).to.match(/^\d\d:\d\d:\d\d$/);
    }

    const sport = await new Parser().parseURL(`${sys.url}/feeds/${keyA}.xml?label=sport`);
    expect(sport.items.map((i) => i.guid)).to.deep.equal([ids["Sport one"]]);

    const again = await fetch(`${sys.url}/feeds/${keyA}.xml`, { headers: { "if-none-match": res.headers.get("etag")! } });
    expect(again.status).to.equal(304);
    // A guid never changes across revisions.
    await A("PUT", `/api/articles/${ids["Sport one"]}`, { title: "Sport one, updated", text: "New text for the sport story." });
    await ready(ids["Sport one"]);
    await new Promise((r) => setTimeout(r, 5_500)); // the rendered page is reused for 5 s
    const updated = await new Parser().parseURL(`${sys.url}/feeds/${keyA}.xml`);
    expect(updated.items.find((i) => i.guid === ids["Sport one"])?.title).to.equal("Sport one, updated");
  });

  // Needs the pipeline's timed segments (RenderResult.segments, issue 23 part 1).
  it("read-along: the publisher reads the segments, the player's links and the feed's transcript tags lead to the stored files, and the feed describes items by their opening", async () => {
    const id = ids["Politics one"];
    const seg = await A("GET", `/api/articles/${id}/segments`);
    expect(seg.status).to.equal(200);
    expect(seg.body.result).to.equal("ok");
    expect(seg.body.segments[0]).to.include({ kind: "title", text: "Politics one" });
    expect(seg.body.segments.slice(1).map((x: { text: string }) => x.text).join(" ")).to.equal("The story of Politics one. It is short.");
    for (const x of seg.body.segments) for (const sentence of x.sentences) expect(sentence.end).to.be.greaterThan(sentence.start);
    expect((await AR("GET", `/api/articles/${id}/segments`)).status).to.equal(200);
    // Another project's token: as if there were no such article; a deleted article has none.
    expect((await B("GET", `/api/articles/${id}/segments`)).status).to.equal(404);
    expect((await A("GET", `/api/articles/${ids["Gone soon"]}/segments`)).status).to.equal(404);

    const lookup = (await anon("GET", `/player/v1/article?key=${keyA}&id=${id}`)).body.article;
    const served = await fetch(lookup.segments);
    expect(served.status).to.equal(200);
    expect(await served.json()).to.deep.equal(seg.body);
    const vtt = await fetch(lookup.transcript);
    expect(vtt.headers.get("content-type")).to.equal("text/vtt; charset=utf-8");
    expect(parseWebVttStrict(await vtt.text()).map((c) => c.text).join(" ")).to.equal("Politics one The story of Politics one. It is short.");

    const xml = await (await fetch(`${sys.url}/feeds/${keyA}.xml`)).text();
    expect(strictXmlProblems([xml])).to.deep.equal([null]);
    const items = [new XMLParser({ ignoreAttributes: false, attributeNamePrefix: "" }).parse(xml).rss.channel.item].flat();
    const item = items.find((i: { guid: { "#text": string } }) => i.guid["#text"] === id);
    expect(item.description).to.equal("The story of Politics one. It is short.");
    expect(item["podcast:transcript"].map((t: { type: string }) => t.type)).to.deep.equal(["text/vtt", "application/x-subrip"]);
    expect(item["podcast:transcript"][0].url).to.equal(lookup.transcript);
    const srt = await fetch(item["podcast:transcript"][1].url);
    expect(srt.headers.get("content-type")).to.equal("application/x-subrip; charset=utf-8");
    expect(parseSrtStrict(await srt.text())).to.have.length(3);
    // No headings in a plain-text article: no chapters.
    expect(item).to.not.have.property("podcast:chapters");
  });

  it("refuses bad player settings with a 400 naming the field, and read tokens may not change them", async () => {
    const bad = await A("PUT", "/api/player", { feed: { imageUrl: "not a url" } });
    expect(bad.status).to.equal(400);
    expect(bad.body.message).to.match(/imageUrl/);
    expect((await AR("PUT", "/api/player", { feed: { title: "x" } })).status).to.equal(403);
  });

  it("serves the project's player design with every lookup, refusing a look whose contrast is too low", async () => {
    const id = ids["Politics one"];
    const lookup = () => fetch(`${sys.url}/player/v1/article?key=${keyA}&id=${id}`).then(async (r) => ({ etag: r.headers.get("etag"), article: (await r.json()).article }));
    const before = await lookup();
    expect(before.article).not.to.have.property("look");
    const current = (await A("GET", "/api/player")).body.settings;
    const low = await A("PUT", "/api/player", { ...current, look: { accent: "#fafafa", scheme: "light" } });
    expect(low.status).to.equal(400);
    expect(low.body.message).to.match(/^look\.accent: .*at least 3:1/);
    expect((await A("PUT", "/api/player", { ...current, look: { radius: 99 } })).status).to.equal(400);
    const saved = await A("PUT", "/api/player", { ...current, look: { accent: "#0b57d0", scheme: "light", layout: "compact", controls: { speed: false } } });
    expect(saved.status).to.equal(200);
    expect(saved.body.settings.feed).to.deep.equal(current.feed);
    expect(saved.body.settings.look).to.include({ accent: "#0b57d0", background: null, scheme: "light", layout: "compact", radius: 12 });
    // The embed changes without the publisher's page changing: the next lookups carry the look, under a new tag.
    const after = await waitFor("look served", async () => {
      const r = await lookup();
      return r.article.look ? r : undefined;
    }, 15_000, 250);
    expect(after.article.look).to.deep.include({ layout: "compact", hide: ["speed"] });
    expect(after.article.look.vars).to.include({ "--aap-accent": "#0b57d0", "--aap-bg": "#f4f4f6" });
    expect(after.etag).not.to.equal(before.etag);
    await A("PUT", "/api/player", current);
  });

  it("answers oEmbed only for verified hosts: an unverified claim serves nothing and blocks nobody (test/listener/oembed-verify.test.ts has the rest)", async () => {
    expect((await anon("GET", `/oembed?url=${encodeURIComponent("https://news.example/sport/1")}&format=json`)).status).to.equal(404);
    expect((await A("PUT", "/api/player", { oembed: { enabled: true, hosts: ["news.example"] } })).status).to.equal(200);
    const claimed = await B("PUT", "/api/player", { oembed: { enabled: true, hosts: ["news.example"] } });
    expect(claimed.status).to.equal(200);
    expect(claimed.body.oembedHosts[0]).to.include({ host: "news.example", status: "failed" });
    expect((await anon("GET", `/oembed?url=${encodeURIComponent("https://news.example/politics/1")}&format=json`)).status).to.equal(404);
    expect((await anon("GET", `/oembed?url=${encodeURIComponent("https://news.example/politics/1")}&format=xml`)).status).to.equal(501);
  });

  it("counts listening events per article and day, refuses bad batches, and never lets a key touch another project", async () => {
    const id = ids["Politics one"];
    const post = (body: unknown, type = "text/plain") => fetch(`${sys.url}/player/v1/events`, { method: "POST", headers: { "content-type": type }, body: JSON.stringify(body) });
    expect((await post({ key: keyA, events: [{ type: "impression", articleId: id }, { type: "play", articleId: id, seconds: 4 }, { type: "progress", articleId: id, percent: 50 }, { type: "complete", articleId: id, seconds: 2 }] })).status).to.equal(204);
    // Key B naming A's article: accepted on the wire, counted nowhere.
    expect((await post({ key: keyB, events: [{ type: "play", articleId: id }] })).status).to.equal(204);
    expect((await post({ key: keyA, events: [{ type: "progress", articleId: id, percent: 33 }] })).status).to.equal(400);
    expect((await post({ key: keyA, events: Array.from({ length: 51 }, () => ({ type: "play", articleId: id })) })).status).to.equal(400);
    expect((await post({ key: keyA, events: [{ type: "play", articleId: id }], ip: "1.2.3.4" })).status).to.equal(400);
    const stats = await waitFor("figures flushed", async () => {
      const r = await AR("GET", `/api/articles/${id}/stats`);
      return r.body?.total?.plays === 1 ? r.body : undefined;
    }, 20_000, 250);
    expect(stats.total).to.include({ impressions: 1, plays: 1, progress50: 1, completions: 1, listenThroughRate: 1, secondsListened: 6 });
    const project = await A("GET", `/api/stats?from=2020-01-01&to=2099-01-01`);
    expect(project.status).to.equal(400); // more than a year
    const p = await A("GET", "/api/stats");
    // The top list names each article by its title too: a dashboard needs no lookup per row.
    expect(p.body.articles[0]).to.include({ articleId: id, title: "Politics one", plays: 1 });
    expect((await B("GET", "/api/stats")).body.total.plays).to.equal(0);
    expect((await B("GET", `/api/articles/${id}/stats`)).status).to.equal(404);
  });

  it("splits listens by source and counts a podcast app's enclosure requests as one download per listener and day, bots never", async () => {
    const id = ids["Sport one"];
    const post = (body: unknown) => fetch(`${sys.url}/player/v1/events`, { method: "POST", headers: { "content-type": "text/plain" }, body: JSON.stringify(body) });
    expect((await post({ key: keyA, source: "embed", events: [{ type: "play", articleId: id, seconds: 3 }] })).status).to.equal(204);
    expect((await post({ key: keyA, source: "console", events: [{ type: "play", articleId: id }] })).status).to.equal(204);
    // Downloads come from the gateway's own count only: a beacon can neither send one nor claim the podcast source.
    expect((await post({ key: keyA, source: "podcast", events: [{ type: "play", articleId: id }] })).status).to.equal(400);
    expect((await post({ key: keyA, events: [{ type: "download", articleId: id }] })).status).to.equal(400);

    const feed = await fetch(`${sys.url}/feeds/${keyA}.xml?label=sport`).then((r) => r.text());
    const enclosure = /<enclosure url="([^"]+)"/.exec(feed)![1].replace(/&amp;/g, "&");
    expect(enclosure).to.match(new RegExp(`/full\\.mp3\\?feed=${keyA}&d=\\d+$`));
    const size = Number((await fetch(enclosure, { method: "HEAD" })).headers.get("content-length"));
    const get = (ua: string, range?: string) => fetch(enclosure, { headers: { "user-agent": ua, ...(range ? { range } : {}) } }).then(async (r) => (await r.arrayBuffer(), r.status));
    const app = "AppleCoreMedia/1.0.0.21E236 (iPhone; U; CPU OS 17_4 like Mac OS X; en_us)";
    // A probe of two bytes, then the file in two halves: one download. Fetched again the same day: still one.
    expect(await get(app, "bytes=0-1")).to.equal(206);
    expect(await get(app, `bytes=0-${Math.floor(size / 2)}`)).to.equal(206);
    expect(await get(app, `bytes=${Math.floor(size / 2) + 1}-`)).to.equal(206);
    expect(await get(app)).to.equal(200);
    // Another app on the same address is another listener; crawlers and feed checkers never count.
    expect(await get("Overcast/3.0 (+http://overcast.fm/; iOS podcast app)")).to.equal(200);
    expect(await get("Googlebot/2.1 (+http://www.google.com/bot.html)")).to.equal(200);
    expect(await get("")).to.equal(200);
    // The plain file (the player's link, no feed key) is no download.
    expect(await fetch(enclosure.replace(/\?.*$/, ""), { headers: { "user-agent": "Pocket Casts" } }).then((r) => r.status)).to.equal(200);

    const stats = await waitFor("sources and downloads flushed", async () => {
      const r = await AR("GET", `/api/articles/${id}/stats`);
      return r.body?.total?.downloads === 2 && r.body.bySource.console.plays === 1 ? r.body : undefined;
    }, 20_000, 250);
    expect(stats.bySource.podcast).to.include({ downloads: 2, plays: 0 });
    expect(stats.bySource.embed).to.include({ plays: 1, secondsListened: 3 });
    expect(stats.bySource.console).to.include({ plays: 1 });
    expect(stats.days.at(-1).downloads).to.equal(2);
    for (const k of ["plays", "downloads", "secondsListened"] as const) {
      const sum = Object.values(stats.bySource as Record<string, Record<string, number>>).reduce((n, f) => n + f[k], 0);
      expect(sum, k).to.equal(stats.total[k]);
    }
    const project = (await A("GET", "/api/stats")).body;
    expect(project.total.downloads).to.equal(2);
    expect(project.articles.find((a: { articleId: string }) => a.articleId === id)).to.include({ downloads: 2 });
    expect((await B("GET", "/api/stats")).body.total.downloads).to.equal(0);
  });

  // The limits' own figures (docs/player.md): per key 20/s, burst 100; per address 5/s, burst 50;
  // lookups per address 5/s, burst 60. Each test sends until it is refused and holds the count
  // admitted against burst + rate × the time it took: right on an idle machine and a loaded one.
  const admittedAtMost = (burst: number, perSecond: number, seconds: number) => burst + Math.floor(perSecond * seconds) + 1;

  /** Sends until refused; every answer is `admitted` or a 429 naming `why`, and the count admitted fits the bucket. */
  async function expectBucket(send: (i: number) => Promise<Answer>, o: { concurrency: number; admitted: number; burst: number; perSecond: number; why: RegExp }) {
    const { answers, elapsedSeconds } = await untilRefused(send, { concurrency: o.concurrency, max: 1_000 });
    const taken = answers.filter((a) => a.status === o.admitted).length;
    const refused = answers.filter((a) => a.status === 429);
    const seen = `${answers.length} sent in ${elapsedSeconds.toFixed(1)} s: ${answers.map((a) => a.status).join(",")}`;
    expect(taken + refused.length, seen).to.equal(answers.length);
    expect(refused.length, seen).to.be.greaterThan(0);
    expect(taken, seen).to.be.at.least(o.burst);
    expect(taken, seen).to.be.at.most(admittedAtMost(o.burst, o.perSecond, elapsedSeconds));
    for (const r of refused) {
      expect(r.retryAfter).to.be.at.least(1);
      expect(r.body.message).to.match(o.why);
    }
  }

  it("answers 429 with Retry-After once a key sends more beacons than its bucket holds, from whatever addresses", async () => {
    const body = { key: keyB, events: [{ type: "impression", articleId: ids.beta }] };
    // 40 listeners' addresses, at most 25 beacons each: within each address's bucket, beyond the key's.
    await expectBucket((i) => beaconFrom(sys.url, body, `127.0.1.${1 + (i % 40)}`), { concurrency: 20, admitted: 204, burst: 100, perSecond: 20, why: /for this key/ });
  });

  it("answers 429 to one address that sends more beacons than its own bucket holds, while others of the same key go on", async () => {
    await new Promise((r) => setTimeout(r, 5_000)); // key B's bucket refills from the test before
    const body = { key: keyB, events: [{ type: "impression", articleId: ids.beta }] };
    await expectBucket(() => beaconFrom(sys.url, body, "127.0.1.50"), { concurrency: 10, admitted: 204, burst: 50, perSecond: 5, why: /from this address/ });
    expect(await beacon(sys.url, body, "127.0.1.51")).to.equal(204);
  });

  it("answers 429 with Retry-After to one address that looks up more articles than its bucket holds (embed pages too), while other addresses go on", async () => {
    const url = `${sys.url}/player/v1/article?key=${keyB}&id=${ids.beta}`;
    await expectBucket(() => getFrom("127.0.2.1", url), { concurrency: 30, admitted: 200, burst: 60, perSecond: 5, why: /lookups from this address/ });
    // Embed pages spend the same bucket: nearly empty now (a token every 200 ms), not a fresh one of 60.
    const embed = await untilRefused(() => getFrom("127.0.2.1", `${sys.url}/player/v1/embed/${keyB}/${ids.beta}`), { concurrency: 5, max: 100 });
    const embedded = embed.answers.filter((a) => a.status === 200).length;
    expect(embed.answers.some((a) => a.status === 429), embed.answers.map((a) => a.status).join(",")).to.equal(true);
    expect(embedded).to.be.at.most(admittedAtMost(1, 5, embed.elapsedSeconds));
    expect((await getFrom("127.0.2.2", url)).status).to.equal(200);
  });

  it("refuses beacons of an unknown key with 401, and a key that is no more once it is found out", async () => {
    const post = (key: string) => beacon(sys.url, { key, events: [{ type: "impression", articleId: ids.beta }] });
    expect(await post("pk_unknownunknownunknown")).to.equal(401);
    expect(await post("pk_unknownunknownunknown")).to.equal(401);
    expect(await post(keyB)).to.equal(204);
  });

  it("rotates the key: the old one stops working, the new one reads the same articles", async () => {
    const before = keyA;
    const rotated = await A("POST", "/api/player/rotate");
    expect(rotated.status).to.equal(200);
    keyA = rotated.body.publicKey;
    expect(keyA).to.not.equal(before);
    expect((await AR("POST", "/api/player/rotate")).status).to.equal(403);
    await waitFor("old key refused", async () => ((await anon("GET", `/player/v1/article?key=${before}&id=${ids["Sport one"]}`)).status === 401 ? true : undefined), 10_000, 250);
    expect((await anon("GET", `/player/v1/article?key=${keyA}&id=${ids["Sport one"]}`)).status).to.equal(200);
    await waitFor("old feed gone", async () => ([401, 404].includes((await fetch(`${sys.url}/feeds/${before}.xml`)).status) ? true : undefined), 10_000, 250);
    // The gateway knew the old key from its beacons; the first flush that is refused makes it refuse them at once.
    const old = { key: before, events: [{ type: "impression", articleId: ids["Sport one"] }] };
    await waitFor("old key's beacons refused", async () => ((await beacon(sys.url, old, "127.0.1.60")) === 401 ? true : undefined), 10_000, 250);
    expect(await beacon(sys.url, { key: keyA, events: [{ type: "impression", articleId: ids["Sport one"] }] }, "127.0.1.60")).to.equal(204);
  });
});
