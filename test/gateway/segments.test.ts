// GET /api/articles/{articleId}/segments: the ready revision's stored
// segments.json, behind the publisher's token and project, from memory after
// the first read.
import { Ajv2020 } from "ajv/dist/2020.js";
import { expect } from "chai";
import { ArticleStatus } from "../../gen/articles/v1/articles_pb.js";
import { publicSegments, type TimedSegment } from "../../lib/segments.js";
import { SegmentsResult } from "../../gateway/schemas.js";
import { createImmutableFiles } from "../../gateway/immutable-files.js";
import { call, FULL, MemoryBlobs, OTHER, READ, startHarness, type Harness } from "./support.js";

const segments: TimedSegment[] = [
  { kind: "title", text: "Rain in Berlin", start: 0.31, end: 1.9, sentences: [{ text: "Rain in Berlin", start: 0.31, end: 1.9 }] },
  { kind: "paragraph", text: "It rained. Then it stopped.", start: 2.5, end: 6.25, heading: undefined, sentences: [{ text: "It rained.", start: 2.5, end: 3.9 }, { text: "Then it stopped.", start: 4.2, end: 6.25 }] },
];
const stored = JSON.stringify(publicSegments(segments));

const files = (id: string, revision: number) => {
  const key = `${id}/${revision}/segments.json`;
  return { segments: { key, url: `/audio/${key}` }, vtt: { key: `${id}/${revision}/transcript.vtt`, url: "" }, srt: { key: `${id}/${revision}/transcript.srt`, url: "" } };
};

describe("gateway: timed segments", function () {
  let h: Harness;
  let ready: string;

  before(async () => {
    h = await startHarness();
    ready = h.fake.seed({ status: ArticleStatus.READY, revision: 2n, transcript: files("seeded-1", 2) }).id;
    await h.blobs.put(`${ready}/2/segments.json`, Buffer.from(stored), "application/json");
  });
  after(async () => {
    await h.close();
  });

  it("answers the ready revision's segments as stored, to read and full tokens", async () => {
    for (const headers of [READ, FULL]) {
      const r = await call(h, "GET", `/api/articles/${ready}/segments`, { headers });
      expect(r.status).to.equal(200);
      expect(r.headers.get("content-type")).to.equal("application/json; charset=utf-8");
      expect(r.text).to.equal(stored);
      // What the OpenAPI document promises.
      const check = new Ajv2020({ strict: false }).compile(SegmentsResult);
      expect(check(r.body), JSON.stringify(check.errors)).to.equal(true);
      expect(r.body).to.deep.equal({
        result: "ok",
        segments: [
          { kind: "title", text: "Rain in Berlin", start: 0.31, end: 1.9, sentences: [{ text: "Rain in Berlin", start: 0.31, end: 1.9 }] },
          { kind: "paragraph", text: "It rained. Then it stopped.", start: 2.5, end: 6.25, sentences: [{ text: "It rained.", start: 2.5, end: 3.9 }, { text: "Then it stopped.", start: 4.2, end: 6.25 }] },
        ],
      });
    }
  });

  it("reads the file from storage once: the file of a revision never changes", async () => {
    const before = h.blobs.reads.filter((r) => r.key.endsWith("segments.json")).length;
    for (let i = 0; i < 5; i++) expect((await call(h, "GET", `/api/articles/${ready}/segments`, { headers: READ })).status).to.equal(200);
    expect(h.blobs.reads.filter((r) => r.key.endsWith("segments.json")).length).to.equal(before);
  });

  it("answers 404 with an ErrorResult while no revision is ready, for a revision without segments, and when the file is gone", async () => {
    const processing = h.fake.seed({ status: ArticleStatus.PROCESSING });
    const older = h.fake.seed({ status: ArticleStatus.READY });
    const gone = h.fake.seed({ status: ArticleStatus.READY, transcript: files("gone", 1) });
    // A revision that is no longer ready names no segments, even when its file is still there.
    const updated = h.fake.seed({ status: ArticleStatus.WAITING, revision: 3n, transcript: files("seeded-x", 2) });
    await h.blobs.put("seeded-x/2/segments.json", Buffer.from(stored), "application/json");
    for (const a of [processing, older, gone, updated]) {
      const r = await call(h, "GET", `/api/articles/${a.id}/segments`, { headers: READ });
      expect(r.status, a.id).to.equal(404);
      expect(r.body).to.deep.equal({ result: "fail", message: "This article has no segments: no revision of it is ready, or its ready revision was rendered before timed segments were recorded" });
    }
  });

  it("is scoped by the token's project: 401 without a valid token, 404 for another project's article", async () => {
    expect((await call(h, "GET", `/api/articles/${ready}/segments`)).status).to.equal(401);
    expect((await call(h, "GET", `/api/articles/${ready}/segments`, { headers: { authorization: "Bearer nope" } })).status).to.equal(401);
    const other = await call(h, "GET", `/api/articles/${ready}/segments`, { headers: OTHER });
    expect(other.status).to.equal(404);
    expect(other.body).to.deep.equal({ result: "fail", message: "Article not found" });
    expect((await call(h, "GET", "/api/articles/missing/segments", { headers: READ })).status).to.equal(404);
  });

  it("refuses a malformed id with 400 before any upstream call", async () => {
    const r = await call(h, "GET", `/api/articles/${"x".repeat(300)}/segments`, { headers: READ });
    expect(r.status).to.equal(400);
    expect(r.body.result).to.equal("fail");
  });
});

describe("gateway: immutable files cache", () => {
  it("keeps files up to its byte bound, the least recently used leaving first, and never one over a tenth of it", async () => {
    const blobs = new MemoryBlobs();
    const key = (i: number) => `x/1/f${i}.json`;
    for (let i = 0; i <= 10; i++) await blobs.put(key(i), Buffer.alloc(100, String(i % 10)), "application/json");
    await blobs.put("x/1/big.json", Buffer.alloc(101), "application/json");
    const files = createImmutableFiles(blobs, 1_000);
    const readsOf = (k: string) => blobs.reads.filter((r) => r.key === k).length;
    for (let i = 0; i < 10; i++) await files.get(key(i));
    expect(files.bytes).to.equal(1_000);
    // f0 used again, then f10 comes: f1 is the one to leave.
    expect((await files.get(key(0)))?.toString()).to.equal("0".repeat(100));
    await files.get(key(10));
    expect(files.bytes).to.equal(1_000);
    expect(readsOf(key(0))).to.equal(1);
    await files.get(key(0));
    expect(readsOf(key(0))).to.equal(1);
    await files.get(key(1));
    expect(readsOf(key(1))).to.equal(2);
    // Served, not kept.
    expect((await files.get("x/1/big.json"))?.length).to.equal(101);
    await files.get("x/1/big.json");
    expect(readsOf("x/1/big.json")).to.equal(2);
    expect(files.bytes).to.be.at.most(1_000);
    expect(await files.get("x/1/missing.json")).to.equal(null);
  });

  it("answers null for a file taken down between its stat and its read", async () => {
    const blobs = new MemoryBlobs();
    await blobs.put("y/1/segments.json", Buffer.from("{}"), "application/json");
    const read = blobs.read.bind(blobs);
    blobs.read = async (k, range) => {
      await blobs.deletePrefix("y/");
      return read(k, range);
    };
    expect(await createImmutableFiles(blobs).get("y/1/segments.json")).to.equal(null);
  });
});
