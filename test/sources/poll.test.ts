// One poll of one source, against a local feed server and stand-ins for the
// article writes: what a 304 costs, how failures back off, what the first
// poll takes in, and the lease that keeps two pollers from the same source.
import assert from "node:assert/strict";
import { logger } from "../../lib/log.js";
import { allowPrivateFrom } from "../../lib/net/allow-list.js";
import { parseFeed } from "../../services/articles/sources/parse-feed.js";
import { backoffMs, DEFAULT_SOURCE_LIMITS, pollSource, retryAfterMs, type PollDeps, type SourceWrites } from "../../services/articles/sources/poll.js";
import { openEmbeddedSourceStore } from "../../services/articles/sources/open.js";
import type { SourceDoc, SourceStore } from "../../services/articles/sources/port.js";
import { startFeedServer, type FeedServer } from "./feed-server.js";
import { atomFeed, jsonFeed, rssFeed, sitemap, sitemapIndex } from "./feeds.js";

describe("polling a source", () => {
  let site: FeedServer;
  let store: SourceStore;
  let parses = 0;
  const created: string[] = [];
  /** What each create was asked, by externalId. */
  const asked = new Map<string, { voice?: string; lang?: string; text?: string; parse?: boolean }>();
  const writes: SourceWrites = {
    create: async (_p, req) => {
      created.push(req.externalId!);
      asked.set(req.externalId!, { voice: req.voice, lang: req.lang, text: req.text, parse: req.parse });
      return `a-${created.length}`;
    },
    createFromPage: async (_p, page) => {
      created.push(page.externalId!);
      asked.set(page.externalId!, { voice: page.voice, lang: page.lang });
      return `a-${created.length}`;
    },
    update: async (_p, id) => id,
  };
  let deps: PollDeps;
  let n = 0;

  before(async () => {
    site = await startFeedServer();
    store = await openEmbeddedSourceStore();
    deps = {
      store,
      content: {
        parseFeed: async (_p, body, o) => {
          parses++;
          return parseFeed(body, o.kind, { maxItems: o.maxItems, baseUrl: o.url });
        },
      },
      writes,
      article: async () => null,
      recrawl: async () => ({ changed: false }),
      defaultVoice: async () => ({ voice: "alloy", lang: "en-US" }),
      fetchOptions: { allowPrivate: allowPrivateFrom(`127.0.0.1:${site.port}`) },
      limits: { ...DEFAULT_SOURCE_LIMITS, itemsPerPoll: 3 },
      log: logger("test"),
    };
  });
  after(async () => {
    await site.close();
    await store.close();
  });

  async function source(path: string, extra: Partial<SourceDoc> = {}): Promise<SourceDoc> {
    const now = Date.now();
    const doc: SourceDoc = { _id: `s${n++}`, projectId: "p", url: `${site.url}${path}`, pollSeconds: 300, labels: [], mode: "text", backfill: 0, paused: false, added: now, since: now, nextPoll: now, seen: 0, created: 0, updated: 0, failures: 0, leaseUntil: 0, ...extra };
    await store.insert(doc, 100);
    return doc;
  }
  const item = (i: number, date: string) => ({ id: `urn:${i}`, link: `https://news.example/${i}`, title: `T${i}`, html: `<p>Text ${i}</p>`, date });

  it("an unchanged feed answered 304 is not parsed, and counts as a success", async () => {
    site.set("/u.xml", { body: rssFeed([item(1, "2020-01-01T00:00:00Z")]) });
    const src = await source("/u.xml");
    const first = await pollSource(deps, src);
    assert.equal(first.error, "");
    assert.ok(first.etag);
    const before = parses;
    const now = Date.now();
    const second = await pollSource(deps, { ...src, ...first }, now);
    assert.equal(parses, before, "no parse after a 304");
    assert.equal(site.hits("/u.xml").notModified, 1);
    assert.deepEqual({ lastSuccess: second.lastSuccess, nextPoll: second.nextPoll, error: second.error }, { lastSuccess: now, nextPoll: now + 300_000, error: "" });
  });

  it("imports new items newest first up to the per-poll bound, leaving a backlog that skips the 304", async () => {
    const base = Date.now() + 60_000;
    const items = Array.from({ length: 5 }, (_, i) => item(100 + i, new Date(base + i * 1000).toISOString()));
    site.set("/b.xml", { body: rssFeed(items) });
    const src = await source("/b.xml");
    created.length = 0;
    const first = await pollSource(deps, src);
    assert.deepEqual(created, ["urn:104", "urn:103", "urn:102"]);
    assert.equal(first.backlog, true);
    const second = await pollSource(deps, { ...src, ...first });
    assert.equal(site.hits("/b.xml").notModified, 0, "a backlog asks for the whole feed");
    assert.deepEqual(created, ["urn:104", "urn:103", "urn:102", "urn:101", "urn:100"]);
    assert.equal(second.backlog, false);
    assert.equal(second.created, 5);
  });

  it("undated items present at the first poll are not new; one that appears later is", async () => {
    const undated = (i: number) => ({ ...item(i, ""), date: undefined });
    site.set("/n.xml", { body: rssFeed([undated(1), undated(2)]) });
    const src = await source("/n.xml");
    created.length = 0;
    const first = await pollSource(deps, src);
    assert.deepEqual(created, []);
    site.set("/n.xml", { body: rssFeed([undated(3), undated(1), undated(2)]) });
    await pollSource(deps, { ...src, ...first });
    assert.deepEqual(created, ["urn:3"]);
  });

  it("a sitemap index: the items of its newest sitemaps (bounded) become articles; a refused address is named, the rest imported", async () => {
    const soon = (i: number) => new Date(Date.now() + 60_000 + i * 1000).toISOString();
    const page = (i: number) => ({ ...item(i, soon(i)), link: `${site.url}/story/${i}` });
    site.set("/maps/new.xml", { body: sitemap([page(201), page(202)]) });
    site.set("/maps/mid.xml", { body: sitemap([page(203), page(201)]) });
    site.set("/maps/old.xml", { body: sitemap([page(204)]) });
    site.set("/maps/undated.xml", { body: sitemap([page(205)]) });
    // An index listed in the index is a sitemap whose items are none: not followed further.
    site.set("/maps/nested.xml", { body: sitemapIndex([{ loc: `${site.url}/maps/undated.xml` }]) });
    site.set(
      "/index.xml",
      {
        body: sitemapIndex([
          { loc: "/maps/undated.xml" },
          { loc: "/maps/old.xml", lastmod: "2026-01-01" },
          { loc: "/maps/mid.xml", lastmod: "2026-11-01" },
          { loc: "/maps/new.xml", lastmod: "2026-12-01" },
          // The newest, but at an address no fetch may reach (another loopback port: not in the test's allow-list).
          { loc: "http://127.0.0.1:1/private.xml", lastmod: "2026-12-05" },
          { loc: "/maps/nested.xml", lastmod: "2026-11-15" },
        ]),
      },
    );
    const src = await source("/index.xml");
    created.length = 0;
    const polled = await pollSource({ ...deps, limits: { ...deps.limits, itemsPerPoll: 10, sitemapsPerPoll: 4 } }, src);
    // The four newest: the refused one, new, nested (no items of its own), mid; not old or undated.
    assert.deepEqual(created.sort(), [201, 202, 203].map((i) => `${site.url}/story/${i}`));
    assert.equal(site.hits("/maps/old.xml").requests, 0);
    assert.equal(site.hits("/maps/undated.xml").requests, 0, "the nested index is not followed");
    assert.equal(polled.seen, 4);
    assert.equal(polled.created, 3);
    assert.match(polled.error ?? "", /^sitemap http:\/\/127\.0\.0\.1:1\/private\.xml: 127\.0\.0\.1 resolves to a loopback address$/);
    assert.equal(polled.lastSuccess, polled.lastPoll);
  });

  it("the feed's language decides the voice of what it creates, unless the source has its own", async () => {
    const soon = new Date(Date.now() + 60_000).toISOString();
    const german = '<p>Die alte Br\u00fccke \u00fcber den Fluss wurde am Montag wieder ge\u00f6ffnet.</p><p>Zweiter <i>Absatz</i>.</p>';
    site.set("/de.xml", { body: rssFeed([{ ...item(301, soon), html: german }], { lang: "de-DE" }) });
    site.set("/de.atom", { body: atomFeed([{ ...item(302, soon), html: german }], { lang: "de", xhtml: true }) });
    site.set("/de.json", { body: jsonFeed([{ ...item(303, soon), html: german }], { lang: "de-AT" }) });
    site.set("/none.json", { body: jsonFeed([{ ...item(304, soon), html: german }]) });
    site.set("/own.xml", { body: rssFeed([{ ...item(305, soon), html: german }], { lang: "de-DE" }) });
    site.set("/bad.xml", { body: rssFeed([{ ...item(306, soon), html: german }], { lang: "klingon" }) });
    for (const path of ["/de.xml", "/de.atom", "/de.json", "/none.json", "/bad.xml"]) await pollSource(deps, await source(path));
    await pollSource(deps, await source("/own.xml", { voice: "alloy", lang: "en-US" }));
    assert.equal(asked.get("urn:301")?.lang, "de-DE");
    assert.equal(asked.get("urn:302")?.lang, "de-DE");
    assert.equal(asked.get("urn:303")?.lang, "de-DE", "de-AT is read as the German locale voices speak");
    assert.ok(asked.get("urn:301")?.voice);
    // No language, or none a voice speaks: nothing sent, the create detects it.
    assert.deepEqual([asked.get("urn:304")?.lang, asked.get("urn:306")?.lang], [undefined, undefined]);
    // The source's own voice and lang win over the feed's.
    assert.deepEqual({ voice: asked.get("urn:305")?.voice, lang: asked.get("urn:305")?.lang }, { voice: "alloy", lang: "en-US" });
    // Atom XHTML content arrives whole, as HTML to parse.
    assert.deepEqual({ text: asked.get("urn:302")?.text, parse: asked.get("urn:302")?.parse }, { text: german, parse: true });
  });

  it("failures back off exponentially up to the cap; Retry-After wins when longer", () => {
    assert.deepEqual([1, 2, 3].map((f) => backoffMs(60, f, 3_600_000)), [120_000, 240_000, 480_000]);
    assert.equal(backoffMs(60, 30, 3_600_000), 3_600_000);
    assert.equal(backoffMs(60, 1, 3_600_000, 7_200_000), 7_200_000);
    assert.equal(retryAfterMs("120", 0), 120_000);
    assert.equal(retryAfterMs(new Date(60_000).toUTCString(), 0), 60_000);
    assert.equal(retryAfterMs("soon", 0), undefined);
  });

  it("the lease: of two claims of a due source exactly one wins; the loser may take it once released", async () => {
    const src = await source("/l.xml");
    const now = Date.now();
    const [a, b] = await Promise.all([store.claim(src._id, "one", now, 60_000), store.claim(src._id, "two", now, 60_000)]);
    assert.equal([a, b].filter(Boolean).length, 1);
    const winner = a ? "one" : "two";
    assert.equal(await store.claim(src._id, "three", now, 60_000, true), null, "not even poll now while it is held");
    assert.equal(await store.release(src._id, "someone else", { error: "x" }), null);
    assert.ok(await store.release(src._id, winner, { nextPoll: now }));
    assert.ok(await store.claim(src._id, "three", now, 60_000));
  });
});
