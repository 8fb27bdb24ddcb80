// Verified oEmbed hosts, written once and run on the embedded default and on
// the full stack (MongoDB auth store). A loopback HTTP server plays the
// owner's web site; the system under test must list 127.0.0.1 in
// FETCH_ALLOW_PRIVATE to reach it (and so may check it over plain http), and
// run with a short OEMBED_RECHECK_HOURS and OEMBED_GRACE_HOURS=0 so that the
// periodic re-check is seen within the test.
import { expect } from "chai";
import http from "node:http";
import { isIP, type AddressInfo } from "node:net";
import { api, waitFor } from "../support/http.js";

export const OEMBED_TEST_ENV = { FETCH_ALLOW_PRIVATE: "127.0.0.1", OEMBED_RECHECK_HOURS: "0.0005", OEMBED_GRACE_HOURS: "0" };

/** The owner's site: serves /.well-known/article-audio.txt while `file` is set, 404 otherwise. */
export class OwnerSite {
  file: string | null = null;
  fileRequests = 0;
  host = "";
  port = 0;
  private server?: http.Server;

  /** `address`: where to listen (a host name's first address, to reach the site by that name). */
  async start(address = "127.0.0.1"): Promise<void> {
    this.server = http.createServer((req, res) => {
      if (req.url === "/.well-known/article-audio.txt") {
        this.fileRequests++;
        if (this.file !== null) return void res.writeHead(200, { "content-type": "text/plain" }).end(this.file);
      }
      res.writeHead(404).end("not found");
    });
    await new Promise<void>((r) => this.server!.listen(0, address, r));
    this.port = (this.server.address() as AddressInfo).port;
    this.host = `${isIP(address) === 6 ? `[${address}]` : address}:${this.port}`;
  }

