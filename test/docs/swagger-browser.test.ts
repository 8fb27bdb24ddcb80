// The interactive API reference in a real browser (Debian's Chromium driven by
// playwright-core): a reader authorizes once, reloads, and is still signed in.
import { expect } from "chai";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { chromium, type Browser } from "playwright-core";
import { startEmbedded, type Embedded } from "../../launch/embedded.js";
import { CHROMIUM, requireChromium } from "../support/chromium.js";
import { sink } from "../support/sink.js";

const TOKEN = "docs-reader-0123456789";

describe("API docs page in a real browser (Chromium)", function () {
  this.timeout(120_000);
  let dataDir: string;
  let sys: Embedded;
  let browser: Browser;

  before(async function () {
    requireChromium(this);
    dataDir = await mkdtemp(path.join(tmpdir(), "docs-browser-"));
    sys = await startEmbedded({ PORT: "0", HOST: "127.0.0.1", DATA_DIR: dataDir, SEED_TOKENS: JSON.stringify([{ token: TOKEN, project: "docs", scope: "read" }]) }, sink());
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
  });

  after(async () => {
    await browser?.close();
    await sys?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it("keeps the token typed into Authorize across a reload, and uses it for Try it out", async () => {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    await page.goto(`${sys.url}/api`);
    expect(new URL(page.url()).pathname).to.equal("/api/docs");

    // As a reader does it: the Authorize dialog, the token, Authorize, Close.
    await page.locator("button.authorize").first().click();
    await page.locator(".modal-ux input").first().fill(TOKEN);
    await page.locator(".modal-ux button.authorize").first().click();
    await page.locator(".modal-ux button.btn-done").first().click();

    await page.reload();
    await page.locator("button.authorize").first().waitFor({ state: "visible", timeout: 30_000 });
    const kept = await page.evaluate(() => (window as any).ui.authSelectors.authorized().toJS());
    expect(kept).to.have.nested.property("bearerAuth.value", TOKEN);

    // "Try it out" on the list operation sends the kept token: 200, not 401.
    const op = page.locator("#operations-articles-listArticles, [id$='-listArticles']").first();
    await op.locator(".opblock-summary").first().click();
    await op.locator("button.try-out__btn").click();
    await op.locator("button.execute").click();
    const code = op.locator(".live-responses-table .response .response-col_status").first();
    await code.waitFor({ state: "visible", timeout: 30_000 });
    expect((await code.textContent())?.trim()).to.equal("200");
    expect(errors).to.deep.equal([]);
  });
});
