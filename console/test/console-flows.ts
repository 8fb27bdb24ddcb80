// What the console's browser suites share: a Chromium that plays audio unattended, pages that
// report every CSP refusal and script error, sign-in, and the essential flows (an article from
// the form to ready and played, a read token's pages without write controls), so the embedded
// default and the full stack run the same steps.
import { expect } from "chai";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Writable } from "node:stream";
import { startEmbedded, type Embedded } from "../../launch/embedded.js";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { waitFor, type api } from "../../test/support/http.js";
import { CHROMIUM } from "../../test/support/chromium.js";

type Api = ReturnType<typeof api>;

/** Pages of the console, each with how to tell it has finished drawing. */
export const PAGES: Array<{ name: string; hash: string; ready: string }> = [
  { name: "articles", hash: "#/articles", ready: "table.articles" },
  { name: "article", hash: "", ready: "#status-line" },
  { name: "new", hash: "#/new", ready: "h1" },
  { name: "new-url", hash: "#/new-url", ready: "h1" },
  { name: "pronunciations", hash: "#/pronunciations", ready: "table.rules" },
  { name: "stats", hash: "#/stats", ready: ".kpis" },
  { name: "player", hash: "#/player", ready: "#snippet" },
  { name: "design", hash: "#/design", ready: "#contrast table" },
  { name: "import", hash: "#/import", ready: "h1" },
  { name: "sources", hash: "#/sources", ready: "table.sources" },
];

export const WRITE_CONTROLS = "#new-article, #bulk-apply, .bulk-box, #new-from-url, #url-form, #regenerate, #delete, details.edit, #add-rule, #save-rules, .listen, .remove, #save-player, #save-look, #verify-hosts, #rotate-key, #import-start, form.article-form, #source-form, .poll-now, .pause, .delete-source";

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--autoplay-policy=no-user-gesture-required", "--mute-audio"] });
}

export interface PageOptions {
  token?: string;
  scope?: "full" | "read";
  lang?: string;
  bypassCSP?: boolean;
  width?: number;
  height?: number;
  dark?: boolean;
}

/** The console of one gateway, opened in contexts like a publisher's browser. */
export class ConsoleBrowser {
  /** CSP refusals (the console message and the securitypolicyviolation event) and script errors. */
  readonly errors: string[] = [];
  /** Listening events any page sent (POST /player/v1/events). */
  readonly beacons: string[] = [];

  constructor(
    readonly browser: Browser,
    readonly url: string,
  ) {}

  async newPage(opts: PageOptions = {}): Promise<{ ctx: BrowserContext; page: Page }> {
    const ctx = await this.browser.newContext({
      viewport: { width: opts.width ?? 1280, height: opts.height ?? 900 },
      bypassCSP: opts.bypassCSP ?? false,
      colorScheme: opts.dark ? "dark" : "light",
      locale: opts.lang === "de" ? "de-DE" : "en-US",
    });
    // As if signed in already (the token in this tab's sessionStorage); not on about:blank.
    if (opts.token) await ctx.addInitScript(`if (location.protocol.startsWith("http")) { sessionStorage.setItem("console.token", ${JSON.stringify(opts.token)}); sessionStorage.setItem("console.token.scope", ${JSON.stringify(opts.scope ?? "full")}); }`);
    // The event also sees refusals inside shadow roots (it is composed), whatever the console logs.
    await ctx.addInitScript(`document.addEventListener("securitypolicyviolation", (e) => console.error("CSP violation: " + e.violatedDirective + " " + (e.blockedURI || "inline")), true)`);
    const page = await ctx.newPage();
    page.on("console", (m) => {
      if (/Content.Security.Policy|Refused to|CSP violation/i.test(m.text())) this.errors.push(m.text());
    });
    page.on("pageerror", (e) => this.errors.push(`page error: ${String(e)}`));
    page.on("request", (r) => void (r.url().includes("/player/v1/events") && this.beacons.push(`${r.method()} ${r.url()}`)));
    return { ctx, page };
  }

  /** For an afterEach hook: what the last test's pages refused or threw, then forgotten. */
  expectNoErrors(): void {
    expect(this.errors.splice(0), "no CSP refusals or script errors in the console").to.deep.equal([]);
  }

