// The embeddable player in a real browser (Debian's Chromium driven by
// playwright-core): a publisher page on another origin than the gateway, with
// the snippet from GET /api/player pasted in, as a publisher would do it.
import { expect } from "chai";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { Writable } from "node:stream";
import { pathToFileURL } from "node:url";
import { chromium, type Browser, type Page } from "playwright-core";
import { startEmbedded, type Embedded } from "../../launch/embedded.js";
import { api, waitFor } from "../support/http.js";
import { CHROMIUM, requireChromium } from "../support/chromium.js";
import { ArticlesService, AudioTiming } from "../../gen/articles/v1/articles_pb.js";
import { rpcClient } from "../../lib/rpc/client.js";
import { prose } from "../e2e/stack-harness.js";

const TOKEN = "browser-full-0123456789";
/** Screenshots are kept here for people to look at (CI prints the paths). */
export const ARTIFACTS = path.resolve("test-artifacts");
const sink = () => new Writable({ write: (_c, _e, cb) => cb() });

const TEXT = Array.from({ length: 3 }, (_, i) => `Paragraph ${i + 1} tells how the town's new library opened its doors to readers of every age, with long tables and quiet rooms.`).join("\n\n");

/** The publisher's own site: one article page per path, with the snippet and a canonical link. */
function publisherSite(snippet: string) {
  const pages = new Map<string, string>();
  const server = http.createServer((req, res) => {
    const html = pages.get(req.url ?? "");
    res.writeHead(html ? 200 : 404, { "content-type": "text/html; charset=utf-8" });
    res.end(html ?? "not found");
  });
  return {
    server,
    page(pathname: string, canonical: string) {
      pages.set(pathname, `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>News</title>
<link rel="canonical" href="${canonical}"></head>
<body><h1>The article</h1><p>Some article text on the publisher's page.</p>
${snippet}
<p id="after">More of the page.</p></body></html>`);
    },
  };
}

const inShadow = <T>(page: Page, fn: string): Promise<T> =>
  page.evaluate(`(() => { const root = document.querySelector("article-audio-player").shadowRoot; const audio = root && root.querySelector("audio"); return (${fn}); })()`) as Promise<T>;

