// Behaviour every AuthStore adapter must show. Each test gets storage of its
// own; `open` may be called again on it to simulate a restart.
import { expect } from "chai";
import { DuplicateTokenError, type AuthStore, type OembedClaim } from "../../services/auth/store/port.js";
import { hashToken, newPlainToken, tokenRecord } from "../../services/auth/tokens.js";

export interface AuthStoreStorage {
  open(): Promise<AuthStore>;
  dispose(): Promise<void>;
}

export function authStoreContract(makeStorage: () => Promise<AuthStoreStorage>): void {
  let storage: AuthStoreStorage;
  let store: AuthStore;
  const at = (s: number) => new Date(Date.UTC(2024, 0, 1, 0, 0, s));

  beforeEach(async () => {
    storage = await makeStorage();
    store = await storage.open();
  });
  afterEach(async () => {
    await store?.close();
    await storage?.dispose();
  });

  describe("projects", () => {
    it("creates a project once and keeps the first one on repeated creation", async () => {
      const first = await store.createProject({ id: "acme", name: "Acme News", created: at(1) });
      expect(first.created).to.equal(true);
      expect(first.project).to.deep.equal({ id: "acme", name: "Acme News", created: at(1) });

      const again = await store.createProject({ id: "acme", name: "Other name", created: at(5) });
      expect(again.created).to.equal(false);
      expect(again.project).to.deep.equal({ id: "acme", name: "Acme News", created: at(1) });
      expect(await store.countProjects()).to.equal(1);
    });

    it("gets, lists oldest first and counts", async () => {
      expect(await store.getProject("nope")).to.equal(null);
      expect(await store.countProjects()).to.equal(0);
      await store.createProject({ id: "b", name: "B", created: at(2) });
      await store.createProject({ id: "a", name: "A", created: at(3) });
      await store.createProject({ id: "c", name: "C", created: at(1) });
      expect((await store.listProjects()).map((p) => p.id)).to.deep.equal(["c", "b", "a"]);
      expect(await store.getProject("a")).to.deep.equal({ id: "a", name: "A", created: at(3) });
      expect(await store.countProjects()).to.equal(3);
    });

    it("agrees on one project when created concurrently", async () => {
      const results = await Promise.all([1, 2, 3, 4].map((n) => store.createProject({ id: "race", name: `n${n}` })));
      expect(results.filter((r) => r.created)).to.have.length(1);
      const names = new Set(results.map((r) => r.project.name));
      expect(names.size).to.equal(1);
    });
  });

  describe("tokens", () => {
    it("finds an active token by hash and lists it under its project", async () => {
      await store.createProject({ id: "acme", name: "Acme" });
      const plain = newPlainToken();
      const rec = tokenRecord(plain, "acme", "full", at(1));
      await store.insertToken(rec);
      expect(await store.findActiveTokenByHash(hashToken(plain))).to.deep.equal(rec);
      expect(await store.findTokenByHash(hashToken(plain))).to.deep.equal(rec);
      expect(await store.findActiveTokenByHash(hashToken(plain + "x"))).to.equal(null);
      expect(await store.listTokens("acme")).to.deep.equal([rec]);
      expect(await store.listTokens("other")).to.deep.equal([]);
    });

    it("rejects a second token with the same hash", async () => {
      const plain = newPlainToken();
      await store.insertToken(tokenRecord(plain, "acme", "full"));
      let err: unknown;
      try {
        await store.insertToken(tokenRecord(plain, "other", "read"));
      } catch (e) {
        err = e;
      }
      expect(err).to.be.instanceOf(DuplicateTokenError);
      expect((await store.findTokenByHash(hashToken(plain)))?.projectId).to.equal("acme");
    });

    it("lists a project's tokens oldest first", async () => {
      const later = tokenRecord(newPlainToken(), "acme", "read", at(9));
      const earlier = tokenRecord(newPlainToken(), "acme", "full", at(2));
      await store.insertToken(later);
      await store.insertToken(earlier);
      await store.insertToken(tokenRecord(newPlainToken(), "other", "full", at(1)));
      expect((await store.listTokens("acme")).map((t) => t.id)).to.deep.equal([earlier.id, later.id]);
    });

    it("revokes: the token stops being active, stays listed, and the first revocation time sticks", async () => {
      const plain = newPlainToken();
      const rec = tokenRecord(plain, "acme", "read");
      await store.insertToken(rec);
      const revoked = await store.revokeToken(rec.id, at(7));
      expect(revoked?.revoked).to.deep.equal(at(7));
      expect(await store.findActiveTokenByHash(rec.hash)).to.equal(null);
      expect((await store.findTokenByHash(rec.hash))?.revoked).to.deep.equal(at(7));
      expect((await store.revokeToken(rec.id, at(8)))?.revoked).to.deep.equal(at(7));
      expect((await store.listTokens("acme"))[0].revoked).to.deep.equal(at(7));
      expect(await store.revokeToken("tok_unknown")).to.equal(null);
    });
  });

  it("keeps projects, tokens, revocations and uniqueness after a restart", async () => {
    await store.createProject({ id: "acme", name: "Acme", created: at(1) });
    const a = tokenRecord(newPlainToken(), "acme", "full", at(2));
    const plainB = newPlainToken();
    const b = tokenRecord(plainB, "acme", "read", at(3));
    await store.insertToken(a);
    await store.insertToken(b);
    await store.revokeToken(a.id, at(4));
    await store.close();

    store = await storage.open();
    expect(await store.listProjects()).to.deep.equal([{ id: "acme", name: "Acme", created: at(1) }]);
    expect(await store.findActiveTokenByHash(a.hash)).to.equal(null);
    expect(await store.findActiveTokenByHash(b.hash)).to.deep.equal(b);
    expect((await store.listTokens("acme")).map((t) => [t.id, t.revoked])).to.deep.equal([
      [a.id, at(4)],
      [b.id, null],
    ]);
    let err: unknown;
    try {
      await store.insertToken(tokenRecord(plainB, "acme", "full"));
    } catch (e) {
      err = e;
    }
    expect(err).to.be.instanceOf(DuplicateTokenError);
  });

  describe("player keys and settings", () => {
    it("sets a first key once: a second first-setter loses and reads the winner's key", async () => {
      await store.createProject({ id: "acme", name: "Acme", created: at(1) });
      expect((await store.getPlayer("acme"))?.publicKey).to.equal(null);
      expect(await store.swapPublicKey("acme", null, "pk_first")).to.equal(true);
      expect(await store.swapPublicKey("acme", null, "pk_second")).to.equal(false);
      expect((await store.getPlayer("acme"))?.publicKey).to.equal("pk_first");
      expect(await store.getPlayer("nope")).to.equal(null);
    });

    it("rotates only from the current key, and the old key no longer finds the project", async () => {
      await store.createProject({ id: "acme", name: "Acme", created: at(1) });
      await store.swapPublicKey("acme", null, "pk_one");
      expect(await store.swapPublicKey("acme", "pk_stale", "pk_two")).to.equal(false);
      expect(await store.swapPublicKey("acme", "pk_one", "pk_two")).to.equal(true);
      expect(await store.findPlayerByPublicKey("pk_one")).to.equal(null);
      expect((await store.findPlayerByPublicKey("pk_two"))?.project.id).to.equal("acme");
    });

    it("never gives two projects the same key", async () => {
      await store.createProject({ id: "a", name: "A", created: at(1) });
      await store.createProject({ id: "b", name: "B", created: at(2) });
      await store.swapPublicKey("a", null, "pk_same");
      let refused = false;
      try {
        refused = !(await store.swapPublicKey("b", null, "pk_same"));
      } catch {
        refused = true;
      }
      expect(refused).to.equal(true);
      expect((await store.findPlayerByPublicKey("pk_same"))?.project.id).to.equal("a");
    });

    it("stores player settings", async () => {
      await store.createProject({ id: "a", name: "A", created: at(1) });
      const saved = await store.savePlayerSettings("a", { oembed: { enabled: true, hosts: ["news.example", "www.news.example"] } });
      expect(saved?.settings).to.deep.equal({ oembed: { enabled: true, hosts: ["news.example", "www.news.example"] } });
      expect((await store.getPlayer("a"))?.settings).to.deep.equal(saved?.settings);
      expect(await store.savePlayerSettings("nope", {})).to.equal(null);
    });
  });

  describe("oEmbed host claims", () => {
    const claim = (projectId: string, host: string, over: Partial<OembedClaim> = {}): OembedClaim => ({
      projectId, host, status: "pending", reason: null, checkedAt: null, verifiedAt: null, failingSince: null, nextCheckMs: 0, ...over,
    });
    const verified = (projectId: string, host: string) => claim(projectId, host, { status: "verified", checkedAt: at(5), verifiedAt: at(5), nextCheckMs: 1000 });

    it("keeps unverified claims of several projects on one host side by side, and finds none verified", async () => {
      await store.addOembedClaim("a", "news.example", 10);
      await store.addOembedClaim("b", "news.example", 20);
      await store.addOembedClaim("a", "news.example", 99);
      expect(await store.listOembedClaims("a")).to.deep.equal([claim("a", "news.example", { nextCheckMs: 10 })]);
      expect((await store.listOembedClaims("b")).map((c) => c.host)).to.deep.equal(["news.example"]);
      expect(await store.findVerifiedOembedClaim("news.example")).to.equal(null);
    });

    it("lets one project at most hold a host's verification, until it is dropped or the claim removed", async () => {
      await store.addOembedClaim("a", "news.example", 0);
      await store.addOembedClaim("b", "news.example", 0);
      expect(await store.saveOembedCheck(verified("a", "news.example"))).to.equal("saved");
      expect(await store.saveOembedCheck(verified("b", "news.example"))).to.equal("taken");
      expect((await store.listOembedClaims("b"))[0].status).to.equal("pending");
      expect((await store.findVerifiedOembedClaim("news.example"))?.projectId).to.equal("a");
      // A re-check that keeps it verified is no clash with itself.
      expect(await store.saveOembedCheck({ ...verified("a", "news.example"), checkedAt: at(9) })).to.equal("saved");

      expect(await store.saveOembedCheck(claim("a", "news.example", { status: "failed", reason: "gone", checkedAt: at(10) }))).to.equal("saved");
      expect(await store.findVerifiedOembedClaim("news.example")).to.equal(null);
      expect(await store.saveOembedCheck(verified("b", "news.example"))).to.equal("saved");
      expect((await store.findVerifiedOembedClaim("news.example"))?.projectId).to.equal("b");

      await store.removeOembedClaims("b", []);
      expect(await store.listOembedClaims("b")).to.deep.equal([]);
      expect(await store.findVerifiedOembedClaim("news.example")).to.equal(null);
      expect(await store.saveOembedCheck(verified("b", "news.example"))).to.equal("gone");
      expect(await store.saveOembedCheck(verified("a", "news.example"))).to.equal("saved");
    });

    it("gives a host's verification to exactly one of many projects verifying at once", async () => {
      const ids = Array.from({ length: 12 }, (_, i) => `p${i}`);
      for (const id of ids) await store.addOembedClaim(id, "race.example", 0);
      const outcomes = await Promise.all(ids.map((id) => store.saveOembedCheck(verified(id, "race.example"))));
      expect(outcomes.filter((o) => o === "saved")).to.have.length(1);
      expect(outcomes.filter((o) => o === "taken")).to.have.length(ids.length - 1);
      const winner = ids[outcomes.indexOf("saved")];
      expect((await store.findVerifiedOembedClaim("race.example"))?.projectId).to.equal(winner);
    });

    it("hands a due claim to one leaser only, and lists due claims most overdue first", async () => {
      await store.addOembedClaim("a", "one.example", 300);
      await store.addOembedClaim("a", "two.example", 100);
      await store.addOembedClaim("a", "later.example", 5000);
      expect((await store.dueOembedClaims(1000, 10)).map((c) => c.host)).to.deep.equal(["two.example", "one.example"]);
      const leases = await Promise.all([1, 2, 3].map(() => store.leaseOembedCheck("a", "two.example", 100, 9000)));
      expect(leases.filter(Boolean)).to.have.length(1);
      expect((await store.dueOembedClaims(1000, 10)).map((c) => c.host)).to.deep.equal(["one.example"]);
    });

    it("removes the claims the project no longer lists, and keeps them across a restart", async () => {
      await store.addOembedClaim("a", "keep.example", 0);
      await store.addOembedClaim("a", "drop.example", 0);
      await store.saveOembedCheck(verified("a", "keep.example"));
      await store.removeOembedClaims("a", ["keep.example"]);
      await store.close();
      store = await storage.open();
      expect(await store.listOembedClaims("a")).to.deep.equal([verified("a", "keep.example")]);
      expect((await store.findVerifiedOembedClaim("keep.example"))?.projectId).to.equal("a");
    });
  });
}
