// Bulk actions in the console (issue 36, points 2 and 3), in Chromium against the embedded default:
// rows selected one by one or "all N matching" the filter, the action confirmed with its count, the
// job's progress until it ends, Cancel; and after a pronunciation fix, the count of ready articles
// that say its words with "Regenerate these N". axe on the views the bulk controls add, in both languages.
import { expect } from "chai";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Writable } from "node:stream";
import type { Browser, Page } from "playwright-core";
import { startEmbedded, type Embedded } from "../../launch/embedded.js";
import { api, waitFor } from "../../test/support/http.js";
import { requireChromium } from "../../test/support/chromium.js";
import { ConsoleBrowser, importArchive, launchChromium } from "./console-flows.js";

const FULL = "console-bulk-full-0123456789";
const READ = "console-bulk-read-0123456789";
const AXE = path.resolve("node_modules/axe-core/axe.min.js");
const sink = () => new Writable({ write: (_c, _e, cb) => cb() });

describe("publisher console: bulk actions and fixing a name everywhere (Chromium)", function () {
  this.timeout(300_000);
  let dataDir: string;
  let sys: Embedded;
  let browser: Browser;
  let cb: ConsoleBrowser;
  let A: ReturnType<typeof api>;
  const axeViolations: string[] = [];

  before(async function () {
    requireChromium(this);
    dataDir = await mkdtemp(path.join(tmpdir(), "e2e-console-bulk-"));
    sys = await startEmbedded(
      {
        PORT: "0",
        HOST: "127.0.0.1",
        DATA_DIR: dataDir,
        SEED_TOKENS: JSON.stringify([
          { token: FULL, project: "bulk", scope: "full" },
          { token: READ, project: "bulk", scope: "read" },
        ]),
        AUDIO_ENGINE: process.env.AUDIO_ENGINE,
        // Two writes a second (a burst of 8): a job of 30 articles runs long enough to be watched and cancelled.
        RATE_LIMIT_WRITES_PER_SECOND: "2",
        RATE_LIMIT_WRITES_BURST: "8",
      },
      sink(),
    );
    A = api(sys.url, FULL);
    // 30 articles through the import (its own bucket), stored waiting on demand: labelled "even" and "odd" in turn.
    expect(await importArchive(sys.url, FULL, 30)).to.equal('{"result":"ok","imported":30,"failed":0}');
    browser = await launchChromium();
    cb = new ConsoleBrowser(browser, sys.url);
  });

  after(async () => {
    await browser?.close();
    await sys?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  afterEach(() => cb?.expectNoErrors());

  async function axe(page: Page, name: string): Promise<void> {
    await page.evaluate(await readFile(AXE, "utf8"));
    const r = (await page.evaluate(`axe.run(document, { resultTypes: ["violations"] })`)) as { violations: Array<{ id: string; nodes: Array<{ target: string[] }> }> };
    for (const v of r.violations) axeViolations.push(`${name}: ${v.id} at ${v.nodes.map((n) => n.target.join(" ")).slice(0, 3).join(", ")}`);
  }

  /** Confirms the dialog after checking it names the count. */
  async function confirmWith(page: Page, words: RegExp): Promise<void> {
    const dialog = page.locator("dialog.confirm");
    await dialog.waitFor();
    expect(await dialog.locator("p").textContent()).to.match(words);
    await dialog.locator("[data-confirm]").click();
  }

  const labelsOf = async (id: string) => (await A("GET", `/api/articles/${id}`)).body.article.labels as string[];

  it("adds a label to two selected rows: the confirmation names the count, the progress ends in 'Finished', the labels are there", async () => {
    const { page } = await cb.newPage({ token: FULL, bypassCSP: false });
    await page.goto(`${sys.url}/console/#/articles`);
    await page.locator("table.articles").waitFor();
    const boxes = page.locator("td.select input");
    expect(await boxes.count()).to.equal(25);
    await boxes.nth(0).check();
    await boxes.nth(1).check();
    expect(await page.locator("#bulk-selected").textContent()).to.equal("2 articles selected.");
    const ids = await page.locator("td.select input").evaluateAll((els) => els.slice(0, 2).map((e) => (e as HTMLInputElement).value));
    await page.locator("#bulk-action").selectOption("addLabels");
    await page.locator("#bulk-labels").fill("picked");
    await page.locator("#bulk-apply").click();
    await confirmWith(page, /^Add the labels picked to 2 articles\?$/);
    await page.locator("#bulk-state .notice.ok").waitFor({ timeout: 60_000 });
    expect(await page.locator("#bulk-state").textContent()).to.include("Finished: 2 done, 0 failed.");
    for (const id of ids) expect(await labelsOf(id)).to.include("picked");
    await axe(page, "articles with a finished bulk action (en)");
  });

  it("selects all N matching a filter, watches the progress and cancels: what was done stays done, the rest is untouched", async () => {
    const { page } = await cb.newPage({ token: FULL, lang: "de" });
    await page.goto(`${sys.url}/console/#/articles?label=even`);
    await page.locator("table.articles").waitFor();
    await page.locator("#bulk-all").click();
    expect(await page.locator("#bulk-selected").textContent()).to.equal("Alle 15 passenden Artikel ausgewählt.");
    await page.locator("#bulk-action").selectOption("addLabels");
    await page.locator("#bulk-labels").fill("later");
    await page.locator("#bulk-apply").click();
    await confirmWith(page, /15 Artikeln/);
    await page.locator("#bulk-bar").waitFor();
    await axe(page, "articles with a running bulk action (de)");
    await waitFor("some progress", async () => ((await page.locator("#bulk-bar").evaluate((b) => (b as HTMLProgressElement).value)) >= 2 ? true : undefined), 60_000, 100);
    await page.locator("#bulk-cancel").click();
    await page.locator("#bulk-state .notice").waitFor({ timeout: 30_000 });
    expect(await page.locator("#bulk-state").textContent()).to.match(/Abgebrochen: \d+ erledigt/);
    const labelled = (await A("GET", "/api/articles?label=later")).body.count as number;
    expect(labelled).to.be.at.least(2).and.below(15);
  });

  it("deletes all articles of a label after confirming the count, and a read token sees no bulk controls", async () => {
    const { page } = await cb.newPage({ token: FULL });
    await page.goto(`${sys.url}/console/#/articles?label=odd&limit=10`);
    await page.locator("table.articles").waitFor();
    expect(await page.locator("#bulk-all").textContent()).to.equal("Select all 15 matching articles");
    await page.locator("#bulk-all").click();
    await page.locator("#bulk-action").selectOption("delete");
    expect(await page.locator("#bulk-labels").isVisible()).to.equal(false);
    await page.locator("#bulk-apply").click();
    await confirmWith(page, /^Delete 15 articles\?/);
    await page.locator("#bulk-state .notice").waitFor({ timeout: 60_000 });
    expect(await page.locator("#bulk-state").textContent()).to.include("Finished: 15 done, 0 failed.");
    expect((await A("GET", "/api/articles?label=odd")).body.count).to.equal(0);
    expect((await A("GET", "/api/articles")).body.count).to.equal(15);

    const { page: reader } = await cb.newPage({ token: READ, scope: "read" });
    await reader.goto(`${sys.url}/console/#/articles`);
    await reader.locator("table.articles").waitFor();
    expect(await reader.locator(".bulk, td.select").count()).to.equal(0);
  });

  it("after a pronunciation fix, says how many ready articles contain the words (as GET /api/articles?q= counts them) and regenerates them", async () => {
    const made: string[] = [];
    for (const text of ["The NABU survey counted storks.", "Nabu volunteers met on Sunday."]) made.push((await A("POST", "/api/articles", { title: "Local news", text })).body.id);
    for (const id of made) await waitFor(`${id} ready`, async () => ((await A("GET", `/api/articles/${id}`)).body.article.status === "ready" ? true : undefined), 120_000, 200);
    const expected = (await A("GET", "/api/articles?q=Nabu&status=ready")).body.count as number;
    expect(expected).to.equal(2);

    const { page } = await cb.newPage({ token: FULL });
    await page.goto(`${sys.url}/console/#/pronunciations`);
    await page.locator("table.rules").waitFor();
    await page.locator("#add-rule").click();
    await page.locator("tr.rule .r-match").last().fill("Nabu");
    await page.locator("tr.rule .r-say").last().fill("Nah-boo");
    await page.locator("#save-rules").click();
    const button = page.locator(".regenerate-affected");
    await button.waitFor();
    expect(await page.locator(".affected-rule p").textContent()).to.equal("Nabu: 2 ready articles say these words; their audio still has the old reading.");
    expect(await button.textContent()).to.equal("Regenerate these 2");
    await axe(page, "pronunciations after a save (en)");
    await button.click();
    await page.locator(".affected-progress .notice.ok").waitFor({ timeout: 60_000 });
    // A new revision of each, read with the rule.
    for (const id of made) expect((await A("GET", `/api/articles/${id}`)).body.article.audio ?? "revision 2 waiting").to.not.match(/\/1\/full\.mp3$/);
    expect(axeViolations).to.deep.equal([]);
  });
});
