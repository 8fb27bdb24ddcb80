// The publisher console in a real browser (Debian's Chromium driven by
// playwright-core) against the embedded default: sign-in, an article from
// creation to ready and played, a pronunciation rule heard, a player's play in
// the statistics, the snippet copied, a read token without write controls,
// axe on every page, screenshots and bundle sizes (paint and interaction
// times are figures of `npm run bench`, bench/console.ts).
import { expect } from "chai";
import { mkdir, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Writable } from "node:stream";
import type { Browser, Page } from "playwright-core";
import { startEmbedded, type Embedded } from "../../launch/embedded.js";
import { api, waitFor } from "../../test/support/http.js";
import { requireChromium } from "../../test/support/chromium.js";
import { consoleFiles } from "../serve.js";
import { ConsoleBrowser, expectConsoleListensApart, expectNoWriteControls, importArchive, launchChromium, PAGES, paintTimes, playOnArticlePage, statusesUntilReady, submitArticle, type PageOptions } from "./console-flows.js";

const FULL = "console-full-0123456789";
const READ = "console-read-0123456789";
const ARTIFACTS = path.resolve("test-artifacts/console");
const sink = () => new Writable({ write: (_c, _e, cb) => cb() });
const AXE = path.resolve("node_modules/axe-core/axe.min.js");

