// The embeddable player in a real browser (Debian's Chromium driven by
// playwright-core): a publisher page on another origin than the gateway, with
// the snippet from GET /api/player pasted in, as a publisher would do it.
import { expect } from "chai";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { chromium, type Browser, type Page } from "playwright-core";
import { startEmbedded, type Embedded } from "../../launch/embedded.js";
import { api, waitFor } from "../support/http.js";
import { CHROMIUM, requireChromium } from "../support/chromium.js";
import { ArticlesService, AudioTiming } from "../../gen/articles/v1/articles_pb.js";
import { rpcClient } from "../../lib/rpc/client.js";
import { prose } from "../e2e/stack-harness.js";
import { sink } from "../support/sink.js";

const TOKEN = "browser-full-0123456789";
/** Screenshots are kept here for people to look at (CI prints the paths). */
export const ARTIFACTS = path.resolve("test-artifacts");

const require = createRequire(import.meta.url);

const TEXT = Array.from({ length: 3 }, (_, i) => `Paragraph ${i + 1} tells how the town's new library opened its doors to readers of every age, with long tables and quiet rooms.`).join("\n\n");

/** The publisher's own site: one article page per path, with the snippet and a canonical link. */
function publisherSite(snippet: string) {
  const pages = new Map<string, string>();
  const headers = new Map<string, Record<string, string>>();
  const server = http.createServer((req, res) => {
    const html = pages.get(req.url ?? "");
    res.writeHead(html ? 200 : 404, { "content-type": "text/html; charset=utf-8", ...headers.get(req.url ?? "") });
    res.end(html ?? "not found");
  });
  return {
    server,
    raw(pathname: string, html: string, extraHeaders: Record<string, string> = {}) {
      pages.set(pathname, html);
      headers.set(pathname, extraHeaders);
    },
    page(pathname: string, canonical: string) {
      pages.set(pathname, `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>News</title>
<link rel="canonical" href="${canonical}"></head>
<body><h1>The article</h1><p>Some article text on the publisher's page.</p>
${snippet}
<p id="after">More of the page.</p></body></html>`);
    },
  };
}

// Read along: an article of several paragraphs, and a publisher's page that shows it with its own
// typography (curly quotes, markup inside paragraphs, other whitespace) and the snippet.
const RIVER = {
  title: "River rises",
  url: "https://news.example/river",
  paragraphs: [
    "The river rose overnight. By morning the old bridge was closed, and the ferry ran every hour.",
    'Shop owners on Quay Street moved their stock upstairs. "We have done this before," said one baker. Nobody expected the water to reach the market.',
    "The council opened the school hall for families who had to leave. Volunteers brought blankets, soup and dry socks.",
    "By Sunday the water had fallen again. The bridge reopened on Monday morning.",
  ],
};
const RIVER_PAGE_PARAGRAPHS = [
  "The river rose overnight.  By morning the old bridge was closed,\n and the ferry ran every hour.",
  "Shop owners on <em>Quay Street</em> moved their stock upstairs. “We have done this before,” said one baker. Nobody expected the water to reach the market.",
  "The council opened the school hall for families who had to leave. <a href=\"#help\">Volunteers</a> brought blankets, soup and dry&nbsp;socks.",
  "By Sunday the water had fallen again. The bridge reopened on Monday morning.",
];
const HL = "article-audio-player";

function riverPage(snippet: string, o: { lang?: string; dir?: string; attrs?: string; paragraphs?: string[] } = {}): string {
  const player = snippet.replace("></article-audio-player>", `${o.attrs ?? ""}></article-audio-player>`);
  const ps = (o.paragraphs ?? RIVER_PAGE_PARAGRAPHS).map((p) => `<p>${p}</p>`);
  // The last paragraph sits far below the first screen (for following along).
  return `<!doctype html><html lang="${o.lang ?? "en"}" dir="${o.dir ?? "ltr"}"><head><meta charset="utf-8"><title>Town news</title>
<link rel="canonical" href="${RIVER.url}"><link rel="icon" href="data:,"><style>main{max-width:36rem;margin:0 auto;padding:0 1rem}</style></head>
<body><header><a href="/">Town news</a></header>
<main><article><h1>${RIVER.title}</h1>
${player}
${ps.slice(0, 3).join("\n")}
<div style="height:2000px"></div>
${ps.slice(3).join("\n")}
<p id="help">Where to get help: the town hall.</p>
</article></main></body></html>`;
}

