// oEmbed host verification inside the auth service: the grace period of a
// verified host whose file went away (on a clock the test moves), how claims
// are normalised, and that the oEmbed lookup matches a page on the host's
// default port. The HTTP side runs against a real loopback server.
import { expect } from "chai";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { logger } from "../../lib/log.js";
import { allowPrivateFrom } from "../../lib/net/allow-list.js";
import { createOembedVerifier } from "../../services/auth/oembed-hosts.js";
import { createPlayerServiceImpl } from "../../services/auth/player.js";
import { completePlayerSettings, PlayerSettingsError } from "../../services/auth/player-settings.js";
import type { AuthStore } from "../../services/auth/store/port.js";
import { openNedbAuthStore } from "../../services/auth/store/open.js";
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
    store = await openNedbAuthStore(dir);
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
