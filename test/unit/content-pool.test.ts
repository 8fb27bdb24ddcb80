// The content pool's limits and fairness, on its real worker threads.
import { expect } from "chai";
import { htmlDepth } from "../../services/articles/content/analyse.js";
import { ContentRejectedError } from "../../services/articles/content/limits.js";
import { createContentPool, type ContentWork } from "../../services/articles/content/pool.js";

const page = (paragraphs: number) => `<article>${"<p>Some words in a sentence about the council and its budget.</p>".repeat(paragraphs)}</article>`;
const input = (text: string) => ({ title: "T", text, lang: "en", parse: true });

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
    expect(await rejection(pool.analyse("a", input(page(20_000))))).to.equal("content extraction took longer than 150 ms");
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
});