describe("embeddable player in a real browser (Chromium)", function () {
  this.timeout(240_000);
  let dataDir: string;
  let sys: Embedded;
  let browser: Browser;
  let site: ReturnType<typeof publisherSite>;
  let siteUrl: string;
  let A: ReturnType<typeof api>;
  let articleId: string;

  before(async function () {
    requireChromium(this);
    dataDir = await mkdtemp(path.join(tmpdir(), "e2e-player-"));
    sys = await startEmbedded({ PORT: "0", HOST: "127.0.0.1", DATA_DIR: dataDir, SEED_TOKENS: JSON.stringify([{ token: TOKEN, project: "browser", scope: "full" }]), AUDIO_ENGINE: process.env.AUDIO_ENGINE }, sink());
    A = api(sys.url, TOKEN);
    const created = await A("POST", "/api/articles", { title: "Library opens", text: TEXT, url: "https://news.example/library" });
    articleId = created.body.id;
    const gone = await A("POST", "/api/articles", { title: "Taken down", text: "This one will be deleted.", url: "https://news.example/taken-down" });
    for (const id of [articleId, gone.body.id]) {
      await waitFor(`${id} ready`, async () => ((await A("GET", `/api/articles/${id}`)).body?.article?.status === "ready" ? true : undefined), 120_000, 200);
    }
    expect((await A("DELETE", `/api/articles/${gone.body.id}`)).status).to.equal(200);

    const player = await A("GET", "/api/player");
    site = publisherSite(player.body.snippet);
    site.page("/news/library", "https://news.example/library");
    site.page("/news/taken-down", "https://news.example/taken-down");
    await new Promise<void>((r) => site.server.listen(0, "127.0.0.1", r));
    // Another origin than the gateway: same host, other port.
    siteUrl = `http://127.0.0.1:${(site.server.address() as AddressInfo).port}`;
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--autoplay-policy=no-user-gesture-required", "--mute-audio"] });
    await mkdir(ARTIFACTS, { recursive: true });
  });

  after(async () => {
    await browser?.close();
    site?.server.close();
    await sys?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it("finds the article by the page's canonical URL, plays, seeks, changes speed with the keyboard alone, and its events show in the stats", async () => {
    const page = await browser.newPage();
    const warnings: string[] = [];
    const pageErrors: string[] = [];
    page.on("console", (m) => m.type() === "warning" && warnings.push(m.text()));
    page.on("pageerror", (e) => pageErrors.push(String(e)));
    await page.goto(`${siteUrl}/news/library`);
    await page.locator("article-audio-player button.play").waitFor({ state: "visible", timeout: 30_000 });
    expect(await inShadow<string>(page, `root.querySelector(".title").textContent`)).to.equal("Library opens");
    await waitFor("duration shown", async () => ((await inShadow<string>(page, `root.querySelector(".time").textContent`)).endsWith(" / 0:00") ? undefined : true), 10_000, 100);
    // Accessible names and real buttons.
    expect(await inShadow<string[]>(page, `[...root.querySelectorAll("button")].map((b) => b.tagName + ":" + b.getAttribute("aria-label"))`)).to.deep.equal(["BUTTON:Play", "BUTTON:Back 15 seconds", "BUTTON:Playback speed 1×"]);
    expect(await inShadow<string>(page, `root.querySelector(".box").getAttribute("role")`)).to.equal("region");

    // Keyboard only: Tab into the player's play button, Space plays.
    await page.keyboard.press("Tab");
    expect(await inShadow<string>(page, `root.activeElement && root.activeElement.className`)).to.equal("play");
    await page.keyboard.press("Space");
    await waitFor("playing", async () => ((await inShadow<number>(page, "audio.currentTime")) > 0.3 ? true : undefined), 20_000, 100);
    expect(await inShadow<string>(page, `root.querySelector(".play").getAttribute("aria-label")`)).to.equal("Pause");

    // Tab to the seek slider; arrow keys seek.
    await page.keyboard.press("Tab");
    expect(await inShadow<string>(page, `root.activeElement && root.activeElement.className`)).to.equal("seek");
    const beforeSeek = await inShadow<number>(page, "audio.currentTime");
    for (let i = 0; i < 5; i++) await page.keyboard.press("ArrowRight");
    expect(await inShadow<number>(page, "audio.currentTime")).to.be.greaterThan(beforeSeek + 3);

    // Tab past "back 15 s" to the speed button; Enter changes speed.
    await page.keyboard.press("Tab");
    await page.keyboard.press("Tab");
    expect(await inShadow<string>(page, `root.activeElement && root.activeElement.className`)).to.equal("speed");
    await page.keyboard.press("Enter");
    expect(await inShadow<number>(page, "audio.playbackRate")).to.equal(1.25);
    expect(await inShadow<string>(page, `root.querySelector(".speed").getAttribute("aria-label")`)).to.equal("Playback speed 1.25×");

    // Let it play to the end (seek near the end first); completion and progress go out by beacon.
    await inShadow(page, "(audio.currentTime = Math.max(0, audio.duration - 1.5), 0)");
    await waitFor("ended", async () => ((await inShadow<boolean>(page, "audio.ended")) ? true : undefined), 30_000, 100);
    const stats = await waitFor("events in the stats", async () => {
      const r = await A("GET", `/api/articles/${articleId}/stats`);
      return r.body?.total?.completions >= 1 && r.body?.total?.plays >= 1 ? r.body.total : undefined;
    }, 30_000, 500);
    expect(stats.impressions).to.be.at.least(1);
    expect(stats.secondsListened).to.be.greaterThan(0);
    expect(stats.listenThroughRate).to.be.greaterThan(0);

    // It never breaks the host page: no errors, no globals besides the element, page styles untouched.
    expect(pageErrors).to.deep.equal([]);
    expect(warnings).to.deep.equal([]);
    expect(await page.evaluate(`Object.keys(window).filter((k) => /player|article|audio/i.test(k))`)).to.deep.equal([]);
    expect(await page.evaluate(`getComputedStyle(document.getElementById("after")).color`)).to.equal("rgb(0, 0, 0)");

    const hostColor = () => page.evaluate(`getComputedStyle(document.querySelector("article-audio-player")).color`);
    const colors: Record<string, unknown> = {};
    for (const scheme of ["light", "dark"] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await page.waitForTimeout(400); // past the colour transition
      colors[scheme] = await hostColor();
      const file = path.join(ARTIFACTS, `player-${scheme}.png`);
      await page.locator("article-audio-player").screenshot({ path: file });
      console.log(`      screenshot: ${file}`);
    }
    expect(colors).to.deep.equal({ light: "rgb(29, 29, 31)", dark: "rgb(242, 242, 247)" });
    await page.close();
  });

  it("works from a local HTML file with the README's snippet (file:// origin)", async () => {
    const snippet = (await A("GET", "/api/player")).body.snippet.replace("></article-audio-player>", ` article-id="${articleId}"></article-audio-player>`);
    const file = path.join(dataDir, "my-page.html");
    await writeFile(file, `<!doctype html><meta charset="utf-8"><title>Local</title><h1>My page</h1>\n${snippet}\n`);
    const before = await waitFor("earlier events counted", async () => {
      // Figures are written once a second: wait until the earlier test's events have landed.
      const a = (await A("GET", `/api/articles/${articleId}/stats`)).body.total.plays;
      await new Promise((r) => setTimeout(r, 1_500));
      return a === (await A("GET", `/api/articles/${articleId}/stats`)).body.total.plays ? a : undefined;
    }, 20_000, 0);
    const page = await browser.newPage();
    await page.goto(pathToFileURL(file).href);
    await page.locator("article-audio-player button.play").click({ timeout: 30_000 });
    await waitFor("playing", async () => ((await inShadow<number>(page, "audio.currentTime")) > 0.3 ? true : undefined), 20_000, 100);
    await page.close();
    await waitFor("play counted", async () => ((await A("GET", `/api/articles/${articleId}/stats`)).body.total.plays > before ? true : undefined), 20_000, 250);
  });

  it("audio on demand: shows at once, plays the preview as soon as it exists, then goes on in the full file from where it was", async () => {
    const rpc = rpcClient(ArticlesService, sys.services[1].url, { token: TOKEN });
    const { id } = await rpc.createArticle({ title: "From the archive", text: prose(5_000), url: "https://news.example/archive", audio: AudioTiming.ON_DEMAND });
    expect((await A("GET", `/api/articles/${id}`)).body.article.status).to.equal("waiting");
    site.page("/news/archive", "https://news.example/archive");
    const page = await browser.newPage();
    const srcs: string[] = [];
    let lookedUp: number | undefined;
    page.on("request", (r) => void (r.url().includes("/player/v1/article?") && (lookedUp ??= performance.now())));
    const t0 = performance.now();
    await page.goto(`${siteUrl}/news/archive`);
    // The listener presses play before there is anything to play.
    await page.locator("article-audio-player button.play").click({ timeout: 30_000 });
    await waitFor("playing the preview", async () => ((await inShadow<boolean>(page, "!audio.paused && audio.currentTime > 0")) ? true : undefined), 30_000, 20);
    const playing = performance.now();
    const msToPlay = Math.round(playing - t0);
    srcs.push(await inShadow<string>(page, "audio.src"));
    console.log(`      on demand, 5,000 characters: playing ${Math.round(playing - lookedUp!)} ms after the first lookup, ${msToPlay} ms after the page was opened (embedded default, local engine)`);
    expect(srcs[0]).to.match(/\/preview\.mp3$/);
    expect(msToPlay).to.be.below(15_000);
    const full = await waitFor("the full file", async () => {
      const [src, t, paused] = await inShadow<[string, number, boolean]>(page, "[audio.src, audio.currentTime, audio.paused]");
      return src.endsWith("/full.mp3") && t > 0.5 && !paused ? { t } : undefined;
    }, 60_000, 50);
    // Not from the start again: the position carried over, and it plays on.
    await waitFor("playing on", async () => ((await inShadow<number>(page, "audio.currentTime")) > full.t + 0.3 ? true : undefined), 10_000, 50);
    expect((await A("GET", `/api/articles/${id}`)).body.article.status).to.equal("ready");
    await page.close();
  });

  it("shows nothing, with one console warning, on the page of a deleted article", async () => {
    const page = await browser.newPage();
    const warnings: string[] = [];
    page.on("console", (m) => m.type() === "warning" && warnings.push(m.text()));
    await page.goto(`${siteUrl}/news/taken-down`);
    await waitFor("warning", async () => (warnings.length ? true : undefined), 15_000, 100);
    expect(warnings).to.have.length(1);
    expect(warnings[0]).to.include("article-audio-player");
    expect(await page.locator("article-audio-player").isVisible()).to.equal(false);
    expect(await page.evaluate(`document.querySelector("article-audio-player").shadowRoot.querySelector("button")`)).to.equal(null);
    await page.close();
  });

  it("adapts its look through CSS custom properties and ::part, and drops its transitions under prefers-reduced-motion", async () => {
    const page = await browser.newPage();
    await page.goto(`${siteUrl}/news/library`);
    await page.locator("article-audio-player button.play").waitFor({ state: "visible", timeout: 30_000 });
    await page.addStyleTag({ content: "article-audio-player{--aap-accent: rgb(200, 0, 0)} article-audio-player::part(title){text-transform: uppercase}" });
    // The button eases into its new colour.
    await waitFor("accent applied", async () => ((await inShadow<string>(page, `getComputedStyle(root.querySelector(".play")).backgroundColor`)) === "rgb(200, 0, 0)" ? true : undefined), 5_000, 50);
    expect(await inShadow<string>(page, `getComputedStyle(root.querySelector(".title")).textTransform`)).to.equal("uppercase");
    const transition = () => inShadow<string>(page, `getComputedStyle(root.querySelector(".play")).transitionDuration`);
    expect(await transition()).to.not.equal("0s");
    await page.emulateMedia({ reducedMotion: "reduce" });
    expect(await transition()).to.equal("0s");
    await page.close();
  });
});