  async signIn(page: Page, token: string): Promise<void> {
    await page.goto(`${this.url}/console/`);
    await page.locator("#token").fill(token);
    await page.keyboard.press("Enter");
    await page.locator("table.articles, .empty").first().waitFor({ timeout: 20_000 });
  }
}

/** Submits the new-article form (already open) and answers the new article's id. */
export async function submitArticle(page: Page, a: { title: string; text: string; url: string; labels?: string }): Promise<string> {
  await page.locator("#a-title").fill(a.title);
  await page.locator("#a-text").fill(a.text);
  await page.locator("#a-url").fill(a.url);
  if (a.labels) await page.locator("#a-labels").fill(a.labels);
  await page.locator("form.article-form button[type=submit]").click();
  await page.waitForURL(/#\/article\//);
  return decodeURIComponent(/#\/article\/([^?]+)/.exec(page.url())![1]);
}

/** Follows the article page's status line until ready, without a reload; answers the statuses seen. */
export async function statusesUntilReady(page: Page): Promise<string[]> {
  await page.evaluate(() => ((window as unknown as { marker: number }).marker = 1));
  const seen = new Set<string>();
  await waitFor(
    "ready in the page",
    async () => {
      const cls = await page.locator("#status-line .badge").getAttribute("class");
      const s = cls?.replace(/^badge s-/, "") ?? "";
      seen.add(s);
      return s === "ready" ? true : undefined;
    },
    120_000,
    50,
  );
  expect(await page.evaluate(() => (window as unknown as { marker?: number }).marker), "no reload").to.equal(1);
  return [...seen];
}

const inPlayer = <T>(page: Page, id: string, fn: string): Promise<T> =>
  page.evaluate(`(() => { const root = document.getElementById(${JSON.stringify(id)}).shadowRoot; const audio = root.querySelector("audio"); return (${fn}); })()`) as Promise<T>;

/**
 * The article page's two players (full and preview audio): the full one plays from its own button,
 * the preview one holds the preview file, and the platform's player looks as styled (its
 * adopted sheet applied under the console's CSP).
 */
export async function playOnArticlePage(page: Page): Promise<void> {
  const play = page.locator("#audio-full button.play");
  await play.waitFor({ state: "visible", timeout: 20_000 });
  expect(await inPlayer<string>(page, "audio-full", `getComputedStyle(root.querySelector(".play")).borderRadius`), "the player's own styles apply").to.equal("999px");
  await play.click();
  await waitFor("playing", async () => ((await inPlayer<number>(page, "audio-full", "audio.currentTime")) > 0.3 ? true : undefined), 20_000, 100);
  await play.click();
  expect(await inPlayer<boolean>(page, "audio-full", "audio.paused")).to.equal(true);
  expect(await inPlayer<string>(page, "audio-full", "audio.src")).to.match(/full\.mp3$/);
  await page.locator("#audio-preview button.play").waitFor({ state: "visible" });
  expect(await inPlayer<string>(page, "audio-preview", "audio.src")).to.match(/preview\.mp3$/);
}

/**
 * Plays the article page's full audio until the platform's player has highlighted `n` different
 * sentences of the article's text on the page (its read-along); answers them in the order heard.
 */
export async function sentencesHighlighted(page: Page, n: number): Promise<string[]> {
  const heard: string[] = [];
  await page.locator("#article-text p").first().waitFor();
  await page.locator("#audio-full button.play").click();
  await waitFor(
    `${n} sentences highlighted in turn`,
    async () => {
      const now = (await page.evaluate(() => {
        const hl = (CSS as unknown as { highlights: Map<string, Set<Range>> }).highlights.get("article-audio-player");
        const r = hl && [...hl][0];
        return r && document.getElementById("article-text")!.contains(r.commonAncestorContainer) ? r.toString() : "";
      })) as string;
      if (now && !heard.includes(now)) heard.push(now);
      return heard.length >= n ? true : undefined;
    },
    60_000,
    50,
  );
  await page.locator("#audio-full button.play").click();
  return heard;
}

/** What an editor played in the console counts as the console's, never as listeners' (the statistics' split by source). */
export async function expectConsoleListensApart(cb: ConsoleBrowser, A: Api, articleId: string): Promise<void> {
  expect(cb.beacons.length, "the console's players send their events").to.be.greaterThan(0);
  const stats = await waitFor("the editor's play counted", async () => {
    const r = await A("GET", `/api/articles/${encodeURIComponent(articleId)}/stats`);
    return r.body?.bySource?.console?.plays >= 1 ? r.body : undefined;
  }, 20_000, 250);
  const listeners = (["player", "embed", "podcast"] as const).map((s) => stats.bySource[s]);
  expect(listeners.map((f: { plays: number; impressions: number }) => f.plays + f.impressions)).to.deep.equal([0, 0, 0]);
}

/**
 * Every page of the console, signed in with a read token: no write control, no editable field (the
 * players' seek sliders, inside their shadow roots, change nothing stored), a note why.
 */
export async function expectNoWriteControls(cb: ConsoleBrowser, page: Page, articleId: string): Promise<void> {
  expect(await page.locator(".scope").textContent()).to.equal("Read token");
  for (const p of PAGES) {
    await page.goto(`${cb.url}/console/${p.hash || `#/article/${encodeURIComponent(articleId)}`}`);
    await page.locator(p.ready).first().waitFor();
    await page.waitForLoadState("networkidle");
    expect(await page.locator(WRITE_CONTROLS).count(), `write controls on ${p.name}`).to.equal(0);
    const enabledInputs = await page.locator("main input:not([disabled]):not(#lookup):not(#search-q):not(#filter-label):not([type=date]):not(#sample-text):not([part=progress]), main textarea:not([disabled])").count();
    expect(enabledInputs, `editable inputs on ${p.name}`).to.equal(0);
    if (p.name !== "stats") expect(await page.locator(".readonly-note").count(), `reason on ${p.name}`).to.be.greaterThan(0);
  }
}

/**
 * Imports `n` short articles (labelled "even" and "odd" in turn) stored waiting on demand, so no
 * audio is made; answers the summary line of the import's answer.
 */
export async function importArchive(url: string, token: string, n: number): Promise<string | undefined> {
  const lines = Array.from({ length: n }, (_, i) => JSON.stringify({ title: `Archive story ${i + 1}`, text: `Archived text number ${i + 1}.`, externalId: `arch-${i + 1}`, labels: [i % 2 ? "odd" : "even"] })).join("\n");
  const imported = await fetch(`${url}/api/articles/import?audio=onDemand`, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/x-ndjson" }, body: lines });
  return (await imported.text()).trim().split("\n").pop();
}

/** When the page first painted content, and when the console marked its article list drawn (-1: not yet), ms. */
export function paintTimes(page: Page): Promise<{ fcp: number; list: number }> {
  return page.evaluate(() => ({
    fcp: performance.getEntriesByName("first-contentful-paint")[0]?.startTime ?? -1,
    list: performance.getEntriesByName("console:articles-rendered")[0]?.startTime ?? -1,
  }));
}

/** The embedded default with one seeded full token, and Chromium pointed at it: what each console test file starts. */
export interface ConsoleSystem {
  sys: Embedded;
  browser: Browser;
  cb: ConsoleBrowser;
  close(): Promise<void>;
}

export async function startConsoleSystem(o: { name: string; token: string; project: string; env?: Record<string, string | undefined> }): Promise<ConsoleSystem> {
  const dataDir = await mkdtemp(path.join(tmpdir(), `e2e-console-${o.name}-`));
  const sys = await startEmbedded(
    { PORT: "0", HOST: "127.0.0.1", DATA_DIR: dataDir, SEED_TOKENS: JSON.stringify([{ token: o.token, project: o.project, scope: "full" }]), AUDIO_ENGINE: process.env.AUDIO_ENGINE, ...o.env },
    new Writable({ write: (_c, _e, cb) => cb() }),
  );
  const browser = await launchChromium();
  return {
    sys,
    browser,
    cb: new ConsoleBrowser(browser, sys.url),
    async close() {
      await browser.close();
      await sys.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