  async stop(): Promise<void> {
    const s = this.server;
    if (!s) return;
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
}

/**
 * Sets the project's player to answer oEmbed for `host` (with `settings`
 * besides, PUT replacing them all) and has `site` list the project's key, as a
 * publisher would; resolves with the PUT's answer once the host is verified.
 * The system must allow the site's address in FETCH_ALLOW_PRIVATE.
 */
export async function claimVerifiedHost(call: ReturnType<typeof api>, site: OwnerSite, host = site.host, settings: Record<string, unknown> = {}) {
  site.file = `# article-audio\n${(await call("GET", "/api/player")).body.publicKey}\n`;
  const put = await call("PUT", "/api/player", { ...settings, oembed: { enabled: true, hosts: [host] } });
  expect(put.status, put.text).to.equal(200);
  // A check slower than the save's answer budget (a busy machine) ends in the background.
  const state = await waitFor(`oEmbed host ${host} checked`, async () => {
    const s = (await call("GET", "/api/player")).body.oembedHosts?.find((h: { host: string }) => h.host === host);
    return s && s.status !== "pending" ? (s as { status: string; reason: string | null }) : undefined;
  }, 30_000, 100);
  expect(state, `oEmbed host ${host}`).to.include({ status: "verified" });
  return put;
}

export interface OembedTarget {
  url: string;
  /** Full tokens of the owner (project alpha) and the squatter (project beta). */
  ownerToken: string;
  squatterToken: string;
  site: OwnerSite;
}

export function oembedVerificationScenarios(target: () => OembedTarget): void {
  let owner: ReturnType<typeof api>;
  let squatter: ReturnType<typeof api>;
  let anon: ReturnType<typeof api>;
  let site: OwnerSite;
  let page: string;
  let ownerKey: string;
  let squatterKey: string;
  let ownerArticle: string;

  const oembed = (u = page) => anon("GET", `/oembed?url=${encodeURIComponent(u)}&format=json`);
  const stateOf = (r: { body: { oembedHosts?: Array<{ host: string }> } }, host = site.host) => r.body.oembedHosts?.find((h) => h.host === host) as
    | { host: string; status: string; reason: string | null; checkedAt: string | null; verifiedAt: string | null; verificationUrl: string }
    | undefined;

  before(async () => {
    const t = target();
    site = t.site;
    owner = api(t.url, t.ownerToken);
    squatter = api(t.url, t.squatterToken);
    anon = api(t.url);
    page = `http://${site.host}/news/harbour`;
    ownerKey = (await owner("GET", "/api/player")).body.publicKey;
    squatterKey = (await squatter("GET", "/api/player")).body.publicKey;
    // Both projects have an article for the page, so whichever project answered would show.
    const mine = await owner("POST", "/api/articles", { title: "Harbour reopens", text: "The harbour reopened on Monday. Ferries run every hour.", url: page });
    const theirs = await squatter("POST", "/api/articles", { title: "Squatted harbour", text: "Not the owner's story. It is short.", url: page });
    expect([mine.status, theirs.status]).to.deep.equal([200, 200]);
    ownerArticle = mine.body.id;
    for (const [call, id] of [[owner, mine.body.id], [squatter, theirs.body.id]] as const) {
      await waitFor(`article ${id} ready`, async () => ((await call("GET", `/api/articles/${id}`)).body?.article?.status === "ready" ? true : undefined), 150_000, 250);
    }
  });

  it("a squatter's unverified claim (oEmbed off or on) neither blocks the owner nor answers oEmbed", async () => {
    const off = await squatter("PUT", "/api/player", { oembed: { enabled: false, hosts: [site.host] } });
    expect(off.status, off.text).to.equal(200);
    const mine = await owner("PUT", "/api/player", { oembed: { enabled: true, hosts: [site.host] } });
    expect(mine.status, mine.text).to.equal(200);

    expect(stateOf(off)).to.include({ status: "failed" });
    expect(stateOf(off)!.reason).to.match(/404/);
    expect(stateOf(off)!.checkedAt).to.be.a("string");
    expect(stateOf(mine)).to.include({ status: "failed", verificationUrl: `https://${site.host}/.well-known/article-audio.txt` });

    expect((await squatter("PUT", "/api/player", { oembed: { enabled: true, hosts: [site.host] } })).status).to.equal(200);
    expect((await oembed()).status).to.equal(404);
    const got = await squatter("GET", "/api/player");
    expect(stateOf(got)).to.include({ status: "failed" });
  });

  it("verifies the owner once its site lists the key, and then answers oEmbed with the owner's player", async () => {
    const asked = Date.now();
    site.file = `# article-audio\n${ownerKey}\n`;
    const r = await owner("POST", "/api/player/verify");
    expect(r.status, r.text).to.equal(200);
    const s = stateOf(r)!;
    expect(s).to.include({ status: "verified", reason: null });
    // Verified once the site listed the key (the stamp may be rounded to the second), not at some earlier check.
    expect(Date.parse(s.verifiedAt!)).to.be.within(asked - 1_000, Date.now() + 1_000);

    const o = await oembed();
    expect(o.status, o.text).to.equal(200);
    expect(o.body).to.include({ version: "1.0", type: "rich", title: "Harbour reopens" });
    const src = /src="([^"]+)"/.exec(o.body.html)![1].replace(/&amp;/g, "&");
    expect(src).to.include(`/player/v1/embed/${ownerKey}/`).and.not.include(squatterKey);
    const embed = await fetch(src);
    expect(embed.status).to.equal(200);
    expect(await embed.text()).to.include("<article-audio-player").and.include(`article-id="${ownerArticle}"`);
  });

  it("does not let a second project take a verified host, even when the site lists its key too", async () => {
    site.file = `${ownerKey}\n${squatterKey}\n`;
    const r = await squatter("POST", "/api/player/verify");
    expect(r.status, r.text).to.equal(200);
    expect(stateOf(r)).to.include({ status: "failed", reason: "verified by another project" });
    const o = await oembed();
    expect(o.status).to.equal(200);
    expect(o.body.html).to.include(ownerKey);
  });

  it("treats host:443 and host:80 as the host, and other ports as hosts of their own", async () => {
    const r = await squatter("PUT", "/api/player", { oembed: { enabled: true, hosts: ["news.example:443", "news.example", "news.example:80", "news.example:8443", site.host] } });
    expect(r.status, r.text).to.equal(200);
    expect(r.body.settings.oembed.hosts).to.deep.equal(["news.example", "news.example:8443", site.host]);
    expect(r.body.oembedHosts.map((h: { host: string }) => h.host)).to.deep.equal(["news.example", "news.example:8443", site.host]);
    // The squatter's claim on the owner's host changed nothing.
    const o = await oembed();
    expect(o.status).to.equal(200);
    expect(o.body.html).to.include(ownerKey);
    const bad = await squatter("PUT", "/api/player", { oembed: { hosts: ["news.example:70000"] } });
    expect(bad.status).to.equal(400);
    expect(bad.body.message).to.match(/oembed\.hosts\[0\]/);
  });

  it("drops the verification at a periodic re-check once the file is gone, and stops answering", async () => {
    const before = site.fileRequests;
    site.file = null;
    const dropped = await waitFor("verification dropped", async () => {
      const r = await owner("GET", "/api/player");
      return stateOf(r)?.status === "failed" ? stateOf(r) : undefined;
    }, 60_000, 250);
    expect(site.fileRequests).to.be.greaterThan(before);
    expect(dropped.reason).to.match(/404/);
    expect((await oembed()).status).to.equal(404);

    // Publishing the file again and asking brings it back.
    site.file = ownerKey;
    expect(stateOf(await owner("POST", "/api/player/verify"))).to.include({ status: "verified" });
    expect((await oembed()).status).to.equal(200);
  });

  it("frees the host when the owner removes its claim, so another project can verify it", async () => {
    expect((await owner("PUT", "/api/player", { oembed: { enabled: true, hosts: [] } })).status).to.equal(200);
    site.file = squatterKey;
    const r = await squatter("POST", "/api/player/verify");
    expect(stateOf(r)).to.include({ status: "verified" });
    const o = await oembed();
    expect(o.status).to.equal(200);
    expect(o.body.html).to.include(squatterKey);
  });
}
