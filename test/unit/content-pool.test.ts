// The content pool's limits and fairness, on its real worker threads.
import { expect } from "chai";
import { readdirSync, readFileSync } from "node:fs";
import { htmlDepth } from "../../services/articles/content/analyse.js";
import { ContentRejectedError } from "../../services/articles/content/limits.js";
import { createContentPool, type ContentWork } from "../../services/articles/content/pool.js";

const page = (paragraphs: number) => `<article>${"<p>Some words in a sentence about the council and its budget.</p>".repeat(paragraphs)}</article>`;
const input = (text: string) => ({ title: "T", text, lang: "en", parse: true });

/** This process's threads and resident memory (MB): what an operator's tools show. */
const threads = () => readdirSync("/proc/self/task").length;
const rssMb = () => Number(/^VmRSS:\s+(\d+)/m.exec(readFileSync("/proc/self/status", "utf8"))![1]) / 1024;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function rejection(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    expect(e).to.be.instanceOf(ContentRejectedError);
    return (e as ContentRejectedError).reason;
  }
  throw new Error("not rejected");
}

describe("content pool", function () {
  this.timeout(60_000);
  let pool: ContentWork | undefined;
  afterEach(async () => {
    await pool?.close();
    pool = undefined;
  });

  it("measures nesting as the DOM would build it: implied ends of <p>, <li> and <td> do not nest", () => {
    expect(htmlDepth("<div><div><p>a</p></div></div>")).to.equal(3);
    expect(htmlDepth(`<ul>${"<li>item".repeat(500)}</ul>`)).to.equal(2);
    expect(htmlDepth(`<table>${"<tr><td>a<td>b".repeat(300)}</table>`)).to.be.below(6);
    expect(htmlDepth("<div>".repeat(10_000), 256)).to.equal(257);
  });

  it("rejects deep nesting at once, and ends a job that runs too long on a fresh thread", async () => {
    pool = createContentPool({ timeoutMs: 150 });
    expect(await rejection(pool.analyse("a", input("<section>".repeat(100_000))))).to.equal("HTML nested deeper than 256 levels");
    // About 1.4 s of extraction here (0.5 s for a third of it, too close to the deadline on a faster machine).
    expect(await rejection(pool.analyse("a", input(page(60_000))))).to.equal("content extraction took longer than 150 ms");
    // The thread was replaced: the next page is served.
    expect((await pool.analyse("a", input("<p>Still working.</p>"))).spoken).to.equal("Still working.");
  });

  it("takes waiting jobs from the projects in turn", async () => {
    pool = createContentPool({ threads: 1 });
    const done: string[] = [];
    const track = (name: string, p: Promise<unknown>) => p.then(() => done.push(name));
    const jobs = [1, 2, 3, 4].map((i) => track(`a${i}`, pool!.analyse("a", input(page(500)))));
    jobs.push(track("b1", pool.analyse("b", input("<p>Short.</p>"))));
    await Promise.all(jobs);
    // a1 was running; b1 is next, ahead of the rest of a's backlog.
    expect(done.indexOf("b1")).to.be.at.most(1);
  });

  it("refuses work beyond its queue without a verdict", async () => {
    pool = createContentPool({ threads: 1, maxQueued: 2 });
    const running = [1, 2, 3].map(() => pool!.analyse("a", input(page(200))).catch((e) => e));
    const refused = await pool.analyse("a", input("<p>x</p>")).catch((e) => e);
    expect(refused).to.not.be.instanceOf(ContentRejectedError);
    expect(String(refused)).to.match(/content jobs are already waiting/);
    await Promise.all(running);
  });

  it("starts no thread before work arrives, and stops an idle thread so its memory is returned", async () => {
    const before = threads();
    pool = createContentPool({ threads: 1, idleMs: 1_000 });
    pool.prepare();
    await sleep(200);
    expect(threads(), "threads before any job").to.equal(before);
    const baseline = rssMb();
    expect((await pool.analyse("a", input(page(300)))).spoken).to.match(/^Some words/);
    const busy = threads();
    const withThread = rssMb();
    expect(busy, "a job started a thread").to.be.above(before);
    // Stopped after idleMs; polled, since a loaded machine may stop it late.
    const deadline = Date.now() + 20_000;
    while (threads() > before && Date.now() < deadline) await sleep(100);
    expect(threads(), "threads once idle").to.equal(before);
    // Most of what the thread added is given back (its heap); a generous share, as allocators keep some.
    expect(rssMb(), `RSS ${baseline.toFixed(0)} MB before the job, ${withThread.toFixed(0)} with the thread`).to.be.below(withThread - (withThread - baseline) / 2);
    // The next job starts a thread again.
    expect((await pool.analyse("b", input(page(10)))).spoken).to.match(/^Some words/);
  });
});
