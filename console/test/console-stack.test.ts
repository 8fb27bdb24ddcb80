// The console's essential flows on the full stack (auth, articles, two audio workers and the
// gateway as separate processes; MongoDB and NATS JetStream), in Chromium: sign-in with a full
// token, an article from the form to ready and played in the platform's player (not counted),
// and a read token's pages without write controls. The same steps as console-browser.test.ts
// (console-flows.ts); in CI a server or browser that cannot start fails the run, never skips it.
import { expect } from "chai";
import type { Browser } from "playwright-core";
import { api } from "../../test/support/http.js";
import { requireChromium } from "../../test/support/chromium.js";
import { requireMongo, requireNats } from "../../test/support/servers.js";
import { startTestStack, TOKENS, type TestStack } from "../../test/e2e/stack-harness.js";
import { ConsoleBrowser, expectConsoleListensApart, expectNoWriteControls, launchChromium, playOnArticlePage, sentencesHighlighted, statusesUntilReady, submitArticle } from "./console-flows.js";

describe("publisher console on the full stack (MongoDB, NATS JetStream, one process per service) in Chromium", function () {
  this.timeout(300_000);
  let t: TestStack;
  let browser: Browser;
  let cb: ConsoleBrowser;
  let readyId = "";

  before(async function () {
    requireChromium(this);
    const mongoUrl = await requireMongo(this);
    const natsUrl = await requireNats(this);
    t = await startTestStack({ mongoUrl, natsUrl });
    browser = await launchChromium();
    cb = new ConsoleBrowser(browser, t.stack.url);
  });

  afterEach(function () {
    if (this.currentTest?.state === "failed" && t) console.log(`--- last stack output ---\n${t.logs.tail()}`);
    cb?.expectNoErrors();
  });

  after(async () => {
    await browser?.close();
    await t?.cleanup();
  });

  it("signs in with a full token, creates an article that reaches ready without a reload, and plays it, counted as the console's, not a listener's", async () => {
    const { ctx, page } = await cb.newPage();
    await cb.signIn(page, TOKENS.aFull);
    expect(await page.locator(".scope").textContent()).to.equal("Full token");
    await page.locator("#new-article").click();
    readyId = await submitArticle(page, {
      title: "Harbour reopens",
      text: "The old harbour reopened on Friday after a year of repairs. Fishing boats and ferries are back at the quay.",
      url: "https://news.example/harbour",
    });
    expect((await statusesUntilReady(page)).at(-1)).to.equal("ready");
    // Stored in MongoDB, audio in GridFS: what the page played is what the API answers.
    const article = (await api(t.stack.url, TOKENS.aFull)("GET", `/api/articles/${encodeURIComponent(readyId)}`)).body.article;
    expect(article).to.include({ status: "ready", title: "Harbour reopens" });
    await playOnArticlePage(page);
    // The text on the page, read along: the segments come from the full stack's audio store.
    expect(await sentencesHighlighted(page, 2)).to.have.members(["The old harbour reopened on Friday after a year of repairs.", "Fishing boats and ferries are back at the quay."]);
    await ctx.close();
    await expectConsoleListensApart(cb, api(t.stack.url, TOKENS.aFull), readyId);
  });

  it("with a read token shows no write controls on any page, saying why", async () => {
    const { ctx, page } = await cb.newPage();
    await cb.signIn(page, TOKENS.aRead);
    await expectNoWriteControls(cb, page, readyId);
    await ctx.close();
  });
});
