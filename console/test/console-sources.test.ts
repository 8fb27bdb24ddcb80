// The Sources page of the console (issue 35, point 6), in Chromium against the embedded default:
// follow a feed from the form, see its state (kind, last and next poll, items), poll it now,
// pause and resume it, see a failing feed's error in words, delete it; German too, and axe finds
// nothing with sources listed (one failing, one paused) in English and German at 1280 and 375 px.
// Feeds come from a loopback site that FETCH_ALLOW_PRIVATE lists with its port.
import { expect } from "chai";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { requireChromium } from "../../test/support/chromium.js";
import { api, waitFor } from "../../test/support/http.js";
import { startFeedServer, type FeedServer } from "../../test/sources/feed-server.js";
import { rssFeed } from "../../test/sources/feeds.js";
import { startConsoleSystem, type ConsoleBrowser, type ConsoleSystem } from "./console-flows.js";

const FULL = "console-sources-0123456789";
const AXE = path.resolve("node_modules/axe-core/axe.min.js");

describe("publisher console: sources (Chromium)", function () {
  this.timeout(300_000);
  let system: ConsoleSystem | undefined;
  let sys: ConsoleSystem["sys"];
  let cb: ConsoleBrowser;
  let site: FeedServer;

  before(async function () {
    requireChromium(this);
    site = await startFeedServer();
    system = await startConsoleSystem({ name: "sources", token: FULL, project: "sources", env: { FETCH_ALLOW_PRIVATE: `127.0.0.1:${site.port}` } });
    ({ sys, cb } = system);
  });

  after(async () => {
    await system?.close();
    await site?.close();
  });

  afterEach(() => cb?.expectNoErrors());

  it("follows a feed from the form, polls it now, pauses and resumes it, shows a failing feed's error, deletes it", async () => {
    site.set("/news.xml", { body: rssFeed([]) });
    const { ctx, page } = await cb.newPage({ token: FULL });
    await page.goto(`${sys.url}/console/#/sources`);
    await page.locator("table.sources", { hasText: "No sources yet." }).waitFor();
    await page.locator("#source-url").fill(`${site.url}/news.xml`);
    await page.locator("#source-labels").fill("feed, local");
    await page.locator("#source-form button[type=submit]").click();
    await page.locator("#sources-out .notice.ok", { hasText: "first poll is running" }).waitFor();
    const row = page.locator("tr.source", { hasText: `${site.url}/news.xml` });
    await row.waitFor();
    const A = api(sys.url, FULL);
    const [src] = (await A("GET", "/api/sources")).body.sources;
    expect(src).to.include({ pollSeconds: 300, mode: "text" });
    expect(src.labels).to.deep.equal(["feed", "local"]);

    // A new item, then "Poll now": the row counts it.
    await waitFor("first poll", async () => ((await A("GET", `/api/sources/${src.id}`)).body.source.state.lastPoll ? true : undefined));
    site.set("/news.xml", { body: rssFeed([{ id: "urn:c:1", link: `${site.url}/c/1`, title: "Harbour reopens", html: "<p>The harbour reopened on Monday.</p>", date: new Date().toISOString() }]) });
    await row.locator(".poll-now").click();
    await page.locator("#sources-out .notice.ok", { hasText: "Polled." }).waitFor();
    await page.locator("tr.source .source-counts", { hasText: "in the feed: 1 · articles created: 1" }).waitFor();
    expect(await page.locator("tr.source .source-status").textContent()).to.equal("active");

    await page.locator("tr.source .pause").click();
    await page.locator("tr.source .source-status", { hasText: "paused" }).waitFor();
    expect(await page.locator("tr.source .pause").getAttribute("aria-pressed")).to.equal("true");
    expect((await A("GET", `/api/sources/${src.id}`)).body.source.paused).to.equal(true);
    await page.locator("tr.source .pause", { hasText: "Resume" }).click();
    await page.locator("tr.source .source-status", { hasText: "active" }).waitFor();

    site.set("/news.xml", { status: 500, body: "down", type: "text/plain" });
    await page.locator("tr.source .poll-now").click();
    await page.locator("tr.source .source-error", { hasText: "the feed answered HTTP 500" }).waitFor();
    expect(await page.locator("tr.source .source-status").textContent()).to.equal("failing");

    await page.locator("tr.source .delete-source").click();
    await page.locator("dialog.confirm [data-confirm]").click();
    await page.locator("#sources-out .notice.ok", { hasText: "its articles are kept" }).waitFor();
    await page.locator("table.sources", { hasText: "No sources yet." }).waitFor();
    expect((await A("GET", "/api/articles_external_id/urn%3Ac%3A1")).status).to.equal(200);
    await ctx.close();
  });

  it("refuses a bad address with the API's message, and reads in German", async () => {
    const { ctx, page } = await cb.newPage({ token: FULL, lang: "de" });
    await page.goto(`${sys.url}/console/#/sources`);
    await page.locator("h1", { hasText: "Quellen" }).waitFor();
    await page.locator("#source-url").fill("http://10.1.2.3/feed.xml");
    await page.locator("#source-form button[type=submit]").click();
    await page.locator("#sources-out .notice.error", { hasText: "private" }).waitFor();
    expect(await page.locator("#source-form button[type=submit]").textContent()).to.equal("Folgen");
    await ctx.close();
  });

  it("has no axe violations with sources listed, in English and German, at 1280 and 375 px", async () => {
    const A = api(sys.url, FULL);
    site.set("/ok.xml", { body: rssFeed([]) });
    site.set("/broken.xml", { body: "not a feed", type: "text/html" });
    for (const p of ["/ok.xml", "/broken.xml"]) expect((await A("POST", "/api/sources", { url: `${site.url}${p}` })).status).to.equal(200);
    const ids = (await A("GET", "/api/sources")).body.sources.map((s: { id: string }) => s.id);
    await A("PUT", `/api/sources/${ids[0]}`, { paused: true });
    await waitFor("polled", async () => ((await A("GET", `/api/sources/${ids[1]}`)).body.source.state.error ? true : undefined));
    const axe = await readFile(AXE, "utf8");
    const found: string[] = [];
    for (const lang of ["en", "de"]) {
      for (const width of [1280, 375]) {
        const { ctx, page } = await cb.newPage({ token: FULL, lang, width, bypassCSP: true });
        await page.goto(`${sys.url}/console/#/sources`);
        await page.locator("tr.source .source-error").waitFor();
        await page.evaluate(axe);
        const r = (await page.evaluate(`axe.run(document, { resultTypes: ["violations"], rules: { "target-size": { enabled: true } } })`)) as { violations: Array<{ id: string; nodes: Array<{ target: string[] }> }> };
        found.push(...r.violations.map((v) => `${lang} ${width}px: ${v.id} at ${v.nodes.map((n) => n.target.join(" ")).slice(0, 3).join(", ")}`));
        const wide = await page.evaluate(() => document.scrollingElement!.scrollWidth);
        if (wide > width) found.push(`${lang} ${width}px: the page is ${wide} px wide`);
        await ctx.close();
      }
    }
    expect(found).to.deep.equal([]);
  });
});
