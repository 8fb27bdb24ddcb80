// The console for keyboard, screen-reader and phone users, in Chromium against the embedded
// default: where focus goes on each route change and what is announced, how many Tabs reach the
// first field and the player, the header and the tables at 375 px, and the article's text read
// along with the platform's player. Figures (Tab counts, header height) go into the summary.
import { expect } from "chai";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Writable } from "node:stream";
import type { Browser, Page } from "playwright-core";
import { startEmbedded, type Embedded } from "../../launch/embedded.js";
import { api, waitFor } from "../../test/support/http.js";
import { requireChromium } from "../../test/support/chromium.js";
import { ConsoleBrowser, importArchive, launchChromium, PAGES, sentencesHighlighted } from "./console-flows.js";

const FULL = "console-a11y-0123456789";
const AXE = path.resolve("node_modules/axe-core/axe.min.js");
const readFileText = (p: string) => readFile(p, "utf8");
const sink = () => new Writable({ write: (_c, _e, cb) => cb() });

/** The focused element, through shadow roots: "tag#id.class", the host chain joined by " > ". */
const focused = (page: Page) =>
  page.evaluate(() => {
    const parts: string[] = [];
    let el = document.activeElement as HTMLElement | null;
    while (el) {
      parts.push(`${el.tagName.toLowerCase()}#${el.id}.${typeof el.className === "string" ? el.className : ""}`);
      el = (el.shadowRoot?.activeElement as HTMLElement | null) ?? null;
    }
    return parts.join(" > ");
  });

/** Tabs from where focus is now until it matches `pattern` (as a keyboard user would). */
async function tabsTo(page: Page, pattern: RegExp, max = 40): Promise<number> {
  for (let i = 0; i <= max; i++) {
    if (pattern.test(await focused(page))) return i;
    await page.keyboard.press("Tab");
  }
  throw new Error(`${pattern} not reached in ${max} Tabs; focus is on ${await focused(page)}`);
}

