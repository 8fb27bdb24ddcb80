// The article list's search box (issue 36, point 1) in Chromium against the embedded default:
// words typed as an editor types them find the articles, the query stays in the address (a
// reload, a shared link and Back give the same view), it combines with the filters and pages,
// and the view has no axe violations in English and German, light and dark, at 1280 and 375 px.
import { expect } from "chai";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Writable } from "node:stream";
import type { Browser } from "playwright-core";
import { startEmbedded, type Embedded } from "../../launch/embedded.js";
import { requireChromium } from "../../test/support/chromium.js";
import { ConsoleBrowser, importArchive, launchChromium } from "./console-flows.js";

const FULL = "console-search-0123456789";
const AXE = path.resolve("node_modules/axe-core/axe.min.js");
const sink = () => new Writable({ write: (_c, _e, cb) => cb() });

describe("publisher console: searching the article list (Chromium)", function () {
  this.timeout(300_000);
  let dataDir: string;
  let sys: Embedded;
  let browser: Browser;
  let cb: ConsoleBrowser;
  const made: Record<string, string> = {};

  before(async function () {
    requireChromium(this);
    dataDir = await mkdtemp(path.join(tmpdir(), "e2e-console-search-"));
    sys = await startEmbedded({ PORT: "0", HOST: "127.0.0.1", DATA_DIR: dataDir, SEED_TOKENS: JSON.stringify([{ token: FULL, project: "search", scope: "full" }]), AUDIO_ENGINE: process.env.AUDIO_ENGINE }, sink());
    // An archive the words must be found in (stored on demand: no audio made), then the articles searched for.
    expect(await importArchive(sys.url, FULL, 200)).to.equal('{"result":"ok","imported":200,"failed":0}');
    const searched = [
      ["herbst", "Neue Bücher im Herbst", "Romane und Sachbücher der Saison."],
      ["cafe", "Das Café am Hafen", "Ein Bücherregal und Kaffee."],
      ["other", "Weather report", "Rain again."],
    ];
    const res = await fetch(`${sys.url}/api/articles/import?audio=onDemand`, {
      method: "POST",
      headers: { authorization: `Bearer ${FULL}`, "content-type": "application/x-ndjson" },
      body: searched.map(([, title, text]) => JSON.stringify({ title, text, labels: ["kultur"] })).join("\n"),
    });
    const lines = (await res.text()).trim().split("\n").map((l) => JSON.parse(l) as { line?: number; id?: string });
    for (const l of lines) if (l.line !== undefined) made[searched[l.line - 1][0]] = l.id!;
    expect(Object.keys(made)).to.have.length(3);
    browser = await launchChromium();
    cb = new ConsoleBrowser(browser, sys.url);
  });

  after(async () => {
    await browser?.close();
    await sys?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  afterEach(() => cb?.expectNoErrors());

  const ids = (page: import("playwright-core").Page) =>
    page.locator("table.articles tbody tr td a[href^='#/article/']").evaluateAll((els) => els.map((e) => decodeURIComponent((e as HTMLAnchorElement).hash.replace("#/article/", ""))));

  it("finds by words without accents, keeps the query in the address, combines with a filter, and clears", async () => {
    const { ctx, page } = await cb.newPage({ token: FULL });
    await page.goto(`${sys.url}/console/#/articles`);
    await page.locator("table.articles").waitFor();
    await page.locator("#search-q").fill("bucher");
    await page.locator("#search-q").press("Enter");
    await page.waitForURL(/[?&]q=bucher/);
    await page.locator("table.articles caption", { hasText: "bucher" }).waitFor({ state: "attached" });
    // "Bücher" in the title ranks above "Bücherregal" in the text.
    expect(await ids(page)).to.deep.equal([made.herbst, made.cafe]);
    expect(await page.locator(".pager span").textContent()).to.equal("Page 1 of 1 (2 articles)");

    // The address alone gives the same view (a reload, a link someone sent).
    await page.reload();
    await page.locator("table.articles caption", { hasText: "bucher" }).waitFor({ state: "attached" });
    expect(await page.locator("#search-q").inputValue()).to.equal("bucher");
    expect(await ids(page)).to.deep.equal([made.herbst, made.cafe]);

    // Two words in any order, with a filter beside them.
    await page.locator("#search-q").fill("hafen BÜCH");
    await page.locator("#search-q").press("Enter");
    await page.waitForURL(/q=hafen/);
    await page.locator("table.articles caption", { hasText: "hafen" }).waitFor({ state: "attached" });
    expect(await ids(page)).to.deep.equal([made.cafe]);
    await page.locator("#filter-status").selectOption("ready");
    await page.waitForURL(/status=ready/);
    expect(page.url()).to.include("q=hafen");
    await page.locator(".empty").waitFor();
    expect(await page.locator(".empty").textContent()).to.equal("No article contains all of “hafen BÜCH”.");

    // Back to the search without the filter, then clear it: the whole list again.
    await page.goBack();
    await page.locator("table.articles caption", { hasText: "hafen" }).waitFor({ state: "attached" });
    await page.locator("#search-clear").click();
    await page.waitForURL((u) => !u.hash.includes("q="));
    await page.locator(".pager span", { hasText: "(203 articles)" }).waitFor();
    await ctx.close();
  });

  it("says a refused query in words and keeps the page usable", async () => {
    const { ctx, page } = await cb.newPage({ token: FULL });
    await page.goto(`${sys.url}/console/#/articles?q=${encodeURIComponent("!!!")}`);
    await page.locator(".notice").waitFor();
    expect(await page.locator(".notice").textContent()).to.contain("at least one word");
    expect(await page.locator("#search-q").inputValue()).to.equal("!!!");
    await ctx.close();
  });

  it("has no axe violations on the search results, in English and German, light and dark, at 1280 and 375 px", async () => {
    const axe = await readFile(AXE, "utf8");
    const results: string[] = [];
    for (const lang of ["en", "de"]) {
      for (const dark of [false, true]) {
        for (const width of [1280, 375]) {
          const { ctx, page } = await cb.newPage({ token: FULL, lang, dark, width, bypassCSP: true });
          await page.goto(`${sys.url}/console/#/articles?q=bucher`);
          await page.locator("table.articles").waitFor();
          await page.waitForLoadState("networkidle");
          await page.evaluate(axe);
          const r = (await page.evaluate(`axe.run(document, { resultTypes: ["violations"], rules: { "target-size": { enabled: true } } })`)) as { violations: Array<{ id: string; nodes: Array<{ target: string[] }> }> };
          for (const v of r.violations) results.push(`${lang} ${dark ? "dark" : "light"} ${width}px: ${v.id} at ${v.nodes.map((n) => n.target.join(" ")).slice(0, 3).join(", ")}`);
          const scroll = await page.evaluate(() => document.documentElement.scrollWidth);
          if (scroll > width) results.push(`${lang} ${dark ? "dark" : "light"} ${width}px: the page is ${scroll} px wide`);
          if (lang === "de") expect(await page.locator("label[for=search-q]").textContent()).to.contain("Suche");
          await ctx.close();
        }
      }
    }
    expect(results).to.deep.equal([]);
  });
});
