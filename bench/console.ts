// The publisher console's paint and responsiveness (issue 24: first contentful
// paint of the article list under 1 s with 1,000 articles in the project, under
// 100 ms per interaction at 100 articles per page), in headless Chromium against
// the embedded default. The reference, measured in the same run, is the same
// rendered list saved as a static page without scripts and served by a bare
// HTTP server: what the browser needs to paint and answer input on that DOM
// alone. The console's figures are printed beside it and as a ratio.
//
//   npx tsx bench/console.ts        (also `npm run bench`, suite "console")
//
// Environment: BENCH_CONSOLE_ARTICLES (default 1,000), BENCH_CONSOLE_RUNS
// (cold page loads per side, default 5; medians are reported).
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os, { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import type { Page } from "playwright-core";
import { ConsoleBrowser, importArchive, launchChromium, paintTimes } from "../console/test/console-flows.js";
import { startEmbedded } from "../launch/embedded.js";
import { CHROMIUM } from "../test/support/chromium.js";
import { quantile } from "./quantile.js";

const HERE = dirname(fileURLToPath(import.meta.url));
const TOKEN = "bench-console-0123456789";
const ARTICLES = Number(process.env.BENCH_CONSOLE_ARTICLES ?? 1000);
const RUNS = Number(process.env.BENCH_CONSOLE_RUNS ?? 5);

export interface ConsoleFigures {
  articles: number;
  runs: number;
  /** Medians over the runs, ms: first contentful paint, the list drawn, the longest interaction (input to next paint). */
  console: { fcp: number; list: number; interaction: number; samples: Side[] };
  reference: { fcp: number; interaction: number; samples: Side[] };
  load: number;
}
interface Side {
  fcp: number;
  list: number;
  interaction: number;
  events: string[];
}

/** Watches interactions as INP counts them (an interactionId: clicks, taps, key presses). */
async function observeInteractions(p: Page): Promise<void> {
  await p.evaluate(() => {
    const w = window as unknown as { events: string[]; maxEvent: number };
    w.maxEvent = 0;
    w.events = [];
    new PerformanceObserver((l) => {
      for (const e of l.getEntries()) {
        if (!(e as PerformanceEntry & { interactionId?: number }).interactionId) continue;
        w.maxEvent = Math.max(w.maxEvent, e.duration);
        w.events.push(`${e.name} ${Math.round(e.duration)}`);
      }
    }).observe({ type: "event", buffered: true, durationThreshold: 16 } as PerformanceObserverInit);
  });
}

async function interactions(p: Page): Promise<{ interaction: number; events: string[] }> {
  await p.waitForTimeout(300);
  return p.evaluate(() => ({ interaction: (window as unknown as { maxEvent: number }).maxEvent, events: (window as unknown as { events: string[] }).events }));
}

/**
 * Loads the list on a cold tab, then presses Tab 15 times, hovers a badge, sets the status
 * filter and clears it, and goes to the next page. `live`: the console, which draws each
 * answer (the static reference changes only the select's value).
 */
async function loadAndUse(p: Page, url: string, live: boolean): Promise<Side> {
  const rows = p.locator("table.articles tbody tr");
  await p.goto(url);
  await rows.nth(99).waitFor();
  const t = await paintTimes(p);
  await observeInteractions(p);
  for (let i = 0; i < 15; i++) await p.keyboard.press("Tab");
  await p.locator(".badge").nth(50).hover();
  await p.locator("#filter-status").selectOption("waiting");
  if (live) await p.locator("table.articles, .empty").first().waitFor();
  await p.locator("#filter-status").selectOption("");
  if (live) await rows.nth(99).waitFor();
  await p.locator("button", { hasText: "Next" }).click();
  if (live) {
    await p.waitForURL(/page=1/);
    await rows.nth(99).waitFor();
  }
  return { ...t, list: live ? t.list : t.fcp, ...(await interactions(p)) };
}

export async function measureConsole(): Promise<ConsoleFigures> {
  const dataDir = mkdtempSync(join(tmpdir(), "bench-console-"));
  const sink = new Writable({ write: (_c, _e, cb) => cb() });
  const sys = await startEmbedded({ PORT: "0", HOST: "127.0.0.1", DATA_DIR: dataDir, LOG_LEVEL: "warn", SEED_TOKENS: JSON.stringify([{ token: TOKEN, project: "bench", scope: "full" }]) }, sink);
  const browser = await launchChromium();
  let staticServer: http.Server | undefined;
  try {
    const last = await importArchive(sys.url, TOKEN, ARTICLES);
    if (last !== `{"result":"ok","imported":${ARTICLES},"failed":0}`) throw new Error(`import failed: ${last}`);
    const cb = new ConsoleBrowser(browser, sys.url);
    const listUrl = `${sys.url}/console/#/articles?limit=100`;

    // Warm the build and the HTTP cache once, then keep the rendered page as the reference's DOM.
    const warm = await cb.newPage({ token: TOKEN });
    await warm.page.goto(listUrl);
    await warm.page.locator("table.articles tbody tr").nth(99).waitFor();
    const snapshot = await warm.page.evaluate((origin) => {
      const doc = document.documentElement.cloneNode(true) as HTMLElement;
      for (const s of doc.querySelectorAll("script, link[rel=modulepreload]")) s.remove();
      for (const l of doc.querySelectorAll<HTMLLinkElement>("link[rel=stylesheet]")) l.href = new URL(l.getAttribute("href")!, origin).href;
      return `<!doctype html>\n${doc.outerHTML}`;
    }, sys.url);
    await warm.ctx.close();
    staticServer = http.createServer((_req, res) => res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(snapshot));
    await new Promise<void>((r) => staticServer!.listen(0, "127.0.0.1", r));
    const staticUrl = `http://127.0.0.1:${(staticServer.address() as AddressInfo).port}/`;

    const consoleRuns: Side[] = [];
    const referenceRuns: Side[] = [];
    for (let run = 0; run < RUNS; run++) {
      // The console: a cold tab, then the same inputs as the reference, each answered by the API.
      const live = await cb.newPage({ token: TOKEN });
      consoleRuns.push(await loadAndUse(live.page, listUrl, true));
      await live.ctx.close();
      const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      referenceRuns.push(await loadAndUse(await ctx.newPage(), staticUrl, false));
      await ctx.close();
    }
    const med = (rs: Side[], k: "fcp" | "list" | "interaction") => quantile(rs.map((r) => r[k]), 0.5);
    return {
      articles: ARTICLES,
      runs: RUNS,
      console: { fcp: med(consoleRuns, "fcp"), list: med(consoleRuns, "list"), interaction: med(consoleRuns, "interaction"), samples: consoleRuns },
      reference: { fcp: med(referenceRuns, "fcp"), interaction: med(referenceRuns, "interaction"), samples: referenceRuns },
      load: os.loadavg()[0],
    };
  } finally {
    staticServer?.close();
    await browser.close();
    await sys.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

export function formatConsole(r: ConsoleFigures): string {
  const ms = (n: number) => `${n.toFixed(0)} ms`;
  const ratio = (a: number, b: number) => (b > 0 ? `${(a / b).toFixed(2)}×` : "n/a");
  const mark = (ok: boolean) => (ok ? "OK" : "MISSED");
  const worst = r.console.samples.reduce((a, s) => (s.interaction > a.interaction ? s : a), r.console.samples[0]);
  return [
    `publisher console, article list of ${r.articles.toLocaleString("en")} articles at 100 per page, median of ${r.runs} cold loads (load ${r.load.toFixed(1)}):`,
    `  first contentful paint ${ms(r.console.fcp)} (target < 1 s) ${mark(r.console.fcp < 1000)}; the same rows as a static page ${ms(r.reference.fcp)}: ${ratio(r.console.fcp, r.reference.fcp)}`,
    `  list drawn ${ms(r.console.list)} (the list's API answer included)`,
    `  longest interaction (input to next paint) ${ms(r.console.interaction)} (target < 100 ms) ${mark(r.console.interaction < 100)}; on the static page ${ms(r.reference.interaction)}: ${ratio(r.console.interaction, r.reference.interaction)}`,
    `  slowest run's events over 16 ms: ${worst?.events.join(", ") || "none"}`,
  ].join("\n");
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  let r: ConsoleFigures | { skipped: string };
  if (!existsSync(CHROMIUM)) {
    r = { skipped: `no Chromium at ${CHROMIUM}` };
    console.log(`publisher console: skipped (${r.skipped})`);
  } else {
    r = await measureConsole();
    console.log(formatConsole(r));
  }
  mkdirSync(join(HERE, "results"), { recursive: true });
  writeFileSync(join(HERE, "results", "console.json"), `${JSON.stringify(r, null, 2)}\n`);
}
