// The player designer in Chromium against the embedded default: the contrast check refuses what
// listeners could not see, the preview is the real player restyled live, and a saved look reaches
// an embed that was never edited.
import { expect } from "chai";
import type { Page } from "playwright-core";
import { api, waitFor } from "../../test/support/http.js";
import { requireChromium } from "../../test/support/chromium.js";
import { startConsoleSystem, type ConsoleBrowser, type ConsoleSystem } from "./console-flows.js";

const FULL = "console-design-0123456789";

const inPreview = <T>(page: Page, fn: string): Promise<T> =>
  page.evaluate(`(() => { const root = document.querySelector("#design-preview article-audio-player").shadowRoot; return (${fn}); })()`) as Promise<T>;

describe("publisher console: player designer (Chromium)", function () {
  this.timeout(240_000);
  let system: ConsoleSystem | undefined;
  let sys: ConsoleSystem["sys"];
  let cb: ConsoleBrowser;
  let A: ReturnType<typeof api>;
  let articleId: string;

  before(async function () {
    requireChromium(this);
    system = await startConsoleSystem({ name: "design", token: FULL, project: "design" });
    ({ sys, cb } = system);
    A = api(sys.url, FULL);
    articleId = (await A("POST", "/api/articles", { title: "Harbour opens", text: "The new harbour opened on Monday. Ferries leave every hour." })).body.id;
    await waitFor("ready", async () => ((await A("GET", `/api/articles/${articleId}`)).body?.article?.status === "ready" ? true : undefined), 120_000, 200);
  });

  after(async () => system?.close());

  afterEach(() => cb?.expectNoErrors());

  it("checks contrast as colours are chosen, restyles the real player live, and a saved look reaches an untouched embed", async () => {
    const { ctx, page } = await cb.newPage({ token: FULL });
    await page.goto(`${sys.url}/console/#/design`);
    await page.locator("#design-preview article-audio-player").waitFor({ state: "attached", timeout: 20_000 });
    await waitFor("preview drawn", async () => ((await inPreview<boolean>(page, `!!root.querySelector(".play")`)) ? true : undefined), 20_000, 100);
    expect(await page.locator("#save-look").isEnabled()).to.equal(true);

    // A pale accent on the light background: the check says so and saving is off.
    await page.locator("#look-accent-builtin").uncheck();
    await page.locator("#look-accent").fill("#ffee58");
    await waitFor("refused", async () => ((await page.locator("#save-look").isDisabled()) ? true : undefined), 5_000, 50);
    expect(await page.locator('#contrast tr[data-ok="false"] .fail').count()).to.be.greaterThan(0);

    // A dark blue on a fixed light scheme passes; the preview follows every change without a new lookup.
    await page.locator("#look-accent").fill("#0b57d0");
    await page.locator("#look-scheme").selectOption("light");
    await page.locator("#look-layout").selectOption("compact");
    await page.locator("#look-control-speed").uncheck();
    await waitFor("accent in the preview", async () => ((await inPreview<string>(page, `getComputedStyle(root.querySelector(".play")).backgroundColor`)) === "rgb(11, 87, 208)" ? true : undefined), 5_000, 50);
    expect(await inPreview<string>(page, `getComputedStyle(root.querySelector(".title")).display`)).to.equal("none");
    expect(await inPreview<string>(page, `getComputedStyle(root.querySelector(".speed")).display`)).to.equal("none");
    expect(await inPreview<string>(page, `getComputedStyle(root.querySelector(".back")).display`)).not.to.equal("none");
    expect(await page.locator('#contrast tr[data-ok="false"]').count()).to.equal(0);

    await page.locator("#save-look").click();
    await page.locator(".form-status .ok, .form-status [role=status]").first().waitFor();
    await waitFor("saved", async () => ((await A("GET", "/api/player")).body.settings.look.accent === "#0b57d0" ? true : undefined), 10_000, 100);
    const look = (await A("GET", "/api/player")).body.settings.look;
    expect(look).to.deep.include({ scheme: "light", layout: "compact", controls: { seek: true, time: true, back: true, speed: false } });
    await ctx.close();

    // The embed page was never touched: its player takes the look from the lookup.
    const { ctx: lctx, page: listener } = await cb.newPage();
    const key = (await A("GET", "/api/player")).body.publicKey;
    await waitFor("embed restyled", async () => {
      await listener.goto(`${sys.url}/player/v1/embed/${key}/${articleId}`);
      await listener.locator("article-audio-player button.play").waitFor({ state: "visible", timeout: 10_000 });
      const bg = await listener.evaluate(`getComputedStyle(document.querySelector("article-audio-player").shadowRoot.querySelector(".play")).backgroundColor`);
      return bg === "rgb(11, 87, 208)" ? true : undefined;
    }, 30_000, 500);
    expect(await listener.evaluate(`getComputedStyle(document.querySelector("article-audio-player").shadowRoot.querySelector(".speed")).display`)).to.equal("none");
    await lctx.close();
  });
});
