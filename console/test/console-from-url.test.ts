// "New article from URL" in the console (issue 35, points 1 and 6), in Chromium against the
// embedded default: the editor gives a page's address, the article page shows it being fetched,
// then the page's headline and text; a page that cannot be read shows why. axe finds nothing on
// the form in English and German. The pages come from a loopback site that FETCH_ALLOW_PRIVATE
// lists with its port.
import { expect } from "chai";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { articlePageHtml, newsParagraphs, PageServer } from "../../test/support/article-pages.js";
import { requireChromium } from "../../test/support/chromium.js";
import { api, waitFor } from "../../test/support/http.js";
import { startConsoleSystem, type ConsoleBrowser, type ConsoleSystem } from "./console-flows.js";

const FULL = "console-from-url-0123456789";
const AXE = path.resolve("node_modules/axe-core/axe.min.js");

describe("publisher console: new article from URL (Chromium)", function () {
  this.timeout(300_000);
  let system: ConsoleSystem | undefined;
  let sys: ConsoleSystem["sys"];
  let cb: ConsoleBrowser;
  const site = new PageServer();

  before(async function () {
    requireChromium(this);
    await site.start();
    system = await startConsoleSystem({ name: "from-url", token: FULL, project: "from-url", env: { FETCH_ALLOW_PRIVATE: `127.0.0.1:${site.port}` } });
    ({ sys, cb } = system);
  });

  after(async () => {
    await system?.close();
    await site.stop();
  });

  afterEach(() => cb?.expectNoErrors());

  it("from the articles list: the page's address in, the article page shows it fetched, then the page's headline and text", async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const paragraphs = newsParagraphs(400);
    site.pages.set("/news/harbour.html", async () => {
      await held;
      return { status: 200, body: articlePageHtml({ title: "Harbour reopens", paragraphs, lang: "en" }) };
    });
    const { ctx, page } = await cb.newPage();
    await cb.signIn(page, FULL);
    await page.locator("#new-from-url").click();
    await page.locator("h1", { hasText: "New article from URL" }).waitFor();
    await page.locator("#u-url").fill(`${site.url}/news/harbour.html`);
    await page.locator("#u-labels").fill("harbour, local");
    await page.locator("#url-form button[type=submit]").click();
    await page.waitForURL(/#\/article\//);
    await page.locator("#status-line .badge.s-recrawling").waitFor();
    release();
    // Read from its page: the page's headline becomes the heading, its paragraphs the text.
    await page.locator("h1", { hasText: "Harbour reopens" }).waitFor({ timeout: 60_000 });
    await page.locator("#article-text", { hasText: paragraphs[0].slice(0, 60) }).waitFor();
    const id = decodeURIComponent(/#\/article\/([^?]+)/.exec(page.url())![1]);
    const a = (await api(sys.url, FULL)("GET", `/api/articles/${id}`)).body.article;
    expect(a.labels).to.deep.equal(["harbour", "local"]);
    await ctx.close();
  });

  it("a page that answers 404 shows errored with the reason; a bad address is refused on the form", async () => {
    const { ctx, page } = await cb.newPage({ token: FULL });
    await page.goto(`${sys.url}/console/#/new-url`);
    await page.locator("#u-url").fill("not an address");
    await page.locator("#url-form button[type=submit]").click();
    await page.locator("#url-form .form-status", { hasText: "url" }).waitFor();
    await page.locator("#u-url").fill(`${site.url}/missing.html`);
    await page.locator("#url-form button[type=submit]").click();
    await page.waitForURL(/#\/article\//);
    await page.locator("#status-line .badge.s-errored").waitFor({ timeout: 60_000 });
    await page.locator("ul.errors li", { hasText: "the page answered 404 Not Found" }).waitFor();
    await ctx.close();
  });

  it("has no axe violations on the form, in English and German, at 1280 and 375 px", async () => {
    const axe = await readFile(AXE, "utf8");
    const found: string[] = [];
    for (const lang of ["en", "de"]) {
      for (const width of [1280, 375]) {
        const { ctx, page } = await cb.newPage({ token: FULL, lang, width, bypassCSP: true });
        await page.goto(`${sys.url}/console/#/new-url`);
        await page.locator("#url-form").waitFor();
        await waitFor("translated", async () => ((await page.evaluate(() => document.documentElement.lang)) === lang ? true : undefined), 10_000, 50);
        if (lang === "de") expect(await page.locator("h1").textContent()).to.equal("Neuer Artikel aus URL");
        await page.evaluate(axe);
        const r = (await page.evaluate(`axe.run(document, { resultTypes: ["violations"], rules: { "target-size": { enabled: true } } })`)) as { violations: Array<{ id: string }> };
        found.push(...r.violations.map((v) => `${lang} ${width}px: ${v.id}`));
        await ctx.close();
      }
    }
    expect(found).to.deep.equal([]);
  });
});
