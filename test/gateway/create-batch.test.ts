// Concurrent creates of one token reach the articles service as CreateArticles
// batches (gateway/create-batch.ts); each publisher still gets exactly the
// answer its own create would have had alone.
import { expect } from "chai";
import { call, FULL, OTHER, SECRET_DETAIL, startHarness, type Harness } from "./support.js";

describe("gateway: concurrent creates of one token go as batches", function () {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(async () => {
    await h.close();
  });

  it("answers each create on its own: ids, a used externalId, upstream failures", async () => {
    const taken = await call(h, "POST", "/api/articles", { headers: FULL, json: { title: "Taken", text: "x", externalId: "batch-taken" } });
    expect(taken.status).to.equal(200);
    h.fake.batches.length = 0;

    const bodies = Array.from({ length: 30 }, (_, i) => {
      if (i === 7) return { title: "Batch 7", text: "x", externalId: "batch-taken" };
      if (i === 11) return { title: "boom-internal", text: "x" };
      if (i === 13) return { title: "boom-unavailable", text: "x" };
      return { title: `Batch ${i}`, text: `Text ${i}`, externalId: `batch-${i}` };
    });
    const answers = await Promise.all(bodies.map((json) => call(h, "POST", "/api/articles", { headers: FULL, json })));

    expect(h.fake.batches.some((n) => n > 1), `batches: ${h.fake.batches.join(",")}`).to.equal(true);
    answers.forEach((res, i) => {
      if (i === 7) {
        expect(res.status).to.equal(400);
        expect(res.body).to.deep.equal({ result: "fail", message: "externalId 'batch-taken' is already used" });
      } else if (i === 11 || i === 13) {
        expect(res.status).to.equal(i === 11 ? 500 : 503);
        expect(res.body.result).to.equal("error");
        expect(res.text).not.to.include(SECRET_DETAIL);
      } else {
        expect(res.status, JSON.stringify(res.body)).to.equal(200);
        // The fake derives ids from titles: each answer carries its own article's id.
        expect(res.body.id).to.match(new RegExp(`^batch-${i}-\\d+$`));
        const stored = h.fake.articles.get(res.body.id);
        expect(stored?.externalId).to.equal(`batch-${i}`);
        expect(stored?.text).to.equal(`Text ${i}`);
      }
    });
  });

  it("never mixes tokens in one batch: every article lands in its own caller's project", async () => {
    h.fake.batches.length = 0;
    const jobs = Array.from({ length: 24 }, (_, i) => ({ headers: i % 2 ? OTHER : FULL, json: { title: `Mixed ${i}`, text: "x" } }));
    const answers = await Promise.all(jobs.map((j) => call(h, "POST", "/api/articles", j)));
    answers.forEach((res, i) => {
      expect(res.status).to.equal(200);
      expect(h.fake.articles.get(res.body.id)?.projectId).to.equal(i % 2 ? "p2" : "p1");
    });
    expect(h.fake.batches.some((n) => n > 1)).to.equal(true);
  });

  it("sends creates with content work ahead of them (HTML to parse, long text) alone, never in a batch", async () => {
    h.fake.batchedTitles.length = 0;
    const quick = Array.from({ length: 10 }, (_, i) => ({ title: `Quick ${i}`, text: "x" }));
    const slow = [
      { title: "Parse me", text: "<p>x</p>", parse: true },
      { title: "Long one", text: "word ".repeat(500) },
    ];
    const answers = await Promise.all([...slow, ...quick].map((json) => call(h, "POST", "/api/articles", { headers: FULL, json })));
    for (const res of answers) expect(res.status).to.equal(200);
    expect(h.fake.batchedTitles.filter((t) => t.startsWith("Quick")).length).to.be.above(1);
    expect(h.fake.batchedTitles).not.to.include.members(["Parse me"]);
    expect(h.fake.batchedTitles).not.to.include.members(["Long one"]);
  });
});