describe("publisher console: focus, announcements, small screens and the article's text (Chromium)", function () {
  this.timeout(300_000);
  let dataDir: string;
  let sys: Embedded;
  let browser: Browser;
  let cb: ConsoleBrowser;
  let A: ReturnType<typeof api>;
  const summary: string[] = [];

  before(async function () {
    requireChromium(this);
    dataDir = await mkdtemp(path.join(tmpdir(), "e2e-console-a11y-"));
    sys = await startEmbedded(
      { PORT: "0", HOST: "127.0.0.1", DATA_DIR: dataDir, SEED_TOKENS: JSON.stringify([{ token: FULL, project: "a11y", scope: "full" }]), AUDIO_ENGINE: process.env.AUDIO_ENGINE },
      sink(),
    );
    A = api(sys.url, FULL);
    browser = await launchChromium();
    cb = new ConsoleBrowser(browser, sys.url);
  });

  after(async () => {
    if (summary.length) console.log(`      console a11y summary:\n${summary.map((l) => `        ${l}`).join("\n")}`);
    await browser?.close();
    await sys?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  afterEach(() => cb?.expectNoErrors());

  it("counts in words through Intl.PluralRules in English and German: one article, one rule", async () => {
    const made = await A("POST", "/api/articles", { title: "The only one", text: "One article in the project." });
    expect(made.status).to.equal(200);
    for (const [lang, pager, saved] of [
      ["en", "Page 1 of 1 (1 article)", "Saved: 1 rule."],
      ["de", "Seite 1 von 1 (1 Artikel)", "Gespeichert: 1 Regel."],
    ]) {
      const { ctx, page } = await cb.newPage({ token: FULL, lang });
      await page.goto(`${sys.url}/console/#/articles`);
      await page.locator(".pager span").waitFor();
      expect(await page.locator(".pager span").textContent()).to.equal(pager);
      await page.goto(`${sys.url}/console/#/pronunciations`);
      await page.locator("#add-rule").click();
      await page.locator("tr.rule .r-match").last().fill("NABU");
      await page.locator("tr.rule .r-say").last().fill("Nah-boo");
      await page.locator("#save-rules").click();
      await page.locator(".notice.ok").waitFor();
      expect(await page.locator(".notice.ok").textContent()).to.equal(saved);
      await A("PUT", "/api/pronunciations", []);
      await ctx.close();
    }
  });

  it("shows the article's text, its published date and source, and highlights each sentence as the platform's player plays it", async () => {
    const paragraphs = ["The river rose all night. By morning the bridge was closed.", "Volunteers filled sandbags at the school. The water fell by noon."];
    const made = await A("POST", "/api/articles", { title: "Flood at the bridge", text: paragraphs.join("\n\n"), url: "https://news.example/flood" });
    expect(made.status).to.equal(200);
    const id = made.body.id as string;
    await waitFor("ready", async () => ((await A("GET", `/api/articles/${id}`)).body.article.status === "ready" ? true : undefined), 120_000, 250);
    const { ctx, page } = await cb.newPage({ token: FULL });
    await page.goto(`${sys.url}/console/#/article/${encodeURIComponent(id)}`);
    await page.locator("#article-text p").first().waitFor();
    expect(await page.locator("#article-text p").allTextContents()).to.deep.equal(paragraphs);
    const byline = (await page.locator(".byline").textContent())!;
    expect(byline).to.match(/^Published \w{3} \d{1,2}, \d{4}/).and.include("Source: https://news.example/flood");
    expect(await page.locator("#article-source").getAttribute("href")).to.equal("https://news.example/flood");
    // The player's own read-along: the sentence heard is a range of the text on this page.
    const heard = await sentencesHighlighted(page, 2);
    const sentences = paragraphs.flatMap((p) => p.split(/(?<=\.) /));
    expect(heard).to.deep.equal(sentences.slice(0, 2));
    // An article that says when it was published shows that date instead of when it was added.
    await page.route(`**/api/articles/${encodeURIComponent(id)}`, async (route) => {
      const res = await route.fetch();
      const body = await res.json();
      body.article.published = "2025-03-01T12:00:00Z";
      await route.fulfill({ response: res, json: body });
    });
    await page.goto(`${sys.url}/console/#/articles`);
    await page.goto(`${sys.url}/console/#/article/${encodeURIComponent(id)}`);
    await page.locator(".byline", { hasText: "2025" }).waitFor();
    expect(await page.locator(".byline").textContent()).to.match(/^Published Mar [12], 2025, \d{1,2}:\d{2}\s(AM|PM) · Source: /);
    await ctx.close();
  });

  it("moves focus to the new page's heading and names the page in a polite live region after sign-in, New article, Create and the language switch; Tab counts to the first field and to Play stay at most 3", async () => {
    const { ctx, page } = await cb.newPage();
    const announced = () => page.locator("#announcer").textContent();
    await page.goto(`${sys.url}/console/`);
    expect(await focused(page)).to.match(/^input#token/);
    await page.keyboard.type(FULL);
    await page.keyboard.press("Enter");
    await page.locator("table.articles, .empty").first().waitFor();
    await waitFor("focus on the heading", async () => (/^h1#page-title/.test(await focused(page)) ? true : undefined), 10_000, 50);
    expect(await page.locator("h1:focus").textContent()).to.equal("Articles");
    await waitFor("announced", async () => ((await announced()) === "Articles, page loaded" ? true : undefined), 15_000, 50);
    expect(await page.locator("#announcer").getAttribute("aria-live")).to.equal("polite");

    // New article, with the keyboard: its heading, then one field away from Title.
    await tabsTo(page, /^a#new-article/);
    await page.keyboard.press("Enter");
    await page.locator("h1:focus", { hasText: "New article" }).waitFor();
    await waitFor("announced", async () => ((await announced()) === "New article, page loaded" ? true : undefined), 15_000, 50);
    const toTitle = await tabsTo(page, /^input#a-title/);
    await page.keyboard.type("Focus and Tabs");
    await page.locator("#a-text").fill("A short text to be read. It has two sentences.");
    await page.locator("#a-title").press("Enter");
    await page.waitForURL(/#\/article\//);
    await page.locator("h1:focus", { hasText: "Focus and Tabs" }).waitFor();
    await page.locator("#audio-full button.play").waitFor({ timeout: 120_000 });
    expect(await focused(page), "focus stays on the heading while the audio is made").to.match(/^h1#page-title/);
    const toPlay = await tabsTo(page, /^article-audio-player#audio-full.* > button#\.play/);
    summary.push(`Tabs from the page's heading: ${toTitle} to Title after New article (was 10), ${toPlay} to Play after Create (was 15)`);
    expect(toTitle).to.be.at.most(3);
    expect(toPlay).to.be.at.most(3);

    // The language switch draws the page again in German: focus stays on the switch, the page is named again.
    await page.locator("#lang-switch").focus();
    await page.locator("#lang-switch").selectOption("de");
    await waitFor("announced in German", async () => ((await announced()) === "Focus and Tabs, Seite geladen" ? true : undefined), 15_000, 50);
    expect(await focused(page)).to.match(/^select#lang-switch/);
    expect(await page.evaluate(() => document.documentElement.lang)).to.equal("de");
    await page.locator("#lang-switch").selectOption("en");
    await waitFor("back in English", async () => ((await announced()) === "Focus and Tabs, page loaded" ? true : undefined), 15_000, 50);

    // "Skip to content" comes before the navigation and lands on the page's heading.
    await page.locator("nav a").first().focus();
    await page.keyboard.press("Shift+Tab");
    expect(await focused(page)).to.match(/^a#\.skip/);
    expect(await page.locator("a.skip").evaluate((a) => a.getBoundingClientRect().left), "shown when focused").to.be.at.least(0);
    expect(await page.locator("a.skip").textContent()).to.equal("Skip to content");
    await page.keyboard.press("Enter");
    expect(await focused(page)).to.match(/^h1#page-title/);
    await ctx.close();
  });

  it("at 375 px: a header of at most 100 px with a menu button, tables as labelled cards, nothing that scrolls sideways on any page", async () => {
    await A("PUT", "/api/pronunciations", [{ match: "NABU", say: "Nah-boo", ipa: "ˈnaːbu", lang: "de" }]);
    const made = await A("POST", "/api/articles", { title: "Small screens", text: "A text for the phone. It is short." });
    expect(made.status, JSON.stringify(made.body)).to.equal(200);
    const article = made.body.id as string;
    for (const dark of [false, true]) {
      const { ctx, page } = await cb.newPage({ token: FULL, width: 375, height: 800, dark, bypassCSP: true });
      await page.goto(`${sys.url}/console/#/articles`);
      await page.locator("table.articles").waitFor();
      const header = await page.locator("header.top").evaluate((e) => e.getBoundingClientRect().height);
      if (!dark) summary.push(`header at 375 px: ${header.toFixed(0)} px (was 234)`);
      expect(header).to.be.at.most(100);
      // The navigation is behind the menu button; Escape closes it and gives focus back.
      const toggle = page.locator("#menu-toggle");
      expect(await toggle.getAttribute("aria-expanded")).to.equal("false");
      expect(await page.locator("nav a").first().isVisible()).to.equal(false);
      await toggle.click();
      expect(await toggle.getAttribute("aria-expanded")).to.equal("true");
      await page.locator("nav a", { hasText: "Statistics" }).waitFor();
      await page.evaluate(await readFileText(AXE));
      const r = (await page.evaluate(`axe.run(document, { resultTypes: ["violations"], rules: { "target-size": { enabled: true } } })`)) as { violations: Array<{ id: string }> };
      expect(r.violations.map((v) => v.id), "axe with the menu open").to.deep.equal([]);
      await page.locator("nav a", { hasText: "Pronunciations" }).focus();
      await page.keyboard.press("Escape");
      expect(await focused(page)).to.match(/^button#menu-toggle/);
      expect(await toggle.getAttribute("aria-expanded")).to.equal("false");
      await toggle.click();
      await page.locator("nav a", { hasText: "Pronunciations" }).click();
      await page.locator("table.rules").waitFor();
      expect(await toggle.getAttribute("aria-expanded"), "the menu closes on navigation").to.equal("false");
      // The rules table as cards: every cell under its column's name, Listen and Remove in view.
      const cells = await page.locator("table.rules tbody tr").first().locator("td").evaluateAll((tds) => tds.map((td) => [td.getAttribute("data-label"), getComputedStyle(td, "::before").content]));
      expect(cells.map((c) => c[0])).to.deep.equal(["Word or phrase", "Say as", "IPA", "Spell", "Match case", "Language", "Actions"]);
      expect(cells.every(([label, shown]) => shown === `"${label}"`)).to.equal(true);
      for (const b of ["Listen", "Remove"]) {
        const box = (await page.locator("table.rules button", { hasText: b }).first().boundingBox())!;
        expect(box.x + box.width, `${b} within the screen`).to.be.at.most(375);
      }
      // Signed out, the header holds the language and theme switches only: it stays small too.
      const { ctx: out, page: signin } = await cb.newPage({ width: 375, height: 800, dark });
      await signin.goto(`${sys.url}/console/`);
      await signin.locator("#token").waitFor();
      const signinHeader = await signin.locator("header.top").evaluate((e) => e.getBoundingClientRect().height);
      if (!dark) summary.push(`sign-in header at 375 px: ${signinHeader.toFixed(0)} px`);
      expect(signinHeader).to.be.at.most(100);
      expect(await signin.evaluate(() => document.scrollingElement!.scrollWidth)).to.be.at.most(375);
      // Its language switch is behind the menu too; choosing a language keeps the menu open and focus on the switch.
      await signin.locator("#menu-toggle").click();
      await signin.locator("#lang-switch").selectOption("de");
      await signin.locator("#menu-toggle", { hasText: "Menü" }).waitFor();
      expect(await signin.locator("#menu-toggle").getAttribute("aria-expanded")).to.equal("true");
      expect(await focused(signin)).to.match(/^select#lang-switch/);
      await out.close();
      for (const p of PAGES) {
        await page.goto(`${sys.url}/console/${p.hash || `#/article/${encodeURIComponent(article)}`}`);
        await page.locator(p.ready).first().waitFor();
        await page.waitForLoadState("networkidle");
        const wide = await page.evaluate(() => ({
          page: document.scrollingElement!.scrollWidth,
          view: innerWidth,
          inner: [...document.querySelectorAll("main *")].filter((e) => e.scrollWidth > e.clientWidth + 1 && ["auto", "scroll"].includes(getComputedStyle(e).overflowX)).map((e) => `${e.tagName.toLowerCase()}.${e.className}`),
        }));
        expect(wide.page, `${p.name}: the page's width`).to.be.at.most(wide.view);
        expect(wide.inner, `${p.name}: boxes that scroll sideways`).to.deep.equal([]);
      }
      await ctx.close();
    }
  });

  it("keeps focus on the control used when only the list's query changes (a filter, the pager)", async () => {
    expect(await importArchive(sys.url, FULL, 25)).to.match(/"imported":25/);
    const { ctx, page } = await cb.newPage({ token: FULL });
    await page.goto(`${sys.url}/console/#/articles?limit=10`);
    await page.locator(".pager span").waitFor();
    await page.locator("#filter-status").focus();
    await page.locator("#filter-status").selectOption("waiting");
    await page.waitForURL(/status=waiting/);
    await page.locator("table.articles").waitFor();
    await waitFor("focus back on the filter", async () => (/^select#filter-status/.test(await focused(page)) ? true : undefined), 10_000, 50);
    await page.keyboard.press("Shift+Tab");
    await page.keyboard.press("Tab");
    expect(await focused(page), "the redrawn filter, in the page's order").to.match(/^select#filter-status/);
    await page.locator("#page-next").focus();
    await page.keyboard.press("Enter");
    await page.waitForURL(/page=1/);
    await page.locator(".pager span", { hasText: "Page 2 of" }).waitFor();
    await waitFor("focus back on Next", async () => (/^button#page-next/.test(await focused(page)) ? true : undefined), 10_000, 50);
    // Another page is another route: focus goes to its heading.
    await page.locator("#new-article").focus();
    await page.keyboard.press("Enter");
    await page.locator("h1:focus", { hasText: "New article" }).waitFor();
    await ctx.close();
  });
});
