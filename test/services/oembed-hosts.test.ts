// oEmbed host verification inside the auth service: the grace period of a
// verified host whose file went away (on a clock the test moves), how claims
// are normalised, and that the oEmbed lookup matches a page on the host's
// default port. The HTTP side runs against a real loopback server.
import { expect } from "chai";
import { mkdtemp, rm } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { logger } from "../../lib/log.js";
import { allowPrivateFrom } from "../../lib/net/allow-list.js";
import { createOembedVerifier } from "../../services/auth/oembed-hosts.js";
import { createPlayerServiceImpl } from "../../services/auth/player.js";
import { completePlayerSettings, PlayerSettingsError } from "../../services/auth/player-settings.js";
import type { AuthStore } from "../../services/auth/store/port.js";
import { openEmbeddedAuthStore } from "../../services/auth/store/open.js";
import { waitFor } from "../support/http.js";
import { OwnerSite } from "../listener/oembed-verify-scenarios.js";

const HOUR = 3_600_000;
const KEY = "pk_ownerKey0123456789abcd";

describe("oEmbed host verification (auth service)", function () {
  this.timeout(60_000);
  let dir: string;
  let store: AuthStore;
  const site = new OwnerSite();
  const log = logger("oembed-hosts-test");

  before(() => site.start());
  after(() => site.stop());
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "oembed-hosts-"));
    store = await openEmbeddedAuthStore(dir);
    await store.createProject({ id: "alpha", name: "Alpha" });
    await store.swapPublicKey("alpha", null, KEY);
  });
  afterEach(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("keeps a verified host through failed re-checks within the grace, and drops it after", async () => {
    let clock = Date.UTC(2026, 10, 1);
    const verifier = createOembedVerifier({ store, log, keyOf: async () => KEY, recheckMs: 24 * HOUR, graceMs: 72 * HOUR, fetch: { allowPrivate: allowPrivateFrom("127.0.0.1") }, now: () => clock });
    const r = (await store.getPlayer("alpha"))!;
    const hosts = [site.host];
    const state = async () => (await verifier.claims("alpha", hosts))[0];

    expect(await state()).to.include({ status: "pending", checkedAt: null });
    site.file = `${KEY}\n`;
    await verifier.checkNow(r, hosts);
    expect(await state()).to.include({ status: "verified", reason: null });
    expect((await state()).nextCheckMs).to.equal(clock + 24 * HOUR);

    site.file = null;
    clock += 24 * HOUR;
    await verifier.checkNow(r, hosts);
    const failing = await state();
    expect(failing).to.include({ status: "verified" });
    expect(failing.reason).to.match(/answered 404/);
    expect(failing.failingSince?.getTime()).to.equal(clock);
    // Retried sooner than the regular interval while failing.
    expect(failing.nextCheckMs).to.equal(clock + HOUR);
    expect((await store.findVerifiedOembedClaim(site.host))?.projectId).to.equal("alpha");

    clock += 71 * HOUR;
    await verifier.checkNow(r, hosts);
    expect(await state()).to.include({ status: "verified" });

    clock += 2 * HOUR;
    await verifier.checkNow(r, hosts);
    expect(await state()).to.include({ status: "failed" });
    expect(await store.findVerifiedOembedClaim(site.host)).to.equal(null);

    site.file = `some other line\n  ${KEY}  \n`;
    await verifier.checkNow(r, hosts);
    expect(await state()).to.include({ status: "verified", reason: null, failingSince: null });
  });

  it("does not accept a file that only contains the key inside a longer word, nor reach a private host the operator did not allow", async () => {
    const verifier = createOembedVerifier({ store, log, keyOf: async () => KEY, fetch: { allowPrivate: allowPrivateFrom("127.0.0.1") } });
    const r = (await store.getPlayer("alpha"))!;
    site.file = `${KEY}x\n`;
    await verifier.checkNow(r, [site.host]);
    expect((await verifier.claims("alpha", [site.host]))[0]).to.include({ status: "failed" });
    expect((await verifier.claims("alpha", [site.host]))[0].reason).to.match(/does not list/);

    const strict = createOembedVerifier({ store, log, keyOf: async () => KEY });
    site.file = KEY;
    await strict.checkNow(r, [site.host]);
    const c = (await strict.claims("alpha", [site.host]))[0];
    expect(c.status).to.equal("failed");
    expect(c.reason).to.match(/loopback/).and.not.match(/http:\/\//);
  });

  it("does not follow the file to another host, not even another port of the same address", async () => {
    const elsewhere = new OwnerSite();
    await elsewhere.start();
    elsewhere.file = KEY;
    const redirecting = http.createServer((_req, res) => res.writeHead(302, { location: `http://${elsewhere.host}/.well-known/article-audio.txt` }).end());
    await new Promise<void>((r) => redirecting.listen(0, "127.0.0.1", r));
    const host = `127.0.0.1:${(redirecting.address() as AddressInfo).port}`;
    try {
      const verifier = createOembedVerifier({ store, log, keyOf: async () => KEY, fetch: { allowPrivate: allowPrivateFrom("127.0.0.1") } });
      await verifier.checkNow((await store.getPlayer("alpha"))!, [host]);
      const c = (await verifier.claims("alpha", [host]))[0];
      expect(c.status).to.equal("failed");
      expect(c.reason).to.include(`redirected to another host (${elsewhere.host})`);
      expect(elsewhere.fileRequests).to.equal(1);
    } finally {
      redirecting.closeAllConnections();
      await new Promise((r) => redirecting.close(r));
      await elsewhere.stop();
    }
  });

  it("bounds the checks a publisher can ask for: a full list of hosts at once, then about one a second", async () => {
    let clock = Date.UTC(2026, 10, 1);
    const requests: string[] = [];
    // Every name resolves to loopback, where nothing listens on 443: each check is one quick refused connection.
    const fetch = { allowPrivate: (_h: string, _a: string, port: number) => port === 443, resolve: async (host: string) => (requests.push(host), [{ address: "127.0.0.1", family: 4 }]) };
    const verifier = createOembedVerifier({ store, log, keyOf: async () => KEY, fetch, now: () => clock });
    const r = (await store.getPlayer("alpha"))!;
    const hosts = Array.from({ length: 20 }, (_, i) => `h${i}.example`);
    for (let round = 0; round < 3; round++) expect(await verifier.checkNow(r, hosts)).to.deep.equal({ refusedMs: 0 });
    expect(requests).to.have.length(60);
    const refused = await verifier.checkNow(r, hosts);
    expect(refused.refusedMs).to.be.within(1000, 2000);
    expect(requests).to.have.length(60);
    clock += 5_000;
    await verifier.checkNow(r, hosts);
    expect(requests).to.have.length(65);
    const c = (await verifier.claims("alpha", hosts))[0];
    expect(c.status).to.equal("failed");
    expect(c.reason).to.match(/connection refused/);
  });

  it("on start, takes over hosts claimed before verification existed and verifies them on schedule", async () => {
    // Settings as an older version stored them: hosts listed, no claim records.
    await store.savePlayerSettings("alpha", { oembed: { enabled: true, hosts: [site.host] } });
    site.file = KEY;
    const impl = createPlayerServiceImpl({ store, log, oembed: { recheckMs: 2000, fetch: { allowPrivate: allowPrivateFrom("127.0.0.1") } } });
    try {
      const claim = await waitFor("claim verified by the scheduler", async () => {
        const [c] = await store.listOembedClaims("alpha");
        return c?.status === "verified" ? c : undefined;
      }, 20_000, 100);
      expect(claim.host).to.equal(site.host);
      const found = (await impl.findOembedProject!({ host: site.host } as never, {} as never)) as { player?: { projectId: string } };
      expect(found.player?.projectId).to.equal("alpha");
    } finally {
      impl.close();
    }
  });

  it("normalises claimed hosts: :443 and :80 are the bare host, other ports stay, duplicates go", () => {
    const s = completePlayerSettings({ oembed: { hosts: ["news.example:443", "news.example", "news.example:80", "news.example:8443", "www.news.example"] } });
    expect(s.oembed.hosts).to.deep.equal(["news.example", "news.example:8443", "www.news.example"]);
    expect(() => completePlayerSettings({ oembed: { hosts: ["a.example", "news.example:0"] } })).to.throw(PlayerSettingsError, /oembed\.hosts\[1\]: port/);
  });

  it("answers oEmbed for a page on the verified host's default port, and not on another port", async () => {
    await store.savePlayerSettings("alpha", completePlayerSettings({ oembed: { enabled: true, hosts: ["news.example"] } }) as unknown as Record<string, unknown>);
    await store.addOembedClaim("alpha", "news.example", Date.now() + 24 * HOUR);
    const [claim] = await store.listOembedClaims("alpha");
    expect(await store.saveOembedCheck({ ...claim, status: "verified", checkedAt: new Date(), verifiedAt: new Date() })).to.equal("saved");
    const impl = createPlayerServiceImpl({ store, log });
    try {
      const find = (host: string) => impl.findOembedProject!({ host } as never, {} as never) as Promise<{ player?: { projectId: string } }>;
      expect((await find("news.example"))?.player?.projectId).to.equal("alpha");
      expect((await find("news.example:443"))?.player?.projectId).to.equal("alpha");
      expect((await find("news.example:8443"))?.player).to.equal(undefined);
      expect((await find("other.example"))?.player).to.equal(undefined);
    } finally {
      impl.close();
    }
  });
});
