// Bulk jobs end to end (issue 36, point 2), written once and run on the embedded
// default (bulk.test.ts) and the full stack (bulk-stack.test.ts): projects and
// settings through the admin CLI, everything else through the REST API.
import { expect } from "chai";
import { api, waitFor } from "../support/http.js";
import { operator, type StatusTarget } from "./statuses-scenarios.js";

type Api = ReturnType<typeof api>;

export function bulkScenarios(target: () => StatusTarget): void {
  const { cliJson, projectWithTokens: project } = operator(target);
  const create = async (A: Api, count: number, labels: string[] = []) => {
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      const r = await A("POST", "/api/articles", { title: `Bulk ${i}`, text: `Short text number ${i}.`, labels });
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      ids.push(r.body.id);
    }
    return ids;
  };
  const article = async (A: Api, id: string) => (await A("GET", `/api/articles/${id}`)).body.article;
  const finished = (A: Api, jobId: string, ms = 120_000) =>
    waitFor(`job ${jobId} finished`, async () => {
      const r = await A("GET", `/api/jobs/${jobId}`);
      return r.body.job?.state !== "running" ? r.body.job : undefined;
    }, ms, 100);

  it("addLabels by ids and removeLabels by filter: answered at once with a job id, done with every article relabelled, no new revision", async () => {
    const { A, R } = await project("bulk-labels");
    const ids = await create(A, 5, ["news"]);
    const started = await A("POST", "/api/articles/bulk", { action: "addLabels", ids: ids.slice(0, 3), labels: ["archive", "news"] });
    expect(started.status, JSON.stringify(started.body)).to.equal(202);
    expect(started.body).to.include({ result: "ok" });
    expect(started.body.id).to.be.a("string");
    const job = await finished(R, started.body.id);
    expect(job).to.include({ action: "addLabels", state: "done", total: 3, done: 3, failed: 0, remaining: 0 });
    expect(job.errors).to.deep.equal([]);
    for (const id of ids.slice(0, 3)) expect((await article(A, id)).labels).to.deep.equal(["news", "archive"]);
    expect((await article(A, ids[3])).labels).to.deep.equal(["news"]);
    expect((await A("GET", "/api/articles?label=archive")).body.count).to.equal(3);

    const removed = await A("POST", "/api/articles/bulk", { action: "removeLabels", filter: { label: "archive" }, labels: ["archive"] });
    expect(removed.status, JSON.stringify(removed.body)).to.equal(202);
    expect(await finished(A, removed.body.id)).to.include({ state: "done", total: 3, done: 3 });
    expect((await A("GET", "/api/articles?label=archive")).body.count).to.equal(0);
    // Labels changed without a new revision: the audio is the same.
    expect((await article(A, ids[0])).labels).to.deep.equal(["news"]);
  });

  it("refuses bad requests with words and changes nothing; a read token may read a job but not start or cancel one; another project's job is 404", async () => {
    const { A, R } = await project("bulk-bad");
    const other = await project("bulk-other");
    const [id] = await create(A, 1);
    const bad: Array<[unknown, RegExp]> = [
      [{ action: "shuffle", ids: [id] }, /action/],
      [{ action: "delete" }, /ids or filter/],
      [{ action: "delete", ids: [id], filter: { status: "ready" } }, /ids or filter/],
      [{ action: "addLabels", ids: [id] }, /labels/],
      [{ action: "delete", ids: [id], labels: ["x"] }, /labels/],
      [{ action: "delete", ids: [] }, /ids/],
      [{ action: "delete", filter: { status: "sleeping" } }, /status/],
      [{ action: "delete", filter: { label: "nothing-has-this" } }, /no article matches/],
    ];
    for (const [b, words] of bad) {
      const r = await A("POST", "/api/articles/bulk", b);
      expect(r.status, JSON.stringify(b)).to.equal(400);
      expect(r.body.result).to.equal("fail");
      expect(r.body.message).to.match(words);
    }
    expect((await article(A, id)).status).to.not.equal("deleted");
    expect((await R("POST", "/api/articles/bulk", { action: "delete", ids: [id] })).status).to.equal(403);
    const started = await A("POST", "/api/articles/bulk", { action: "addLabels", ids: [id, "no-such-article"], labels: ["x"] });
    const job = await finished(R, started.body.id);
    expect(job).to.include({ state: "done", done: 1, failed: 1, remaining: 0 });
    expect(job.errors).to.deep.equal([{ articleId: "no-such-article", error: "Article 'no-such-article' not found" }]);
    expect((await R("DELETE", `/api/jobs/${started.body.id}`)).status).to.equal(403);
    expect((await other.A("GET", `/api/jobs/${started.body.id}`)).status).to.equal(404);
    expect((await A("GET", "/api/jobs/job_nope")).status).to.equal(404);
  });

  it("runs one job per project at a time (429 naming it), cancels on DELETE, and another project's jobs are not held up", async () => {
    const { id: slowProject, A } = await project("bulk-slow");
    const ids = await create(A, 30);
    // Then two writes a second: the job's 30 articles take over ten seconds (the articles service reads settings anew after 2 s).
    await cliJson("settings:set", slowProject, "rateLimit.writes.perSecond=2", "rateLimit.writes.burst=4");
    await new Promise((r) => setTimeout(r, 2_100));
    const slow = await A("POST", "/api/articles/bulk", { action: "addLabels", ids, labels: ["slow"] });
    expect(slow.status, JSON.stringify(slow.body)).to.equal(202);
    const second = await A("POST", "/api/articles/bulk", { action: "delete", ids: [ids[0]] });
    expect(second.status).to.equal(429);
    expect(second.body.message).to.include(slow.body.id).and.match(/one job runs at a time/);

    const { A: B } = await project("bulk-fast");
    const bIds = await create(B, 3);
    const fast = await B("POST", "/api/articles/bulk", { action: "addLabels", ids: bIds, labels: ["fast"] });
    expect((await finished(B, fast.body.id)).state).to.equal("done");
    // The other project's job finished while the slow one is still far from its end.
    const meanwhile = (await A("GET", `/api/jobs/${slow.body.id}`)).body.job;
    expect(meanwhile.state).to.equal("running");
    expect(meanwhile.done).to.be.below(30);

    const cancelled = await A("DELETE", `/api/jobs/${slow.body.id}`);
    expect(cancelled.status).to.equal(200);
    expect(cancelled.body.job.state).to.equal("cancelled");
    expect(cancelled.body.job.remaining).to.be.above(0);
    const doneAtCancel = cancelled.body.job.done as number;
    await new Promise((r) => setTimeout(r, 1_500));
    const after = (await A("GET", `/api/jobs/${slow.body.id}`)).body.job;
    expect(after.state).to.equal("cancelled");
    // At most the article in hand when the cancel came.
    expect(after.done).to.be.at.most(doneAtCancel + 1);
    const labelled = (await A("GET", "/api/articles?label=slow")).body.count as number;
    expect(labelled).to.be.at.most(doneAtCancel + 1).and.below(30);
    // Cancelled: the project may start another.
    const next = await A("POST", "/api/articles/bulk", { action: "delete", ids: [ids[29]] });
    expect(next.status, JSON.stringify(next.body)).to.equal(202);
    expect((await finished(A, next.body.id)).state).to.equal("done");
    expect((await article(A, ids[29])).status).to.equal("deleted");
  });

  it("regenerate makes a new revision of each article through admission, and stops cleanly, saying why, when the daily limit runs out", async () => {
    const { A } = await project("bulk-regen", "dailyLimit=5");
    const ids = await create(A, 3);
    await waitFor("articles ready", async () => ((await Promise.all(ids.map((id) => article(A, id)))).every((a) => a.status === "ready") ? true : undefined), 120_000, 200);
    // Three creates used three of five: two regenerations fit, the third stops the job.
    const r = await A("POST", "/api/articles/bulk", { action: "regenerate", filter: { status: "ready" } });
    expect(r.status, JSON.stringify(r.body)).to.equal(202);
    expect(r.body.job.total).to.equal(3);
    const job = await finished(A, r.body.id);
    expect(job.state).to.equal("failed");
    expect(job.done).to.equal(2);
    expect(job.failed).to.equal(1);
    expect(job.reason).to.match(/daily limit/);
    expect(job.errors[0].error).to.match(/daily limit/);
    const after = await Promise.all(ids.map((id) => article(A, id)));
    expect(after.map((a) => a.status).sort()).to.include("limit_reached");
    for (const a of after) expect(a.audio === undefined || /\/2\//.test(a.audio), a.audio).to.equal(true);
  });

  it("a filter's q takes the articles the list's search finds with the same words, and no others", async () => {
    const { A } = await project("bulk-search");
    const said: string[] = [];
    for (const text of ["The NABU survey counted storks.", "Nabu volunteers met on Sunday.", "The council met on Monday."]) {
      said.push((await A("POST", "/api/articles", { title: "Local news", text })).body.id as string);
    }
    const found = await A("GET", "/api/articles?q=nabu");
    expect(found.body.count).to.equal(2);
    const r = await A("POST", "/api/articles/bulk", { action: "addLabels", filter: { q: "nabu" }, labels: ["nabu"] });
    expect(r.status, JSON.stringify(r.body)).to.equal(202);
    expect(r.body.job.total).to.equal(found.body.count);
    expect(await finished(A, r.body.id)).to.include({ state: "done", done: 2 });
    expect((await article(A, said[2])).labels).to.deep.equal([]);
    expect((await A("GET", "/api/articles?label=nabu")).body.count).to.equal(2);
    expect((await A("POST", "/api/articles/bulk", { action: "delete", filter: { q: "!!!" } })).status).to.equal(400);
  });

  it("delete by filter takes the articles down as DELETE does", async () => {
    const { A } = await project("bulk-delete");
    const keep = await create(A, 2);
    const gone = await create(A, 3, ["takedown"]);
    const r = await A("POST", "/api/articles/bulk", { action: "delete", filter: { label: "takedown" } });
    expect(await finished(A, r.body.id)).to.include({ state: "done", done: 3 });
    for (const id of gone) expect((await article(A, id)).status).to.equal("deleted");
    for (const id of keep) expect((await article(A, id)).status).to.not.equal("deleted");
    expect((await A("GET", "/api/articles")).body.count).to.equal(2);
  });
}
