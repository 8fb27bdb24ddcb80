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
import { rssFeed } from "./feeds.js";

describe("polling a source", () => {
  let site: FeedServer;
  let store: SourceStore;
  let parses = 0;
  const created: string[] = [];
  const writes: SourceWrites = {
    create: async (_p, req) => {
      created.push(req.externalId!);
      return `a-${created.length}`;
    },
    createFromPage: async (_p, page) => {
      created.push(page.externalId!);
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