describe("publisher console in a real browser (Chromium)", function () {
  this.timeout(300_000);
  let dataDir: string;
  let sys: Embedded;
  let browser: Browser;
  let A: ReturnType<typeof api>;
  let readyId = "";
  let cb: ConsoleBrowser;
  const summary: string[] = [];
  const newPage = (opts: PageOptions = {}) => cb.newPage(opts);
  const signIn = (page: Page, token: string) => cb.signIn(page, token);

  before(async function () {
    requireChromium(this);
    dataDir = await mkdtemp(path.join(tmpdir(), "e2e-console-"));
    sys = await startEmbedded(
      {
        PORT: "0",
        HOST: "127.0.0.1",
        DATA_DIR: dataDir,
        SEED_TOKENS: JSON.stringify([
          { token: FULL, project: "console", scope: "full" },
          { token: READ, project: "console", scope: "read" },
        ]),
        AUDIO_ENGINE: process.env.AUDIO_ENGINE,
      },
      sink(),
    );
    A = api(sys.url, FULL);
    // 1,000 articles, stored waiting on demand (no audio made), for the list's paint time.
    expect(await importArchive(sys.url, FULL, 1000)).to.equal('{"result":"ok","imported":1000,"failed":0}');
    browser = await launchChromium();
    cb = new ConsoleBrowser(browser, sys.url);
    await mkdir(ARTIFACTS, { recursive: true });
  });

  after(async () => {
    if (summary.length) console.log(`      console summary:\n${summary.map((l) => `        ${l}`).join("\n")}`);
    await browser?.close();
    await sys?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  afterEach(() => cb?.expectNoErrors());

  it("is served at /console with a strict CSP, cached hashed assets and nothing from other origins", async () => {
    const index = await fetch(`${sys.url}/console/`);
    expect(index.status).to.equal(200);
    const csp = index.headers.get("content-security-policy") ?? "";
    expect(csp).to.include("script-src 'self'").and.include("style-src 'self'").and.include("frame-ancestors 'none'").and.include("default-src 'none'");
    expect(csp).not.to.include("unsafe-inline");
    expect(csp).not.to.include("unsafe-eval");
    expect(index.headers.get("cache-control")).to.equal("no-cache");
    const html = await index.text();
    expect(html).not.to.match(/<script(?![^>]*\bsrc=)[^>]*>/, "no inline script");
    expect(html).not.to.match(/\sstyle=/, "no style attributes");
    const assets = [...html.matchAll(/(?:href|src)="(\/console\/assets\/[^"]+)"/g)].map((m) => m[1]);
    expect(assets.length).to.be.greaterThan(1);
    for (const a of assets) {
      const r = await fetch(sys.url + a, { headers: { "accept-encoding": "gzip" } });
      expect(r.status, a).to.equal(200);
      expect(r.headers.get("cache-control")).to.equal("public, max-age=31536000, immutable");
      const etag = r.headers.get("etag")!;
      expect((await fetch(sys.url + a, { headers: { "if-none-match": etag } })).status).to.equal(304);
      const body = await r.text();
      expect(body, `${a} loads nothing from the internet`).not.to.match(/https?:\/\/(?!www\.w3\.org)[a-z0-9.-]+\.[a-z]{2,}\//i);
    }
    expect((await fetch(`${sys.url}/console`, { redirect: "manual" })).headers.get("location")).to.equal("/console/");
    expect((await fetch(`${sys.url}/console/assets/nope.js`)).status).to.equal(404);

    const { manifest } = await consoleFiles();
    const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;
    summary.push(`bundle (gzip): first page JS ${kb(manifest.firstPageJsGzip)}, all JS ${kb(manifest.totalJsGzip)}`);
    for (const [name, s] of Object.entries(manifest.files)) summary.push(`  ${name}: ${kb(s.bytes)} (gzip ${kb(s.gzip)})`);
    expect(manifest.firstPageJsGzip).to.be.below(60 * 1024);
    expect(manifest.totalJsGzip).to.be.below(120 * 1024);
  });

  it("signs in with a full token, creates an article that goes waiting → processing → ready without a reload, and plays it in the platform's player, the play counted as the console's, not a listener's", async () => {
    const { ctx, page } = await newPage();
    await page.goto(`${sys.url}/console/`);
    // A wrong token stays on sign-in with the API's message.
    await page.locator("#token").fill("not-a-token-0123456789");
    await page.locator("form.signin button[type=submit]").click();
    await page.locator(".signin-status .notice.error").waitFor();
    expect(await page.evaluate(() => sessionStorage.getItem("console.token"))).to.equal(null);
    // Sign-in asks the token what it is (GET /api/token) and tries no write to find out.
    const asked: string[] = [];
    page.on("request", (r) => {
      if (new URL(r.url()).pathname.startsWith("/api/")) asked.push(`${r.method()} ${new URL(r.url()).pathname}`);
    });
    await signIn(page, FULL);
    expect(asked).to.include("GET /api/token");
    expect(asked.filter((a) => !a.startsWith("GET "))).to.deep.equal([]);
    expect(page.url()).not.to.include(FULL);
    expect(await page.evaluate(() => document.cookie)).to.equal("");
    expect(await page.locator(".scope").textContent()).to.equal("Full token");
    expect(await page.locator(".scope").getAttribute("title")).to.equal("console");

    await page.locator("#new-article").click();
    const article = {
      title: "Library opens",
      text: "The town's new library opened its doors on Monday. Readers of every age came to see the long tables and quiet rooms.",
      url: "https://news.example/library",
      labels: "local, culture",
    };
    // The API's own 400 message is shown for a bad field.
    await page.locator("#a-title").fill(article.title);
    await page.locator("#a-text").fill(article.text);
    await page.locator("#a-url").fill("not a url");
    await page.locator("form.article-form button[type=submit]").click();
    await page.locator(".form-status .notice.error").waitFor();
    expect(await page.locator(".form-status .notice.error").textContent()).to.match(/^url: /);
    readyId = await submitArticle(page, article);
    // The status line follows the article (polling) until it is ready; statuses seen on the way are recorded.
    const seen = await statusesUntilReady(page);
    summary.push(`statuses seen without a reload: ${seen.join(" → ")}`);
    expect(seen.at(-1)).to.equal("ready");
    expect(seen[0], "the page showed the article before it was ready").not.to.equal("ready");
    await playOnArticlePage(page);
    // The players take the console's colours: a dark theme chosen on a light system reaches them.
    await page.locator("#theme-switch").selectOption("dark");
    await waitFor("dark player", async () => ((await page.evaluate(`getComputedStyle(document.getElementById("audio-full").shadowRoot.querySelector(".box")).backgroundColor`)) === "rgb(31, 34, 38)" ? true : undefined), 5_000, 50);
    await ctx.close();
    await expectConsoleListensApart(cb, A, readyId);
  });

  it("looks an article up by id, external id and URL", async () => {
    const { ctx, page } = await newPage({ token: FULL });
    for (const q of [readyId, "arch-7", "https://news.example/library"]) {
      await page.goto(`${sys.url}/console/#/articles`);
      await page.locator("#lookup").fill(q);
      await page.locator("#lookup").press("Enter");
      await page.waitForURL(/#\/article\//);
      await page.locator("#status-line").waitFor();
      const title = await page.locator("h1").textContent();
      expect(title).to.equal(q === "arch-7" ? "Archive story 7" : "Library opens");
    }
    await ctx.close();
  });

  it("adds a pronunciation rule, shows the API's 400 beside the offending rule, and plays the rule's sample (an MP3 from the platform)", async () => {
    const { ctx, page } = await newPage({ token: FULL });
    await page.goto(`${sys.url}/console/#/pronunciations`);
    await page.locator("table.rules").waitFor();
    await page.locator("#add-rule").click();
    const row = page.locator("tr.rule").last();
    await row.locator(".r-match").fill("Nguyen");
    await row.locator(".r-say").fill("Win");
    // A second rule that is refused: say and spell together.
    await page.locator("#add-rule").click();
    const bad = page.locator("tr.rule").last();
    await bad.locator(".r-match").fill("BASF");
    await bad.locator(".r-say").fill("Bee");
    await bad.locator(".r-spell").check();
    await page.locator("#save-rules").click();
    await bad.locator(".row-error").waitFor({ state: "visible" });
    expect(await bad.locator(".row-error").textContent()).to.match(/^pronunciations\[1\]\.spell: /);
    await bad.locator(".remove").click();
    await page.locator("#save-rules").click();
    await page.locator(".notice.ok").waitFor();
    expect((await A("GET", "/api/pronunciations")).body.pronunciations).to.deep.equal([{ match: "Nguyen", say: "Win" }]);

    const answer = page.waitForResponse((r) => r.url().endsWith("/api/pronunciations/preview"));
    await page.locator("#sample-text").fill("Our reporter Nguyen was there.");
    await row.locator(".listen").click();
    const res = await answer;
    expect(res.status()).to.equal(200);
    expect(res.headers()["content-type"]).to.equal("audio/mpeg");
    const sample = page.locator("#sample-audio");
    await page.locator(".notice.ok", { hasText: "Nguyen" }).waitFor();
    expect(await sample.getAttribute("data-type")).to.equal("audio/mpeg");
    expect(Number(await sample.getAttribute("data-bytes"))).to.be.greaterThan(1000);
    // The same request from outside the browser: an MP3 (an ID3 tag or an MPEG frame sync at the start).
    const direct = await fetch(`${sys.url}/api/pronunciations/preview`, { method: "POST", headers: { authorization: `Bearer ${FULL}`, "content-type": "application/json" }, body: JSON.stringify({ rule: { match: "Nguyen", say: "Win" } }) });
    const mp3 = Buffer.from(await direct.arrayBuffer());
    expect(mp3.subarray(0, 3).toString("latin1") === "ID3" || (mp3[0] === 0xff && (mp3[1] & 0xe0) === 0xe0)).to.equal(true);
    await waitFor("sample playing", async () => ((await sample.evaluate((a: HTMLAudioElement) => a.currentTime)) > 0.2 ? true : undefined), 20_000, 100);
    // A rule for German only is heard in German: the console switches the sample to the same voice in de-DE.
    await row.locator(".r-lang").selectOption("de");
    const german = page.waitForResponse((r) => r.url().endsWith("/api/pronunciations/preview"));
    await row.locator(".listen").click();
    const gres = await german;
    expect(gres.status()).to.equal(200);
    expect(JSON.parse(gres.request().postData() ?? "{}")).to.deep.include({ voice: "alloy", lang: "de-DE" });
    expect(await page.locator("#sample-voice").inputValue()).to.equal("alloy|de-DE");
    await ctx.close();
  });

  it("the voice picker names the engine that reads each voice and plays the voice's sample", async () => {
    const listed = (await A("GET", "/api/voices")).body.voices as Array<{ name: string; langs: string[]; speaks: Record<string, string> }>;
    const { ctx, page } = await newPage({ token: FULL });
    await page.goto(`${sys.url}/console/#/new`);
    const select = page.locator("select#voice");
    await select.waitFor();
    const engine = listed.find((v) => v.name === "de-DE-KatjaNeural")!.speaks["de-DE"];
    const shown = engine === "pico" ? "SVOX Pico" : "eSpeak NG";
    // Every listed voice is offered, each option naming the engine that reads it now.
    await waitFor("options from /api/voices", async () => ((await select.locator("option").count()) === 1 + listed.reduce((n, v) => n + v.langs.length, 0) ? true : undefined), 20_000, 100);
    expect(await select.locator('option[value="de-DE-KatjaNeural|de-DE"]').textContent()).to.equal(`de-DE-KatjaNeural (de-DE) · ${shown}`);
    await select.selectOption("de-DE-KatjaNeural|de-DE");
    expect(await page.locator("#voice-engine").textContent()).to.equal(`Read by ${shown} (local, offline).`);
    const answer = page.waitForResponse((r) => r.url().includes("/api/voices/de-DE-KatjaNeural/sample?lang=de-DE"));
    await page.locator(".voice-sample button").click();
    const res = await answer;
    expect(res.status()).to.equal(200);
    expect(res.headers()["content-type"]).to.equal("audio/mpeg");
    const sample = page.locator("#voice-sample");
    await waitFor("sample playing", async () => ((await sample.evaluate((a: HTMLAudioElement) => a.currentTime)) > 0.2 ? true : undefined), 20_000, 100);
    await ctx.close();
  });

  it("shows a play recorded by the embedded player in the statistics' table view and in the split by source", async () => {
    const player = (await A("GET", "/api/player")).body;
    // The real player, on its embed page, played by a listener.
    const { ctx: lctx, page: listener } = await newPage();
    await listener.goto(`${sys.url}/player/v1/embed/${player.publicKey}/${readyId}`);
    await listener.locator("article-audio-player button.play").click();
    await waitFor("listener playing", async () => ((await listener.evaluate(`document.querySelector("article-audio-player").shadowRoot.querySelector("audio").currentTime`)) as number) > 1 ? true : undefined, 20_000, 100);
    await listener.goto("about:blank"); // pagehide: the player sends its beacon
    await lctx.close();
    const counted = await waitFor("play counted", async () => {
      const b = (await A("GET", "/api/stats")).body;
      return b.bySource.embed.plays >= 1 ? b : undefined;
    }, 30_000, 250);
    // Beside the editor's own plays of the earlier test, counted as the console's.
    const plays = String(counted.total.plays);

    const { ctx, page } = await newPage({ token: FULL });
    const apiCalls: string[] = [];
    page.on("request", (r) => void (r.url().includes("/api/") && apiCalls.push(new URL(r.url()).pathname)));
    await page.goto(`${sys.url}/console/#/stats`);
    await page.locator(".kpis").waitFor();
    expect(await page.locator("#kpi-plays").textContent()).to.equal(plays);
    // Where the listens came from: the embed page's listener apart from the editors in the console.
    expect(await page.locator('table.by-source tr[data-source="embed"] td[data-key="plays"]').textContent()).to.equal("1");
    expect(await page.locator('table.by-source tr[data-source="player"] td[data-key="plays"]').textContent()).to.equal("0");
    const details = page.locator("details.table-view").first();
    await details.locator("summary").click();
    const perDay = await details.locator('td[data-key="plays"]').allTextContents();
    expect(perDay.map(Number).reduce((a, b) => a + b, 0)).to.equal(Number(plays));
    expect(await page.locator(".chart canvas").count()).to.be.greaterThan(1);
    // The top articles by title, from the statistics' own answer: no lookup per row.
    expect(await page.locator("table.top a").first().textContent()).to.equal("Library opens");
    expect(await page.locator("table.top a").first().getAttribute("href")).to.include(`article=${encodeURIComponent(readyId)}`);
    expect(apiCalls.filter((p) => p.startsWith("/api/articles"))).to.deep.equal([]);
    // Per article, from the article page's link.
    await page.goto(`${sys.url}/console/#/stats?article=${encodeURIComponent(readyId)}`);
    await page.locator("#kpi-plays").waitFor();
    expect(await page.locator("#kpi-plays").textContent()).to.equal(plays);
    await ctx.close();
  });

  it("copies the player snippet with one click", async () => {
    const { ctx, page } = await newPage({ token: FULL });
    await ctx.grantPermissions(["clipboard-read", "clipboard-write"], { origin: sys.url });
    await page.goto(`${sys.url}/console/#/player`);
    await page.locator("#copy-snippet").click();
    await page.locator(".copied").filter({ hasText: "Copied." }).waitFor();
    const copied = await page.evaluate(() => navigator.clipboard.readText());
    expect(copied).to.equal((await A("GET", "/api/player")).body.snippet);
    expect(copied).to.include("<article-audio-player");
    await ctx.close();
  });

  it("saves the feed settings (the feed check's warnings follow) and rotates the key after a confirmation", async () => {
    const { ctx, page } = await newPage({ token: FULL });
    await page.goto(`${sys.url}/console/#/player`);
    await page.locator("#snippet").waitFor();
    // Each thing the feed lacks is a sentence with a way to the field, not the setting's key.
    const owner = page.locator('.warnings li[data-setting="feed.ownerEmail"]');
    expect(await owner.textContent()).to.match(/^The feed names no owner e-mail: .*\.\s*Go to “Owner e-mail”$/);
    expect(await page.locator(".warnings").textContent()).not.to.match(/feed\.\w+/);
    await owner.locator("button").click();
    expect(await page.evaluate(() => document.activeElement?.id)).to.equal("feed-owner");
    await page.locator("#feed-title").fill("Console news, read aloud");
    await page.locator("#feed-owner").fill("podcasts@news.example");
    await page.locator("#feed-category").fill("News/Daily News");
    await page.locator("#save-player").click();
    await page.locator(".form-status .notice.ok").waitFor();
    expect(await page.locator('.warnings li[data-setting="feed.ownerEmail"]').count()).to.equal(0);
    const settings = (await A("GET", "/api/player")).body.settings.feed;
    expect(settings).to.include({ title: "Console news, read aloud", ownerEmail: "podcasts@news.example", category: "News/Daily News" });
    // A bad value gets the API's message.
    await page.locator("#feed-owner").fill("not an e-mail");
    await page.locator("#save-player").click();
    await page.locator(".form-status .notice.error").waitFor();
    expect(await page.locator(".form-status .notice.error").textContent()).to.match(/ownerEmail/);
    const before = await page.locator("#public-key").textContent();
    await page.locator("#rotate-key").click();
    await page.locator("dialog[open] [data-cancel]").click();
    expect(await page.locator("#public-key").textContent()).to.equal(before);
    await page.locator("#rotate-key").click();
    await page.locator("dialog[open] [data-confirm]").click();
    await page.locator(".form-status .notice.ok").waitFor();
    const after = await page.locator("#public-key").textContent();
    expect(after).to.match(/^pk_/).and.not.equal(before);
    expect((await A("GET", "/api/player")).body.publicKey).to.equal(after);
    await ctx.close();
  });

  it("imports an NDJSON file with a progress bar and a per-line error report", async () => {
    const { ctx, page } = await newPage({ token: FULL });
    await page.goto(`${sys.url}/console/#/import`);
    const file = [JSON.stringify({ title: "Imported one", text: "Text one." }), "", JSON.stringify({ title: "" , text: "x" }), "{not json", JSON.stringify({ title: "Imported two", text: "Text two.", externalId: "arch-1" })].join("\n");
    await page.locator("#import-file").setInputFiles({ name: "batch.ndjson", mimeType: "application/x-ndjson", buffer: Buffer.from(file) });
    await page.locator("#import-audio").selectOption("onDemand");
    await page.locator("#import-start").click();
    await page.locator("#import-download").waitFor();
    expect(await page.locator("#import-status").textContent()).to.equal("Done: 1 imported, 3 failed.");
    expect(await page.locator("#import-progress").evaluate((p: HTMLProgressElement) => [p.value, p.max])).to.deep.equal([4, 4]);
    const lines = await page.locator("#import-report tbody tr td:first-child").allTextContents();
    expect(lines).to.deep.equal(["3", "4", "5"]);
    const download = page.waitForEvent("download");
    await page.locator("#import-download").click();
    const report = await readFile(await (await download).path(), "utf8");
    expect(report.trim().split("\n").map((l) => JSON.parse(l).line)).to.deep.equal([3, 4, 5]);
    await ctx.close();
  });

  it("works with the keyboard alone: lookup, a status's meaning on focus, edit and save, delete after a confirmation that Escape cancels", async () => {
    const { ctx, page } = await newPage();
    const focused = () => page.evaluate(() => {
      const el = document.activeElement as HTMLElement | null;
      return el ? `${el.tagName.toLowerCase()}#${el.id}.${el.className}` : "";
    });
    /** Tab (or Shift+Tab) until the focused element matches, as a keyboard user would. */
    const tabTo = async (pattern: RegExp, back = false) => {
      for (let i = 0; i < 60; i++) {
        if (pattern.test(await focused())) return;
        await page.keyboard.press(back ? "Shift+Tab" : "Tab");
      }
      throw new Error(`${pattern} not reached with the keyboard; focus is on ${await focused()}`);
    };
    await page.goto(`${sys.url}/console/`);
    expect(await focused()).to.match(/^input#token/);
    await page.keyboard.type(FULL);
    await page.keyboard.press("Enter");
    await page.locator("table.articles").waitFor();
    await tabTo(/^input#lookup/);
    await page.keyboard.type("arch-5");
    await page.keyboard.press("Enter");
    await page.waitForURL(/#\/article\//);
    await page.locator("#status-line .badge").waitFor();
    const id = decodeURIComponent(/#\/article\/([^?]+)/.exec(page.url())![1]);
    // The badge's meaning shows on keyboard focus.
    await tabTo(/^span#\.badge/);
    expect(await page.evaluate(() => getComputedStyle(document.activeElement!.querySelector(".tip")!).display)).to.equal("block");
    // Edit: open the form, change the title, Enter submits.
    await tabTo(/^summary/);
    await page.keyboard.press("Enter");
    await tabTo(/^input#a-title/);
    await page.keyboard.press("End");
    await page.keyboard.type(" (edited)");
    await page.keyboard.press("Enter");
    await waitFor("saved", async () => ((await A("GET", `/api/articles/${id}`)).body.article.title === "Archive story 5 (edited)" ? true : undefined), 10_000, 100);
    await page.locator("h1", { hasText: "Archive story 5 (edited)" }).waitFor();
    // Delete: Escape cancels the confirmation; confirming deletes.
    await page.evaluate(() => (document.getElementById("main") as HTMLElement).focus());
    await tabTo(/^button#delete/);
    await page.keyboard.press("Enter");
    await page.locator("dialog[open]").waitFor();
    expect(await focused()).to.match(/^button#\./);
    await page.keyboard.press("Escape");
    await page.locator("dialog").waitFor({ state: "detached" });
    expect((await A("GET", `/api/articles/${id}`)).body.article.status).not.to.equal("deleted");
    await tabTo(/^button#delete/, true);
    await page.keyboard.press("Enter");
    await page.locator("dialog[open]").waitFor();
    await page.keyboard.press("Shift+Tab");
    await page.keyboard.press("Enter");
    await page.waitForURL(/#\/articles$/);
    expect((await A("GET", `/api/articles/${id}`)).body.article.status).to.equal("deleted");
    // Language and theme switches (in the header, before the page's heading, where focus went).
    await tabTo(/^select#lang-switch/, true);
    await page.locator("#lang-switch").selectOption("de");
    await page.locator("nav a", { hasText: "Aussprache" }).waitFor();
    expect(await page.evaluate(() => document.documentElement.lang)).to.equal("de");
    await page.locator("#theme-switch").selectOption("dark");
    expect(await page.evaluate(() => [document.documentElement.dataset.theme, getComputedStyle(document.documentElement).backgroundColor])).to.deep.equal(["dark", "rgb(21, 23, 26)"]);
    await ctx.close();
  });

  it("with a read token shows no write controls on any page, saying why", async () => {
    const { ctx, page } = await newPage();
    await signIn(page, READ);
    expect(await page.locator(".scope").getAttribute("title")).to.equal("console");
    await expectNoWriteControls(cb, page, readyId);
    // Signing out forgets the token.
    await page.locator("#sign-out").click();
    await page.locator("#token").waitFor();
    expect(await page.evaluate(() => sessionStorage.getItem("console.token"))).to.equal(null);
    await ctx.close();
  });

  it("goes back to sign-in with a message on a 401 and says when to retry on a 429", async () => {
    const { ctx, page } = await newPage({ token: "revoked-token-0123456789" });
    await page.goto(`${sys.url}/console/#/articles`);
    await page.locator("#token").waitFor();
    expect(await page.locator(".signin-status .notice").textContent()).to.match(/signed out.*Invalid API token/i);
    await ctx.close();
    const { ctx: c2, page: p2 } = await newPage({ token: FULL });
    await p2.route("**/api/pronunciations", (r) => r.fulfill({ status: 429, headers: { "retry-after": "7", "content-type": "application/json" }, body: '{"result":"fail","message":"Rate limit exceeded"}' }));
    await p2.goto(`${sys.url}/console/#/pronunciations`);
    await p2.locator(".notice.error").waitFor();
    expect(await p2.locator(".notice.error").textContent()).to.match(/Try again in 7 s/);
    await c2.close();
  });

  it("filters by status and by label over the whole archive, with the filtered total and pages beyond the first", async () => {
    // Eleven ready articles: more than a page of 10, among a thousand waiting ones.
    const made: string[] = [];
    for (let i = 0; i < 11; i++) made.push((await A("POST", "/api/articles", { title: `Filtered ${i}`, text: `Short piece ${i}.`, labels: ["filtered"] })).body.id);
    await waitFor("eleven ready", async () => ((await A("GET", "/api/articles?status=ready&label=filtered")).body.count === 11 ? true : undefined), 180_000, 250);
    const readyCount = (await A("GET", "/api/articles?status=ready")).body.count as number;
    const oddCount = (await A("GET", "/api/articles?label=odd")).body.count as number;
    expect(oddCount).to.be.within(490, 500);

    const { ctx, page } = await newPage({ token: FULL });
    await page.goto(`${sys.url}/console/#/articles?limit=10`);
    await page.locator("table.articles").waitFor();
    const rows = page.locator("table.articles tbody tr");
    const pageText = () => page.locator(".pager span").textContent();
    const statuses = async () => (await rows.locator(".badge").evaluateAll((els) => els.map((e) => e.className))).map((c) => c.replace(/^badge s-/, ""));
    const ids = async () => rows.locator("td a[href^='#/article/']").evaluateAll((els) => els.map((e) => decodeURIComponent((e as HTMLAnchorElement).hash.replace("#/article/", ""))));

    await page.locator("#filter-status").selectOption("ready");
    await page.waitForURL(/status=ready/);
    await page.locator(".pager span", { hasText: `(${readyCount} articles)` }).waitFor();
    expect(await pageText()).to.equal(`Page 1 of ${Math.ceil(readyCount / 10)} (${readyCount} articles)`);
    expect(await statuses()).to.deep.equal(Array(10).fill("ready"));
    const first = await ids();
    await page.locator("button", { hasText: "Next" }).click();
    await page.waitForURL(/page=1/);
    await page.locator(".pager span", { hasText: "Page 2 of" }).waitFor();
    const second = await ids();
    expect(second.length).to.equal(Math.min(10, readyCount - 10));
    expect(await statuses()).to.deep.equal(Array(second.length).fill("ready"));
    expect(new Set([...first, ...second]).size, "no article on both pages").to.equal(first.length + second.length);
    // The newest ready articles are the eleven just made: the first eleven rows over the two pages.
    expect(new Set([...first, ...second].slice(0, 11))).to.deep.equal(new Set(made));

    // Both filters: no ready article is labelled "odd" (the archive is waiting, on demand).
    await page.locator("#filter-label").fill("odd");
    await page.locator("#filter-label").press("Enter");
    await page.waitForURL(/label=odd/);
    await page.locator(".empty").waitFor();
    expect(await page.locator(".empty").textContent()).to.equal("No article matches the filter.");
    expect(page.url()).not.to.match(/page=1/);

    // The label alone: every odd article over the whole archive, page 2 too.
    await page.locator("#filter-status").selectOption("");
    await page.locator(".pager span", { hasText: `(${oddCount} articles)` }).waitFor();
    expect(page.url()).not.to.include("status=");
    await page.locator("button", { hasText: "Next" }).click();
    await page.locator(".pager span", { hasText: `Page 2 of ${Math.ceil(oddCount / 10)}` }).waitFor();
    expect(await rows.locator("td.labels").allTextContents()).to.deep.equal(Array(10).fill("odd"));
    expect(await statuses()).to.deep.equal(Array(10).fill("waiting"));
    summary.push(`filters: ${readyCount} ready of the project over ${Math.ceil(readyCount / 10)} pages, ${oddCount} labelled "odd" over ${Math.ceil(oddCount / 10)}`);
    await ctx.close();
  });

  // Paint time and the longest interaction are figures of `npm run bench` (suite "console",
  // bench/console.ts), against the same rows as a static page; here, what a user sees.
  it("draws all 100 rows of a 1,000-article project's list and keeps answering the keyboard, the filters and the pager", async () => {
    const { ctx, page: p } = await newPage({ token: FULL });
    await p.goto(`${sys.url}/console/#/articles?limit=100`);
    const rows = p.locator("table.articles tbody tr");
    await rows.nth(99).waitFor();
    expect(await rows.count()).to.equal(100);
    const count = (await A("GET", "/api/articles")).body.count as number;
    const pages = Math.ceil(count / 100);
    expect(await p.locator(".pager span").textContent()).to.equal(`Page 1 of ${pages} (${count.toLocaleString("en-US")} articles)`);
    const firstPage = await rows.locator("td a[href^='#/article/']").evaluateAll((els) => els.map((e) => (e as HTMLAnchorElement).hash));
    const times = await paintTimes(p);
    expect(times.list, "the console marks when the list is drawn").to.be.greaterThan(0);
    summary.push(`article list (1,000 articles, 100 per page), this run: first contentful paint ${times.fcp.toFixed(0)} ms, list drawn ${times.list.toFixed(0)} ms (targets: npm run bench)`);
    // Tab moves through the page's controls into the table.
    for (let i = 0; i < 15; i++) await p.keyboard.press("Tab");
    expect(await p.evaluate(() => document.activeElement?.tagName), "focus moved off the page's body").not.to.be.oneOf(["BODY", undefined]);
    await p.locator("#filter-status").selectOption("waiting");
    await p.waitForURL(/status=waiting/);
    await p.locator("#filter-status").selectOption("");
    await p.locator(".pager span", { hasText: `Page 1 of ${pages}` }).waitFor();
    await p.locator("button", { hasText: "Next" }).click();
    await p.waitForURL(/page=1/);
    await p.locator(".pager span", { hasText: `Page 2 of ${pages}` }).waitFor();
    expect(await rows.count()).to.equal(100);
    const secondPage = await rows.locator("td a[href^='#/article/']").evaluateAll((els) => els.map((e) => (e as HTMLAnchorElement).hash));
    expect(secondPage.filter((h) => firstPage.includes(h))).to.deep.equal([]);
    await ctx.close();
  });

  it("has no axe violations on any page at 1280 and 375 px, light and dark, English and German, and writes screenshots", async () => {
    const axe = await readFile(AXE, "utf8");
    const results: string[] = [];
    let pagesChecked = 0;
    for (const lang of ["en", "de"]) {
      for (const dark of [false, true]) {
        for (const width of [1280, 375]) {
          const { ctx, page } = await newPage({ lang, dark, width, bypassCSP: true });
          const check = async (name: string) => {
            await page.waitForLoadState("networkidle");
            await page.evaluate(axe);
            const r = (await page.evaluate(`axe.run(document, { resultTypes: ["violations"], rules: { "target-size": { enabled: true } } })`)) as { violations: Array<{ id: string; nodes: Array<{ target: string[] }> }> };
            for (const v of r.violations) results.push(`${name} ${lang} ${dark ? "dark" : "light"} ${width}px: ${v.id} at ${v.nodes.map((n) => n.target.join(" ")).slice(0, 3).join(", ")}`);
            pagesChecked++;
            // Works on a phone: nothing wider than the screen.
            const scroll = await page.evaluate(() => document.documentElement.scrollWidth);
            if (scroll > width) results.push(`${name} ${lang} ${dark ? "dark" : "light"} ${width}px: the page is ${scroll} px wide`);
            await page.screenshot({ path: path.join(ARTIFACTS, `${name}-${lang}-${dark ? "dark" : "light"}-${width}.png`), fullPage: true });
          };
          await page.goto(`${sys.url}/console/`);
          await page.locator("#token").waitFor();
          await check("signin");
          await page.locator("#token").fill(FULL);
          await page.keyboard.press("Enter");
          await page.locator("table.articles").waitFor();
          expect(await page.evaluate(() => document.documentElement.lang)).to.equal(lang);
          for (const p of PAGES) {
            await page.goto(`${sys.url}/console/${p.hash || `#/article/${encodeURIComponent(readyId)}`}`);
            await page.locator(p.ready).first().waitFor();
            await check(p.name);
          }
          await ctx.close();
        }
      }
    }
    summary.push(`axe: ${pagesChecked} page views checked (${PAGES.length + 1} pages × 2 widths × 2 themes × 2 languages), ${results.length} violations`);
    expect(results).to.deep.equal([]);
  });
});