/** Letters and digits, lower case, without accents: how the player compares text. */
const folded = (s: string) => s.normalize("NFKD").toLowerCase().replace(/[^\p{L}\p{N}]/gu, "");

type Segments = { result: string; segments: Array<{ kind: string; text: string; start: number; end: number; sentences: Array<{ text: string; start: number; end: number }> }> };

/** Timed segments as the audio pipeline will record them, spread over the audio's real duration. */
function fixtureSegments(title: string, paragraphs: string[], duration: number): Segments {
  const parts = [[title], ...paragraphs.map((p) => p.split(/(?<=[.!?]"?)\s+/))];
  const per = (duration * 0.8) / parts.flat().join("").length;
  const ms = (x: number) => Math.round(x * 1000) / 1000;
  let t = 0.3;
  return {
    result: "ok",
    segments: parts.map((sentences, i) => {
      const timed = sentences.map((text) => {
        const s = { text, start: ms(t), end: ms(t + text.length * per) };
        t = s.end + 0.15;
        return s;
      });
      return { kind: i ? "paragraph" : "title", text: sentences.join(" "), start: timed[0].start, end: timed.at(-1)!.end, sentences: timed };
    }),
  };
}

/** The read-along overlay's buttons: their names and boxes. */
/** Seconds of audio that can have played since `since` (performance.now()): a loaded machine reads the position late, never early. */
const playedSince = (since: number) => (performance.now() - since) / 1000;

const overlayButtons = (page: Page) =>
  page.evaluate(`(() => { const o = document.querySelector("article-audio-read-along"); return o ? [...o.shadowRoot.querySelectorAll("button")].map((b) => b.getAttribute("aria-label")) : []; })()`) as Promise<string[]>;
/** The text of every range the player's highlight holds (null: no highlight registered). */
const highlighted = (page: Page) =>
  page.evaluate(`(() => { const h = CSS.highlights.get("${HL}"); return h ? [...h].map((r) => r.toString()) : null; })()`) as Promise<string[] | null>;

/** axe-core on the page as it is, with target-size (off by default in axe 4.11) turned on. */
async function axeViolations(page: Page): Promise<{ violations: string[]; targetSize: string }> {
  await page.addScriptTag({ path: require.resolve("axe-core/axe.min.js") });
  return (await page.evaluate(`axe.run(document, { rules: { "target-size": { enabled: true } } }).then((r) => ({
    violations: r.violations.map((v) => v.id + ": " + v.nodes.map((n) => n.target.join(" > ")).join(", ")),
    targetSize: r.passes.some((p) => p.id === "target-size") ? "passed" : r.inapplicable.some((p) => p.id === "target-size") ? "inapplicable" : "violated or incomplete",
  }))`)) as { violations: string[]; targetSize: string };
}

/** Every control of the player and the overlay, with its box (px). */
const targets = (page: Page) =>
  page.evaluate(`(() => {
    const roots = [document.querySelector("article-audio-player").shadowRoot];
    const o = document.querySelector("article-audio-read-along");
    if (o) roots.push(o.shadowRoot);
    return roots.flatMap((r) => [...r.querySelectorAll("button, input")]).map((e) => {
      const b = e.getBoundingClientRect();
      return { name: e.getAttribute("aria-label") || e.textContent, w: Math.round(b.width * 10) / 10, h: Math.round(b.height * 10) / 10 };
    });
  })()`) as Promise<Array<{ name: string; w: number; h: number }>>;

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
  let riverId: string;
  let germanId: string;
  let snippet: string;
  let publicKey: string;

  before(async function () {
    requireChromium(this);
    dataDir = await mkdtemp(path.join(tmpdir(), "e2e-player-"));
    sys = await startEmbedded({ PORT: "0", HOST: "127.0.0.1", DATA_DIR: dataDir, SEED_TOKENS: JSON.stringify([{ token: TOKEN, project: "browser", scope: "full" }]), AUDIO_ENGINE: process.env.AUDIO_ENGINE }, sink());
    A = api(sys.url, TOKEN);
    const created = await A("POST", "/api/articles", { title: "Library opens", text: TEXT, url: "https://news.example/library" });
    articleId = created.body.id;
    const gone = await A("POST", "/api/articles", { title: "Taken down", text: "This one will be deleted.", url: "https://news.example/taken-down" });
    riverId = (await A("POST", "/api/articles", { title: RIVER.title, text: RIVER.paragraphs.join("\n\n"), url: RIVER.url })).body.id;
    germanId = (await A("POST", "/api/articles", { title: "Die Bibliothek öffnet", voice: "alloy", lang: "de-DE", text: "Die neue Bibliothek der Stadt hat ihre Türen geöffnet. Lange Tische und stille Räume warten auf Leser jeden Alters.", url: "https://news.example/bibliothek" })).body.id;
    for (const id of [articleId, gone.body.id, riverId, germanId]) {
      await waitFor(`${id} ready`, async () => ((await A("GET", `/api/articles/${id}`)).body?.article?.status === "ready" ? true : undefined), 120_000, 200);
    }
    expect((await A("DELETE", `/api/articles/${gone.body.id}`)).status).to.equal(200);

    const player = await A("GET", "/api/player");
    snippet = player.body.snippet;
    publicKey = player.body.publicKey;
    site = publisherSite(player.body.snippet);
    site.page("/news/library", "https://news.example/library");
    site.page("/news/taken-down", "https://news.example/taken-down");
    await new Promise<void>((r) => site.server.listen(0, "127.0.0.1", r));
    // Another origin than the gateway: same host, other port.
    siteUrl = `http://127.0.0.1:${(site.server.address() as AddressInfo).port}`;
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--autoplay-policy=no-user-gesture-required", "--mute-audio"] });
    await mkdir(ARTIFACTS, { recursive: true });
  });

  const totals = async () => (await A("GET", `/api/articles/${articleId}/stats`)).body.total;
  /**
   * The article's figures once earlier tests' events have landed (they are written once a second):
   * unchanged over three reads 1.5 s apart, as a loaded machine can hold a flush back past one gap.
   */
  const settledTotals = () =>
    waitFor("earlier events counted", async () => {
      const reads = [await totals()];
      for (let i = 0; i < 2; i++) {
        await new Promise((r) => setTimeout(r, 1_500));
        reads.push(await totals());
      }
      return reads.every((x) => x.plays === reads[0].plays && x.impressions === reads[0].impressions) ? reads[2] : undefined;
    }, 60_000, 0);

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

    // Jumping to the end is no listen-through: the marks count what was heard, not where the playhead went.
    await inShadow(page, "(audio.currentTime = Math.max(0, audio.duration - 1.5), 0)");
    await waitFor("ended", async () => ((await inShadow<boolean>(page, "audio.ended")) ? true : undefined), 30_000, 100);
    const jumped = await waitFor("the play in the stats", async () => {
      const r = await A("GET", `/api/articles/${articleId}/stats`);
      return r.body?.total?.plays >= 1 && r.body.total.secondsListened > 0 ? r.body : undefined;
    }, 30_000, 500);
    expect(jumped.total.completions).to.equal(0);
    expect(jumped.total.progress75).to.equal(0);
    expect(jumped.bySource.player.plays).to.equal(jumped.total.plays);

    // Heard from start to end (at twice the speed), it completes.
    await inShadow(page, "(audio.playbackRate = 2, audio.currentTime = 0, audio.play(), 0)");
    await waitFor("ended again", async () => ((await inShadow<boolean>(page, "audio.ended")) ? true : undefined), 60_000, 100);
    const stats = await waitFor("the completion in the stats", async () => {
      const r = await A("GET", `/api/articles/${articleId}/stats`);
      return r.body?.total?.completions >= 1 ? r.body.total : undefined;
    }, 30_000, 500);
    expect(stats.impressions).to.be.at.least(1);
    expect(stats.progress75).to.be.at.least(1);
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
    const before = (await settledTotals()).plays;
    const page = await browser.newPage();
    await page.goto(pathToFileURL(file).href);
    await page.locator("article-audio-player button.play").click({ timeout: 30_000 });
    await waitFor("playing", async () => ((await inShadow<number>(page, "audio.currentTime")) > 0.3 ? true : undefined), 20_000, 100);
    await page.close();
    await waitFor("play counted", async () => ((await A("GET", `/api/articles/${articleId}/stats`)).body.total.plays > before ? true : undefined), 20_000, 250);
  });

  it("audio on demand: shows at once, plays the audio as it is made (the live stream) once play is pressed, then goes on in the full file from where it was", async function () {
    // The article is rendered below the service's priority: beside busy programs its opening and
    // its full file take minutes. The waits below are limits to give up at, never speeds (how soon
    // it plays is printed here and measured in `npx tsx bench/live-first-sound.ts`).
    this.timeout(1_500_000);
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
    await waitFor("playing the opening", async () => ((await inShadow<boolean>(page, "!audio.paused && audio.currentTime > 0")) ? true : undefined), 600_000, 20);
    const playing = performance.now();
    const msToPlay = Math.round(playing - t0);
    srcs.push(await inShadow<string>(page, "audio.src"));
    console.log(`      on demand, 5,000 characters: playing ${Math.round(playing - lookedUp!)} ms after the first lookup, ${msToPlay} ms after the page was opened (embedded default, local engine)`);
    // The audio as it is made plays first, before the preview file exists; how soon is printed above
    // and measured with Kokoro in `npx tsx bench/live-first-sound.ts`.
    expect(srcs[0]).to.match(new RegExp(`/player/v1/live/${id}/\\d+\\.mp3$`));
    const full = await waitFor("the full file", async () => {
      const [src, t, paused] = await inShadow<[string, number, boolean]>(page, "[audio.src, audio.currentTime, audio.paused]");
      return src.endsWith("/full.mp3") && t > 0.5 && !paused ? { t } : undefined;
    }, 600_000, 50);
    // Not from the start again: the position carried over, and it plays on.
    await waitFor("playing on", async () => ((await inShadow<number>(page, "audio.currentTime")) > full.t + 0.3 ? true : undefined), 60_000, 50);
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

  it(`keeps its look under a CSP without 'unsafe-inline' styles; stats="off" sends nothing and audio="preview" plays the preview`, async () => {
    const before = await settledTotals();
    const tag = (attrs: string) => snippet.replace("></article-audio-player>", ` article-id="${articleId}" ${attrs}></article-audio-player>`);
    // Scripts, lookups and audio only from the gateway; styles only from files of the page's origin.
    const csp = `default-src 'none'; script-src ${sys.url}; connect-src ${sys.url}; media-src ${sys.url}; style-src 'self'`;
    site.raw("/strict", `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Strict</title></head>
<body><h1>Editors' page</h1>${tag(`id="full" stats="off"`)}${tag(`id="preview" stats="off" audio="preview"`)}</body></html>`, { "content-security-policy": csp });
    const page = await browser.newPage();
    const refused: string[] = [];
    const beacons: string[] = [];
    page.on("console", (m) => void (/Content.Security.Policy|Refused to/i.test(m.text()) && refused.push(m.text())));
    page.on("request", (r) => void (r.url().includes("/player/v1/events") && beacons.push(r.postData() ?? "")));
    await page.addInitScript(`document.addEventListener("securitypolicyviolation", (e) => console.error("Refused to: " + e.violatedDirective), true)`);
    await page.goto(`${siteUrl}/strict`);
    const inPlayer = <T>(id: string, fn: string) => page.evaluate(`(() => { const root = document.getElementById("${id}").shadowRoot; const audio = root.querySelector("audio"); return (${fn}); })()`) as Promise<T>;
    await page.locator("#full button.play").waitFor({ state: "visible", timeout: 30_000 });
    await page.locator("#preview button.play").waitFor({ state: "visible", timeout: 30_000 });
    expect(await inPlayer<string[]>("full", `[getComputedStyle(root.querySelector(".play")).borderRadius, getComputedStyle(root.querySelector(".box")).display]`)).to.deep.equal(["999px", "flex"]);
    expect(await inPlayer<number>("full", `root.querySelectorAll("style").length`)).to.equal(0);

    expect(await inPlayer<string>("preview", "audio.src")).to.match(/\/preview\.mp3$/);
    expect(await inPlayer<string>("preview", `root.querySelector(".box").getAttribute("aria-label")`)).to.equal("Listen to the preview: Library opens");
    expect(await inPlayer<string>("full", "audio.src")).to.match(/\/full\.mp3$/);

    // Played to the end, then the page is left: everything that would normally send events.
    await page.locator("#full button.play").click();
    await waitFor("playing", async () => ((await inPlayer<number>("full", "audio.currentTime")) > 0.3 ? true : undefined), 20_000, 100);
    await inPlayer("full", "(audio.currentTime = Math.max(0, audio.duration - 1), 0)");
    await waitFor("ended", async () => ((await inPlayer<boolean>("full", "audio.ended")) ? true : undefined), 30_000, 100);
    await page.locator("#preview button.play").click();
    await waitFor("preview playing", async () => ((await inPlayer<number>("preview", "audio.currentTime")) > 0.3 ? true : undefined), 20_000, 100);
    await page.goto("about:blank");
    await page.close();
    expect(refused).to.deep.equal([]);
    expect(beacons).to.deep.equal([]);
    await new Promise((r) => setTimeout(r, 2_500));
    const after = await totals();
    expect({ plays: after.plays, impressions: after.impressions, completions: after.completions }).to.deep.equal({ plays: before.plays, impressions: before.impressions, completions: before.completions });
  });

  describe("read along, languages and accessibility", () => {
    let fixture: Segments;
    const segmentsUrl = () => `${sys.url}/test-fixture/river-segments.json`;
    const lookUp = async (id: string) => (await (await fetch(`${sys.url}/player/v1/article?key=${publicKey}&id=${id}`)).json()).article;

    before(async () => {
      fixture = fixtureSegments(RIVER.title, RIVER.paragraphs, (await lookUp(riverId)).audio_duration);
    });

    /** A publisher's page in Chromium; unless told otherwise, the lookup names the fixture's segments (until the pipeline records them). */
    async function open(pathname: string, html: string, o: { fixture?: boolean; width?: number } = {}) {
      site.raw(pathname, html);
      const page = await browser.newPage({ viewport: { width: o.width ?? 1280, height: 800 } });
      const problems: string[] = [];
      let served = 0;
      page.on("pageerror", (e) => problems.push(`pageerror: ${e}`));
      page.on("response", (r) => void (r.status() >= 400 && problems.push(`${r.status()}: ${r.url()}`)));
      page.on("console", (m) => void (m.type() === "error" && problems.push(`console: ${m.text()} ${m.location().url}`)));
      if (o.fixture !== false) {
        await page.route((u) => u.href.startsWith(`${sys.url}/player/v1/article?`), async (route) => {
          const res = await route.fetch();
          const body = await res.json();
          if (body.article?.id === riverId) body.article.segments = segmentsUrl();
          await route.fulfill({ status: res.status(), headers: { "access-control-allow-origin": "*", "content-type": "application/json" }, body: JSON.stringify(body) });
        });
        await page.route(segmentsUrl(), async (route) => {
          served++;
          await route.fulfill({ headers: { "access-control-allow-origin": "*", "content-type": "application/json" }, body: JSON.stringify(fixture) });
        });
      }
      // Every change to the page's DOM once it is parsed, but the player element's own attributes and the overlay's arrival.
      await page.addInitScript(`document.addEventListener("DOMContentLoaded", () => {
        const seen = (window.__pageMutations = []);
        new MutationObserver((ms) => { for (const m of ms) {
          if (m.type === "attributes" && m.target.localName === "article-audio-player") continue;
          if (m.type === "childList" && m.target === document.body && [...m.addedNodes, ...m.removedNodes].every((n) => n.localName === "article-audio-read-along")) continue;
          seen.push(m.type + " " + m.target.nodeName);
        } }).observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
      });`);
      await page.goto(`${siteUrl}${pathname}`);
      await page.locator("article-audio-player button.play").waitFor({ state: "visible", timeout: 30_000 });
      return { page, problems, served: () => served, mutations: () => page.evaluate("window.__pageMutations") as Promise<string[]> };
    }
    const readAlongReady = (page: Page) => waitFor("play-from-here buttons", async () => ((await overlayButtons(page)).length === 4 ? true : undefined), 15_000, 50);
    const names = (page: Page) => inShadow<string[]>(page, `[...root.querySelectorAll("button, input")].map((e) => e.getAttribute("aria-label") || e.textContent)`);
    const seekTo = (page: Page, t: number) => inShadow(page, `(audio.pause(), audio.currentTime = ${t}, 0)`);
    const highlightOf = (page: Page, text: string) =>
      waitFor(`highlight of "${text}"`, async () => {
        const h = await highlighted(page);
        return h && h.length === 1 && folded(h[0]) === folded(text) ? h[0].replace(/\s+/g, " ") : undefined;
      }, 5_000, 50);

    /** Play from here on the third paragraph and the highlight at a few times, against the segments given. */
    async function playFromThirdAndFollow(page: Page, segments: Segments) {
      const third = segments.segments.filter((s) => s.kind === "paragraph")[2];
      const button = page.locator("article-audio-read-along button").nth(2);
      await button.focus();
      const box = (await button.boundingBox())!;
      const para = (await page.locator("article p").nth(2).boundingBox())!;
      expect(box.width).to.be.at.least(44);
      expect(box.height).to.be.at.least(44);
      const pressed = performance.now();
      await page.keyboard.press("Enter");
      const at = await waitFor("playing from the third paragraph", async () => {
        const [t, paused] = await inShadow<[number, boolean]>(page, "[audio.currentTime, audio.paused]");
        return !paused && t > 0 ? t : undefined;
      }, 30_000, 20);
      console.log(`      play from here: third paragraph starts at ${third.start} s, playing from ${at.toFixed(3)} s; its button ${box.width}×${box.height} px at y ${Math.round(box.y)} beside the paragraph at y ${Math.round(para.y)}`);
      expect(at).to.be.within(third.start - 0.05, third.start + 0.5 + playedSince(pressed));
      expect(await inShadow<string>(page, "audio.src")).to.match(/\/full\.mp3$/);
      await highlightOf(page, third.sentences[0].text);
      // Seeking moves the highlight: it follows currentTime.
      const seen: string[] = [];
      for (const [p, i] of [[0, 1], [1, 0], [1, 1], [2, 1], [3, 0]]) {
        const sentence = segments.segments.filter((s) => s.kind === "paragraph")[p].sentences[i];
        await seekTo(page, (sentence.start + sentence.end) / 2);
        seen.push(await highlightOf(page, sentence.text));
      }
      return seen;
    }

    it("plays from the third paragraph's start, highlights the sentence being read as it goes, follows along when asked, and leaves the page's DOM as it was", async () => {
      const { page, problems, mutations } = await open("/news/river", riverPage(snippet));
      await readAlongReady(page);
      const buttons = await overlayButtons(page);
      expect(buttons[2]).to.equal("Play from here: The council opened the school hall…");
      expect(buttons.every((b) => b.startsWith("Play from here: "))).to.equal(true);
      // Hidden until hovered or focused; beside its paragraph, not in it.
      const third = page.locator("article-audio-read-along button").nth(2);
      expect(await third.evaluate((b) => (globalThis as any).getComputedStyle(b).opacity)).to.equal("0");
      await page.locator("article p").nth(2).hover();
      await waitFor("shown on hover", async () => ((await third.evaluate((b) => (globalThis as any).getComputedStyle(b).opacity)) === "1" ? true : undefined), 5_000, 50);
      const [b, p] = [(await third.boundingBox())!, (await page.locator("article p").nth(2).boundingBox())!];
      expect(b.x + b.width).to.be.at.most(p.x);
      expect(Math.abs(b.y - p.y)).to.be.below(2);

      const seen = await playFromThirdAndFollow(page, fixture);
      // The page's own text, its typography and markup, is what is highlighted.
      expect(seen).to.deep.equal([
        "By morning the old bridge was closed, and the ferry ran every hour.",
        "Shop owners on Quay Street moved their stock upstairs.",
        "“We have done this before,” said one baker.",
        "Volunteers brought blankets, soup and dry socks.",
        "By Sunday the water had fallen again.",
      ]);
      // Before the first sentence: nothing.
      await seekTo(page, 0.1);
      await waitFor("no highlight", async () => ((await highlighted(page))?.length === 0 ? true : undefined), 5_000, 50);

      // The listener turns highlighting off and on again.
      const first = fixture.segments[1].sentences[0];
      await seekTo(page, (first.start + first.end) / 2);
      await highlightOf(page, first.text);
      const tool = (name: string) => page.locator("article-audio-player .tools button", { hasText: name });
      expect(await tool("Highlight text").getAttribute("aria-pressed")).to.equal("true");
      await tool("Highlight text").click();
      expect(await tool("Highlight text").getAttribute("aria-pressed")).to.equal("false");
      expect(await highlighted(page)).to.deep.equal([]);
      await tool("Highlight text").click();
      await highlightOf(page, first.text);

      // Following along is off by default: the page does not move while the last paragraph is read.
      await page.emulateMedia({ reducedMotion: "reduce" });
      const last = fixture.segments[4].sentences[1];
      await page.evaluate("window.scrollTo(0, 0)");
      await seekTo(page, (last.start + last.end) / 2);
      await highlightOf(page, last.text);
      await page.waitForTimeout(300);
      expect(await page.evaluate("window.scrollY")).to.equal(0);
      // Asked for, it brings the sentence into view, at once under reduced motion (no smooth scrolling).
      expect(await tool("Follow along").getAttribute("aria-pressed")).to.equal("false");
      await tool("Follow along").click();
      const [y, top, bottom] = (await page.evaluate(`(() => { const r = [...CSS.highlights.get("${HL}")][0].getBoundingClientRect(); return [window.scrollY, r.top, r.bottom]; })()`)) as number[];
      expect(y).to.be.above(1000);
      expect(top).to.be.at.least(0);
      expect(bottom).to.be.at.most(800);

      expect(await mutations()).to.deep.equal([]);
      expect(problems).to.deep.equal([]);
      await page.close();
    });

    it("speaks German on a German page (controls, speed, play from here), and follows the element's own lang", async () => {
      const { page, problems } = await open("/de/river", riverPage(snippet, { lang: "de" }));
      await readAlongReady(page);
      expect(await names(page)).to.deep.equal(["Abspielen", "Position", "15 Sekunden zurück", "Wiedergabegeschwindigkeit 1×", "Text hervorheben", "Mitscrollen"]);
      expect(await inShadow<string>(page, `root.querySelector(".box").getAttribute("aria-label")`)).to.equal("Artikel anhören: River rises");
      await page.locator("article-audio-player button.speed").click();
      expect(await inShadow<string[]>(page, `[root.querySelector(".speed").getAttribute("aria-label"), root.querySelector(".speed").textContent]`)).to.deep.equal(["Wiedergabegeschwindigkeit 1,25×", "1,25×"]);
      expect((await overlayButtons(page))[2]).to.equal("Ab hier abspielen: The council opened the school hall…");
      expect(await page.evaluate(`document.querySelector("article-audio-read-along").shadowRoot.querySelector("[role=region]").getAttribute("aria-label")`)).to.equal("Mitlesen");
      expect(problems).to.deep.equal([]);
      await page.close();

      // The element's own lang; and in right-to-left text the buttons sit in the right margin.
      const own = await open("/news/river-de-player", riverPage(snippet, { attrs: ' lang="de"', dir: "rtl" }));
      expect((await names(own.page))[0]).to.equal("Abspielen");
      await readAlongReady(own.page);
      const [b, p] = [(await own.page.locator("article-audio-read-along button").nth(0).boundingBox())!, (await own.page.locator("article p").nth(0).boundingBox())!];
      expect(b.x).to.be.at.least(p.x + p.width);
      await own.page.close();
    });

    it("adds nothing and says nothing when the page's text does not match the article's", async () => {
      const { page, problems, served, mutations } = await open("/news/river-rewritten", riverPage(snippet, { paragraphs: ["A different text altogether.", "Nothing here is what was read aloud.", "Nor here.", "Nor here, either."] }));
      await waitFor("segments fetched", async () => (served() ? true : undefined), 10_000, 50);
      await page.waitForTimeout(500);
      expect(await page.evaluate(`document.querySelector("article-audio-read-along")`)).to.equal(null);
      expect(await inShadow<unknown>(page, `root.querySelector(".tools")`)).to.equal(null);
      expect(await highlighted(page)).to.equal(null);
      await page.locator("article-audio-player button.play").click();
      await waitFor("playing", async () => ((await inShadow<number>(page, "audio.currentTime")) > 0.3 ? true : undefined), 20_000, 100);
      expect(await mutations()).to.deep.equal([]);
      expect(problems).to.deep.equal([]);
      await page.close();
    });

    it(`highlights nothing where the publisher says highlight="off", and still offers play from here`, async () => {
      const { page, problems } = await open("/news/river-no-highlight", riverPage(snippet, { attrs: ' highlight="off"' }));
      await readAlongReady(page);
      const sentence = fixture.segments[2].sentences[1];
      await seekTo(page, (sentence.start + sentence.end) / 2);
      await page.waitForTimeout(500);
      expect(await highlighted(page)).to.equal(null);
      expect(await inShadow<string[]>(page, `[...root.querySelectorAll(".tools button")].map((b) => b.textContent)`)).to.deep.equal(["Follow along"]);
      // With the mouse: the paragraph under the pointer shows its button, which takes the click.
      await page.locator("article p").nth(1).hover();
      const clicked = performance.now();
      await page.locator("article-audio-read-along button").nth(1).click();
      const at = await waitFor("playing from the second paragraph", async () => {
        const [t, paused] = await inShadow<[number, boolean]>(page, "[audio.currentTime, audio.paused]");
        return !paused && t > 0 ? t : undefined;
      }, 30_000, 20);
      expect(at).to.be.within(fixture.segments[2].start - 0.05, fixture.segments[2].start + 0.5 + playedSince(clicked));
      expect(await highlighted(page)).to.equal(null);
      // A paragraph the page hides takes its button with it.
      await page.evaluate(`document.querySelectorAll("article p")[3].style.display = "none"`);
      await waitFor("the hidden paragraph's button gone", async () => ((await page.locator("article-audio-read-along button").nth(3).isVisible()) ? undefined : true), 5_000, 50);
      expect(problems).to.deep.equal([]);
      await page.close();
    });

    it("passes axe-core (target-size on) with 44 px targets: article page and embed page, English and German, 1280 and 375 px wide", async () => {
      const report: string[] = [];
      const failures: string[] = [];
      for (const width of [1280, 375]) {
        for (const lang of ["en", "de"]) {
          const { page } = await open(`/${lang}/river-axe-${width}`, riverPage(snippet, { lang }), { width });
          await readAlongReady(page);
          const embed = await browser.newPage({ viewport: { width, height: 800 } });
          await embed.goto(`${sys.url}/player/v1/embed/${publicKey}/${lang === "de" ? germanId : articleId}`);
          await embed.locator("article-audio-player button.play").waitFor({ state: "visible", timeout: 30_000 });
          expect(await inShadow<string>(embed, `root.querySelector(".play").getAttribute("aria-label")`)).to.equal(lang === "de" ? "Abspielen" : "Play");
          expect(await embed.evaluate(`[document.documentElement.lang, document.querySelector("main > h1").textContent]`)).to.deep.equal(lang === "de" ? ["de-DE", "Die Bibliothek öffnet"] : ["en-US", "Library opens"]);
          if (lang === "en") {
            // For people to look at: the player with its read-along switches, and the buttons beside the text.
            await page.locator("article p").nth(1).hover();
            await page.waitForTimeout(300);
            const file = path.join(ARTIFACTS, `read-along-${width}.png`);
            await page.screenshot({ path: file });
            console.log(`      screenshot: ${file}`);
          }
          for (const [what, p] of [["article page", page], ["embed page", embed]] as const) {
            const small = (await targets(p)).filter((t) => t.w < 44 || t.h < 44);
            const axe = await axeViolations(p);
            report.push(`${what}, ${lang}, ${width} px: ${axe.violations.length} violations, target-size ${axe.targetSize}, targets under 44×44: ${small.length}`);
            failures.push(...axe.violations.map((v) => `${what} ${lang} ${width}: ${v}`), ...small.map((t) => `${what} ${lang} ${width}: ${t.name} is ${t.w}×${t.h}`));
            if (axe.targetSize !== "passed") failures.push(`${what} ${lang} ${width}: target-size ${axe.targetSize}`);
          }
          await page.close();
          await embed.close();
        }
      }
      for (const line of report) console.log(`      axe: ${line}`);
      expect(failures).to.deep.equal([]);
    });

    // Needs the timed segments of the audio pipeline and the lookup's `segments` (merged from other branches).
    it("reads along with the segments the audio pipeline records (end to end, no fixture)", async function () {
      const article = await lookUp(riverId);
      if (!article.segments) {
        // Once the pipeline's segments are on this branch, a lookup without them is a failure, not a skip.
        if (existsSync(path.resolve("services/audio/segments"))) expect.fail("the lookup names no segments for a ready article although the pipeline records them");
        console.warn("      ⚠ not run: the lookup names no segments yet (timed segments not merged here)");
        return this.skip();
      }
      const real = (await (await fetch(article.segments)).json()) as Segments;
      expect(real.segments.filter((s) => s.kind === "paragraph").map((s) => folded(s.text))).to.deep.equal(RIVER.paragraphs.map(folded));
      const { page, problems, mutations } = await open("/news/river-real", riverPage(snippet), { fixture: false });
      await readAlongReady(page);
      await playFromThirdAndFollow(page, real);
      expect(await mutations()).to.deep.equal([]);
      expect(problems).to.deep.equal([]);
      await page.close();
    });
  });
});
