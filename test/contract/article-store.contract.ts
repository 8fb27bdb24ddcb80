// The behaviour every ArticleStore adapter must show. Run by
// article-store.test.ts against SQLite and MongoDB.
import { expect } from "chai";
import {
  DuplicateExternalIdError,
  DuplicateIdError,
  PENDING_STATUSES,
  type ArticleStatus,
  type ArticleStore,
  type NewArticle,
} from "../../services/articles/store/port.js";

export interface StoreFixture {
  store: ArticleStore;
  /** Drops everything the fixture created. */
  dispose(): Promise<void>;
}

let seq = 0;
const uniq = (p: string) => `${p}-${Date.now().toString(36)}-${(seq++).toString(36)}`;

export function draft(projectId: string, over: Partial<NewArticle> = {}): NewArticle {
  return {
    id: uniq("art"),
    projectId,
    title: "A title",
    text: "Some text.",
    isRaw: false,
    parse: false,
    voice: "alloy",
    lang: "en-US",
    labels: [],
    ...over,
  };
}

const at = (sec: number) => new Date(sec * 1000);

export function articleStoreContract(name: string, open: () => Promise<StoreFixture>): void {
  describe(`ArticleStore contract: ${name}`, function () {
    let fx: StoreFixture;
    let store: ArticleStore;
    let P: string;
    let Q: string;

    beforeEach(async function () {
      fx = await open();
      store = fx.store;
      P = uniq("proj");
      Q = uniq("other");
    });
    afterEach(async () => {
      await fx?.dispose();
    });

    it("inserts with revision 1, status waiting and reads back by id, externalId and url within the project", async () => {
      const d = draft(P, { externalId: uniq("ext"), url: "https://example.com/a", prompt: "calm", labels: ["x", "y"] });
      const a = await store.insert(d, at(1_700_000_000));
      expect(a).to.include({ id: d.id, projectId: P, status: "waiting", revision: 1, added: 1_700_000_000, updated: null, prompt: "calm" });
      expect(a.labels).to.deep.equal(["x", "y"]);
      expect(a.errors).to.deep.equal([]);
      expect(await store.get(P, d.id)).to.deep.include({ id: d.id, title: "A title", externalId: d.externalId, url: d.url });
      expect((await store.getByExternalId(P, d.externalId!))?.id).to.equal(d.id);
      expect((await store.getByUrl(P, d.url!))?.id).to.equal(d.id);
    });

    it("lists a project's ready articles for listeners, newest first, by label, never another project's or a deleted one", async () => {
      const ready = async (projectId: string, added: number, labels: string[] = []) => {
        const a = await store.insert(draft(projectId, { labels }), at(added));
        await store.claim(a.id, 1);
        expect(await store.complete(a.id, 1, { audio: { key: `${a.id}/1/full.mp3`, duration: 3 } })).to.include({ status: "ready" });
        return a.id;
      };
      const older = await ready(P, 1_700_000_000, ["sport"]);
      const newer = await ready(P, 1_700_000_100, ["news"]);
      const gone = await ready(P, 1_700_000_200, ["news"]);
      await store.markDeleted(P, gone);
      await store.insert(draft(P), at(1_700_000_300)); // waiting: not for listeners
      await ready(Q, 1_700_000_400);
      const all = await store.listReady(P, { limit: 10, offset: 0 });
      expect(all.count).to.equal(2);
      expect(all.items.map((a) => a.id)).to.deep.equal([newer, older]);
      expect((await store.listReady(P, { label: "sport", limit: 10, offset: 0 })).items.map((a) => a.id)).to.deep.equal([older]);
      expect((await store.listReady(P, { limit: 1, offset: 1 })).items.map((a) => a.id)).to.deep.equal([older]);
    });

    it("hides another project's article from every read", async () => {
      const d = draft(P, { externalId: uniq("ext"), url: "https://example.com/hidden" });
      await store.insert(d);
      expect(await store.get(Q, d.id)).to.equal(null);
      expect(await store.getByExternalId(Q, d.externalId!)).to.equal(null);
      expect(await store.getByUrl(Q, d.url!)).to.equal(null);
      expect((await store.list(Q, 10, 0)).count).to.equal(0);
      expect(await store.markDeleted(Q, d.id)).to.equal(null);
      expect((await store.update(Q, d.id, 1, { title: "x" })).ok).to.equal(false);
      expect((await store.get(P, d.id))?.status).to.equal("waiting");
    });

    it("leaves optional fields absent when not given", async () => {
      const a = await store.insert(draft(P));
      for (const k of ["externalId", "prompt", "url", "audio", "audioPreview", "error"]) expect(a).not.to.have.property(k);
      const again = await store.get(P, a.id);
      for (const k of ["externalId", "prompt", "url", "audio", "audioPreview", "error"]) expect(again).not.to.have.property(k);
    });

    it("refuses a duplicate externalId across projects, but articles without one never collide", async () => {
      const ext = uniq("ext");
      await store.insert(draft(P, { externalId: ext }));
      let err: unknown;
      try {
        await store.insert(draft(Q, { externalId: ext }));
      } catch (e) {
        err = e;
      }
      expect(err).to.be.instanceOf(DuplicateExternalIdError);
      expect((err as DuplicateExternalIdError).externalId).to.equal(ext);
      await store.insert(draft(P));
      await store.insert(draft(P));
      expect((await store.list(P, 10, 0)).count).to.equal(3);
    });

    it("reports an id clash as DuplicateIdError", async () => {
      const d = draft(P);
      await store.insert(d);
      let err: unknown;
      try {
        await store.insert(draft(P, { id: d.id }));
      } catch (e) {
        err = e;
      }
      expect(err).to.be.instanceOf(DuplicateIdError);
    });

    it("lets exactly one of 12 concurrent inserts with the same externalId win", async () => {
      const ext = uniq("race");
      const results = await Promise.allSettled(Array.from({ length: 12 }, (_, i) => store.insert(draft(i % 2 ? P : Q, { externalId: ext }))));
      const won = results.filter((r) => r.status === "fulfilled");
      const lost = results.filter((r): r is PromiseRejectedResult => r.status === "rejected");
      expect(won).to.have.length(1);
      expect(lost).to.have.length(11);
      for (const l of lost) expect(l.reason).to.be.instanceOf(DuplicateExternalIdError);
    });

    it("takes 20 concurrent inserts each on its own: a used externalId and a used id fail, the others are stored", async () => {
      const usedExt = uniq("used-ext");
      const usedId = await store.insert(draft(P, { externalId: usedExt }));
      const drafts = Array.from({ length: 20 }, (_, i) =>
        i === 5 ? draft(Q, { externalId: usedExt }) : i === 9 ? draft(P, { id: usedId.id }) : draft(i % 2 ? P : Q, { externalId: uniq(`many-${i}`) }),
      );
      const results = await Promise.allSettled(drafts.map((d) => store.insert(d)));
      results.forEach((r, i) => {
        if (i === 5) expect(r.status === "rejected" && r.reason).to.be.instanceOf(DuplicateExternalIdError);
        else if (i === 9) expect(r.status === "rejected" && r.reason).to.be.instanceOf(DuplicateIdError);
        else expect(r.status, `insert ${i}: ${r.status === "rejected" ? String(r.reason) : ""}`).to.equal("fulfilled");
      });
      for (const [i, d] of drafts.entries()) {
        if (i === 5 || i === 9) continue;
        expect((await store.get(d.projectId, d.id))?.externalId).to.equal(d.externalId);
      }
      expect((await store.get(P, usedId.id))?.externalId).to.equal(usedExt);
    });

    it("records 10 admission decisions that arrive together each on its own: a deleted and an edited article are left alone", async () => {
      const arts = await Promise.all(Array.from({ length: 10 }, () => store.insert(draft(P, { admission: "pending" }))));
      await store.markDeleted(P, arts[2].id);
      expect((await store.update(P, arts[5].id, 1, { title: "Edited meanwhile", admission: "pending" })).ok).to.equal(true);
      const decided = await Promise.all(arts.map((a) => store.finishAdmission(a.id, 1, { status: "waiting", types: [], reservedChars: 100, keepPending: false })));
      for (const [i, done] of decided.entries()) {
        if (i === 2 || i === 5) {
          expect(done, `article ${i}`).to.equal(null);
          continue;
        }
        expect(done, `article ${i}`).to.include({ id: arts[i].id, revision: 1, status: "waiting", reservedChars: 100 });
        expect(done).not.to.have.property("admission");
        expect(done).not.to.have.property("admissionRun");
      }
      const edited = await store.get(P, arts[5].id);
      expect(edited).to.include({ revision: 2, admission: "pending" });
      expect(edited).not.to.have.property("reservedChars");
      expect(await store.get(P, arts[2].id)).to.include({ status: "deleted", admission: "pending" });
      const stored = await store.get(P, arts[0].id);
      expect(stored).to.include({ reservedChars: 100 });
      expect(stored).not.to.have.property("admissionRun");
    });

    it("lists newest first (added desc, then id desc), counts all non-deleted, pages with limit/offset", async () => {
      const ids: string[] = [];
      for (let i = 0; i < 7; i++) {
        // Two articles share each second, so the id breaks the tie.
        const a = await store.insert(draft(P, { id: `a${i}-${uniq("x")}` }), at(1_700_000_000 + Math.floor(i / 2)));
        ids.push(a.id);
      }
      await store.insert(draft(Q));
      await store.markDeleted(P, ids[6]);
      const expected = ids
        .slice(0, 6)
        .map((id, i) => ({ id, added: Math.floor(i / 2) }))
        .sort((x, y) => y.added - x.added || (x.id < y.id ? 1 : -1))
        .map((x) => x.id);
      const p1 = await store.list(P, 4, 0);
      const p2 = await store.list(P, 4, 4);
      expect(p1.count).to.equal(6);
      expect(p2.count).to.equal(6);
      expect([...p1.items, ...p2.items].map((a) => a.id)).to.deep.equal(expected);
      expect(p2.items).to.have.length(2);
      expect((await store.list(P, 4, 10)).items).to.deep.equal([]);
    });

    it("filters the list by status, by label and by both: exact counts, newest first, paged, through status changes, label edits and deletions", async () => {
      const made = [];
      for (let i = 0; i < 14; i++) {
        const labels = [["news"], ["news", "sport"], ["sport", "sport"], []][i % 4];
        made.push(await store.insert(draft(P, { id: `f${String(i).padStart(2, "0")}-${uniq("x")}`, labels }), at(1_700_000_000 + Math.floor(i / 3))));
      }
      // Another project with the same labels and statuses: never counted nor listed in P.
      for (const labels of [["news"], ["sport"]]) {
        const q = await store.insert(draft(Q, { labels }));
        await store.claim(q.id, 1);
        await store.complete(q.id, 1, { audio: { key: "k", duration: 1 } });
      }

      /** Pages of 3 through a filter must give exactly the live articles of P that match, in list order, with their total. */
      const expectFiltered = async (filter: { status?: ArticleStatus; label?: string }) => {
        const all = (await store.list(P, 100, 0)).items;
        const want = all.filter((a) => (filter.status === undefined || a.status === filter.status) && (filter.label === undefined || a.labels.includes(filter.label))).map((a) => a.id);
        const got: string[] = [];
        for (let offset = 0; offset <= want.length; offset += 3) {
          const page = await store.list(P, 3, offset, filter);
          expect(page.count, JSON.stringify(filter)).to.equal(want.length);
          got.push(...page.items.map((a) => a.id));
        }
        expect(got, JSON.stringify(filter)).to.deep.equal(want);
        return want.length;
      };
      const every = async () => {
        const totals: Record<string, number> = {};
        for (const status of [undefined, "waiting", "processing", "ready", "errored", "retry"] as const) {
          for (const label of [undefined, "news", "sport", "none"]) totals[`${status}/${label}`] = await expectFiltered({ status, label });
        }
        return totals;
      };

      expect(await every()).to.include({ "undefined/news": 8, "undefined/sport": 7, "waiting/undefined": 14, "waiting/sport": 7, "ready/undefined": 0, "undefined/none": 0 });
      for (const a of made.slice(0, 5)) {
        await store.claim(a.id, 1);
        await store.complete(a.id, 1, { audio: { key: "k", duration: 1 } });
      }
      await store.claim(made[5].id, 1);
      await store.fail(made[6].id, 1, "boom");
      await store.reportStatus(made[7].id, 1, "retry");
      // Labels replaced (and the article back to waiting), a ready one deleted, a waiting one deleted.
      expect((await store.update(P, made[1].id, 1, { labels: ["sport"] })).ok).to.equal(true);
      await store.markDeleted(P, made[0].id);
      await store.markDeleted(P, made[13].id);
      const t = await every();
      expect(t).to.include({ "ready/undefined": 3, "ready/news": 1, "ready/sport": 1, "processing/undefined": 1, "errored/sport": 1, "retry/undefined": 1, "undefined/undefined": 12 });
      expect(t["waiting/sport"]).to.equal(3);
      // Deleted articles are never listed, whatever the filter.
      expect(await store.list(P, 10, 0, { status: "deleted" })).to.deep.equal({ count: 0, items: [] });
      expect((await store.list(Q, 10, 0, { label: "news" })).count).to.equal(1);
    });

    it("updates only at the expected revision: bumps revision, resets status, drops audio and errors, keeps absent fields", async () => {
      const a = await store.insert(draft(P, { prompt: "p", url: "https://example.com/u", labels: ["a"] }));
      await store.claim(a.id, 1);
      await store.fail(a.id, 1, "boom");
      const r = await store.update(P, a.id, 1, { title: "New", labels: ["b", "c"], prompt: null });
      expect(r.ok).to.equal(true);
      const u = r.ok ? r.article : undefined;
      expect(u).to.include({ title: "New", revision: 2, status: "waiting", text: "Some text.", url: "https://example.com/u" });
      expect(u?.labels).to.deep.equal(["b", "c"]);
      expect(u).not.to.have.property("prompt");
      expect(u).not.to.have.property("error");
      expect(u?.errors).to.deep.equal([]);
      expect(await store.update(P, a.id, 1, { title: "Old" })).to.deep.equal({ ok: false, reason: "revision_changed" });
      expect(await store.update(P, "nope", 1, { title: "x" })).to.deep.equal({ ok: false, reason: "not_found" });
      expect((await store.get(P, a.id))?.title).to.equal("New");
    });

    it("lets an update take a new unique externalId, and refuses one in use", async () => {
      const taken = uniq("taken");
      await store.insert(draft(Q, { externalId: taken }));
      const a = await store.insert(draft(P, { externalId: uniq("mine") }));
      let err: unknown;
      try {
        await store.update(P, a.id, 1, { externalId: taken });
      } catch (e) {
        err = e;
      }
      expect(err).to.be.instanceOf(DuplicateExternalIdError);
      expect((await store.get(P, a.id))?.revision).to.equal(1);
      const fresh = uniq("fresh");
      expect((await store.update(P, a.id, 1, { externalId: fresh })).ok).to.equal(true);
      expect((await store.getByExternalId(P, fresh))?.id).to.equal(a.id);
    });

    it("marks deleted idempotently; deleted stays readable, unlisted, not updatable, and keeps its externalId reserved", async () => {
      const ext = uniq("ext");
      const a = await store.insert(draft(P, { externalId: ext, url: "https://example.com/d" }));
      expect((await store.markDeleted(P, a.id))?.status).to.equal("deleted");
      expect((await store.markDeleted(P, a.id))?.status).to.equal("deleted");
      expect((await store.get(P, a.id))?.status).to.equal("deleted");
      expect((await store.getByExternalId(P, ext))?.status).to.equal("deleted");
      expect((await store.getByUrl(P, "https://example.com/d"))?.status).to.equal("deleted");
      expect(await store.list(P, 10, 0)).to.deep.equal({ count: 0, items: [] });
      expect(await store.update(P, a.id, 1, { title: "x" })).to.deep.equal({ ok: false, reason: "deleted" });
      let err: unknown;
      try {
        await store.insert(draft(P, { externalId: ext }));
      } catch (e) {
        err = e;
      }
      expect(err).to.be.instanceOf(DuplicateExternalIdError);
    });

    it("counts articles per status, every status present, for the metrics", async () => {
      const before = await store.countByStatus!();
      const a = await store.insert(draft(P));
      await store.insert(draft(P));
      await store.insert(draft(Q));
      await store.markDeleted(P, a.id);
      const after = await store.countByStatus!();
      expect(Object.keys(after)).to.include.members(["waiting", "deleted", "ready", "no_money"]);
      expect(after.waiting - before.waiting).to.equal(2);
      expect(after.deleted - before.deleted).to.equal(1);
      expect(after.ready - before.ready).to.equal(0);
    });

    it("prefers a live article over a deleted one sharing the url", async () => {
      const url = "https://example.com/shared";
      const old = await store.insert(draft(P, { url }), at(1_700_000_000));
      const live = await store.insert(draft(P, { url }), at(1_600_000_000));
      await store.markDeleted(P, old.id);
      expect((await store.getByUrl(P, url))?.id).to.equal(live.id);
    });

    it("finds an article stored under its normalised URL by the Unicode form, the percent-encoded form and a differently-cased host", async () => {
      // What the articles service stores for "https://Bücher.example/news/über-uns?q=ü" (lib/urls.ts).
      const stored = "https://xn--bcher-kva.example/news/%C3%BCber-uns?q=%C3%BC";
      const a = await store.insert(draft(P, { url: stored }), at(1_700_000_000));
      for (const spelling of [
        stored,
        "https://bücher.example/news/über-uns?q=ü",
        "HTTPS://BÜCHER.EXAMPLE/news/über-uns?q=ü",
        "https://xn--bcher-kva.example/news/%c3%bcber-uns?q=%c3%bc",
        "https://XN--BCHER-KVA.example:443/news/%C3%BCber-uns?q=%C3%BC",
      ]) {
        expect((await store.getByUrl(P, spelling))?.id, spelling).to.equal(a.id);
      }
      expect(await store.getByUrl(P, "https://bücher.example/news/uber-uns?q=ü")).to.equal(null);
      expect(await store.getByUrl(Q, "https://bücher.example/news/über-uns?q=ü")).to.equal(null);
    });

    it("still finds an article an older release stored under a URL that is not normal, by that URL as stored", async () => {
      const legacy = await store.insert(draft(P, { url: "HTTPS://Example.com/Legacy" }), at(1_700_000_000));
      expect((await store.getByUrl(P, "HTTPS://Example.com/Legacy"))?.id).to.equal(legacy.id);
      // Already normal when stored: every spelling finds it.
      const normal = await store.insert(draft(P, { url: "https://example.com/plain" }), at(1_700_000_000));
      expect((await store.getByUrl(P, "HTTPS://EXAMPLE.COM/plain"))?.id).to.equal(normal.id);
    });

    it("claims only the current revision of a live, unfinished article", async () => {
      const a = await store.insert(draft(P));
      expect(await store.claim(a.id, 2)).to.equal(null);
      const c = await store.claim(a.id, 1);
      expect(c?.status).to.equal("processing");
      expect(c?.text).to.equal("Some text.");
      expect(await store.complete(a.id, 1, { audio: { key: "k/1/full.mp3", duration: 3 } })).to.include({ status: "ready" });
      expect(await store.claim(a.id, 1)).to.equal(null);
      const b = await store.insert(draft(P));
      await store.markDeleted(P, b.id);
      expect(await store.claim(b.id, 1)).to.equal(null);
      expect(await store.claim("missing", 1)).to.equal(null);
    });

    it("completes only the current revision and never a deleted article", async () => {
      const a = await store.insert(draft(P));
      await store.update(P, a.id, 1, { text: "v2" });
      expect(await store.complete(a.id, 1, { audio: { key: "old", duration: 1 }, preview: { key: "oldp", duration: 0.5 } })).to.equal(null);
      expect((await store.get(P, a.id))?.status).to.equal("waiting");
      const now = at(1_800_000_000);
      expect(await store.complete(a.id, 2, { audio: { key: "a/2/full.mp3", duration: 12.5 }, preview: { key: "a/2/preview.mp3", duration: 4 } }, now)).to.include({ status: "ready" });
      const r = await store.get(P, a.id);
      expect(r).to.deep.include({ status: "ready", updated: 1_800_000_000, audio: { key: "a/2/full.mp3", duration: 12.5 }, audioPreview: { key: "a/2/preview.mp3", duration: 4 } });
      await store.markDeleted(P, a.id);
      expect(await store.complete(a.id, 2, { audio: { key: "late", duration: 1 } })).to.equal(null);
      expect(await store.fail(a.id, 2, "late")).to.equal(null);
      expect(await store.reportStatus(a.id, 2, "retry", "late")).to.equal(null);
      expect((await store.get(P, a.id))?.status).to.equal("deleted");
    });

    it("keeps the transcript with the audio, and drops it with a new revision, a recrawl's revision, a delete and a re-render without one", async () => {
      const a = await store.insert(draft(P));
      expect(await store.complete(a.id, 1, { audio: { key: "k/1/full.mp3", duration: 3 }, transcript: { chapters: true } })).to.deep.include({ transcript: { chapters: true } });
      expect((await store.get(P, a.id))?.transcript).to.deep.equal({ chapters: true });
      expect((await store.listReady(P, { limit: 10, offset: 0 })).items[0]?.transcript).to.deep.equal({ chapters: true });
      // Not another project's.
      expect(await store.get(Q, a.id)).to.equal(null);

      // Queued again: the new revision has none until its own render stores one.
      const updated = await store.update(P, a.id, 1, { text: "v2" });
      expect(updated.ok && updated.article.transcript).to.equal(undefined);
      expect(await store.complete(a.id, 2, { audio: { key: "k/2/full.mp3", duration: 3 }, transcript: { chapters: false } })).to.deep.include({ transcript: { chapters: false } });
      // The revision rendered again by a worker that records none (an older release during a rollout): none is claimed.
      expect((await store.complete(a.id, 2, { audio: { key: "k/2/full.mp3", duration: 3 } }))?.transcript).to.equal(undefined);
      await store.complete(a.id, 2, { audio: { key: "k/2/full.mp3", duration: 3 }, transcript: { chapters: false } });

      expect(await store.startRecrawl(a.id, 2, "ready")).to.not.equal(null);
      expect((await store.recrawled(a.id, 2, "crawled text"))?.transcript).to.equal(undefined);
      await store.complete(a.id, 3, { audio: { key: "k/3/full.mp3", duration: 3 }, transcript: { chapters: true } });

      expect((await store.markDeleted(P, a.id))?.transcript).to.equal(undefined);
      expect((await store.get(P, a.id))?.transcript).to.equal(undefined);
    });

    it("records retries and failures in the error history", async () => {
      const a = await store.insert(draft(P));
      const t1 = new Date("2030-01-01T00:00:00.000Z");
      const t2 = new Date("2030-01-01T00:01:00.000Z");
      expect(await store.reportStatus(a.id, 1, "retry", "provider 500", t1)).to.include({ status: "retry" });
      expect((await store.get(P, a.id))?.status).to.equal("retry");
      expect(await store.reportStatus(a.id, 1, "fallback", undefined, t1)).to.include({ status: "fallback" });
      expect(await store.reportStatus(a.id, 5, "retry", "stale")).to.equal(null);
      expect(await store.fail(a.id, 1, "all providers failed", t2)).to.include({ status: "errored" });
      const r = await store.get(P, a.id);
      expect(r).to.include({ status: "errored", error: "all providers failed", updated: unixSec(t2) });
      expect(r?.errors).to.deep.equal([
        { error: "provider 500", date: "2030-01-01T00:00:00.000Z" },
        { error: "all providers failed", date: "2030-01-01T00:01:00.000Z" },
      ]);
    });

    it("finds stale pending articles older than a cut-off, paged by id", async () => {
      const old = new Date(Date.now() - 60 * 60_000);
      const a = await store.insert(draft(P, { id: `s1-${uniq("s")}` }), old);
      const b = await store.insert(draft(P, { id: `s2-${uniq("s")}` }), old);
      const c = await store.insert(draft(P, { id: `s3-${uniq("s")}` }), old);
      await store.claim(b.id, 1, old);
      await store.complete(c.id, 1, { audio: { key: "k", duration: 1 } }, old);
      await store.insert(draft(P)); // fresh: not stale yet
      const cutoff = Date.now() - 60_000;
      const mine = (xs: { id: string }[]) => xs.filter((x) => [a.id, b.id, c.id].includes(x.id)).map((x) => x.id);
      const all = await store.findStale(PENDING_STATUSES, cutoff, { limit: 1000 });
      expect(mine(all)).to.deep.equal([a.id, b.id].sort());
      expect(all.find((x) => x.id === a.id)).to.deep.equal({ id: a.id, projectId: P, revision: 1, key: old.getTime() });
      const first = await store.findStale(PENDING_STATUSES, cutoff, { limit: 1 });
      expect(first).to.have.length(1);
      const rest = await store.findStale(PENDING_STATUSES, cutoff, { after: { id: first[0].id, key: first[0].key! }, limit: 1000 });
      expect(rest.map((x) => x.id)).not.to.include(first[0].id);
      expect(await store.findStale(["waiting"], old.getTime() - 1)).to.deep.equal([]);
    });

    it("a revision still in hand moves its due time on, and nothing a publisher sees", async () => {
      const old = new Date(Date.now() - 60 * 60_000);
      const a = await store.insert(draft(P), old);
      const cutoff = Date.now() - 60_000;
      const stale = async () => (await store.findStale(PENDING_STATUSES, cutoff, { limit: 1000 })).map((x) => x.id);
      // Waiting (not in hand): nothing to keep.
      expect(await store.keepDue(a.id, 1)).to.equal(null);
      const claimed = await store.claim(a.id, 1, old);
      expect(await stale()).to.include(a.id);
      expect(await store.keepDue(a.id, 2)).to.equal(null);
      const kept = await store.keepDue(a.id, 1);
      expect(kept).to.include({ status: "processing", revision: 1, updated: claimed!.updated });
      expect(await stale()).not.to.include(a.id);
      await store.complete(a.id, 1, { audio: { key: "k", duration: 1 } });
      expect(await store.keepDue(a.id, 1)).to.equal(null);
    });

    it("audio on demand: a parked article is never stale nor claimable for admission, until one conditional unpark", async () => {
      const old = new Date(Date.now() - 60 * 60_000);
      const a = await store.insert(draft(P, { admission: "pending", parked: true }), old);
      expect(a).to.include({ status: "waiting", parked: true });
      const stale = await store.findStale(PENDING_STATUSES, Date.now() + 1, { limit: 1000 });
      expect(stale.map((x) => x.id)).not.to.include(a.id);
      expect(await store.claimAdmission(a.id, 1, 60_000)).to.equal(null);
      expect(await store.unpark(Q, a.id, Date.now() + 60_000)).to.equal(null);

      // Concurrent askers: exactly one unparks.
      const now = new Date();
      const tries = await Promise.all([1, 2, 3].map(() => store.unpark(P, a.id, now.getTime() + 60_000, now)));
      const won = tries.filter((t) => t !== null);
      expect(won).to.have.length(1);
      expect(won[0]).to.include({ status: "waiting", admission: "pending", demandedAt: now.getTime(), admittingUntil: now.getTime() + 60_000 });
      expect(won[0]!.parked).to.equal(undefined);
      // Unparked it is ordinary pending work (asked for: its job goes first): once its lease lapses the reconciler admits it.
      const after = await store.findStale(PENDING_STATUSES, Date.now() + 1, { limit: 1000 });
      // Due from the unpark on (its key is the due time the reconciler pages by).
      expect(after.find((x) => x.id === a.id)).to.deep.equal({ id: a.id, projectId: P, revision: 1, pendingAdmission: true, demanded: true, key: now.getTime() });
    });

    it("audio on demand: an update makes a parked article an immediate one", async () => {
      const a = await store.insert(draft(P, { admission: "pending", parked: true }));
      const u = await store.update(P, a.id, 1, { title: "New", admission: "pending" });
      expect(u.ok && u.article.parked).to.equal(undefined);
      expect((await store.findStale(PENDING_STATUSES, Date.now() + 1, { limit: 1000 })).map((x) => x.id)).to.include(a.id);
    });

    it("create from a URL: stored recrawling and due, filled once as parsed and pending admission in the same revision", async () => {
      const old = new Date(Date.now() - 60 * 60_000);
      const a = await store.insert(draft(P, { title: "https://example.com/p", text: "", url: "https://example.com/p", pageFetch: "pending", pageKeeps: ["voice"] }), old);
      expect(a).to.include({ status: "recrawling", revision: 1, pageFetch: "pending" });
      expect(await store.claimAdmission(a.id, 1, 60_000)).to.equal(null);
      // Due, so a fetch lost with its process is done again; never as audio work.
      const due = await store.findStale([...PENDING_STATUSES, "recrawling"], Date.now(), { limit: 1000 });
      expect(due.find((x) => x.id === a.id)).to.deep.equal({ id: a.id, projectId: P, revision: 1, pendingFetch: true, key: old.getTime() });
      expect((await store.findStale(PENDING_STATUSES, Date.now(), { limit: 1000 })).map((x) => x.id)).not.to.include(a.id);

      const fill = { title: "Harbour reopens", text: "The harbour reopened.", url: "https://example.com/news/harbour", voice: "alloy", lang: "de-DE" };
      const [one, two] = await Promise.all([store.pageFetched(a.id, 1, fill), store.pageFetched(a.id, 1, fill)]);
      const filled = one ?? two;
      expect([one, two].filter((x) => x !== null)).to.have.length(1);
      expect(filled).to.include({ status: "parsed", revision: 1, admission: "pending", ...fill });
      expect(filled!.pageFetch).to.equal(undefined);
      expect(filled!.pageKeeps).to.equal(undefined);
      expect((await store.getByUrl(P, "https://example.com/news/harbour"))?.id).to.equal(a.id);
      // Found by the page's words, as any article by its own.
      expect((await store.list(P, 10, 0, { words: ["harbour", "reopened"] })).items.map((x) => x.id)).to.deep.equal([a.id]);
      expect(await store.pageFetchFailed(a.id, 1, "too late")).to.equal(null);
      expect(await store.claimAdmission(a.id, 1, 60_000)).to.include({ id: a.id, status: "parsed" });
    });

    it("create from a URL: a page that cannot be read ends errored with the words; an update or delete meanwhile wins", async () => {
      const a = await store.insert(draft(P, { text: "", url: "https://example.com/gone", pageFetch: "pending" }));
      const failed = await store.pageFetchFailed(a.id, 1, "the page answered 404 Not Found");
      expect(failed).to.include({ status: "errored", error: "the page answered 404 Not Found" });
      expect(failed!.errors.map((e) => e.error)).to.deep.equal(["the page answered 404 Not Found"]);
      expect(failed!.pageFetch).to.equal(undefined);
      expect((await store.findStale([...PENDING_STATUSES, "recrawling"], Date.now() + 1, { limit: 1000 })).map((x) => x.id)).not.to.include(a.id);

      const b = await store.insert(draft(P, { text: "", url: "https://example.com/b", pageFetch: "pending" }));
      const u = await store.update(P, b.id, 1, { title: "Own", text: "Own text.", admission: "pending" });
      expect(u.ok && u.article).to.include({ status: "waiting", revision: 2 });
      expect(u.ok && u.article.pageFetch).to.equal(undefined);
      expect(await store.pageFetched(b.id, 1, { title: "Page", text: "Page text.", voice: "alloy", lang: "en-US" })).to.equal(null);

      const c = await store.insert(draft(P, { text: "", url: "https://example.com/c", pageFetch: "pending" }));
      await store.markDeleted(P, c.id);
      expect(await store.pageFetchFailed(c.id, 1, "x")).to.equal(null);
      expect((await store.get(P, c.id))?.status).to.equal("deleted");
    });

    it("create from a URL on an on-demand project: parsed and parked, not due, and not unparked while its page is read", async () => {
      const a = await store.insert(draft(P, { text: "", url: "https://example.com/od", pageFetch: "pending", parked: true }));
      expect(await store.unpark(P, a.id, Date.now() + 60_000)).to.equal(null);
      const filled = await store.pageFetched(a.id, 1, { title: "T", text: "Body.", voice: "alloy", lang: "en-US" });
      expect(filled).to.include({ status: "parsed", parked: true });
      expect(filled!.admission).to.equal(undefined);
      expect((await store.findStale([...PENDING_STATUSES, "recrawling"], Date.now() + 1, { limit: 1000 })).map((x) => x.id)).not.to.include(a.id);
      expect(await store.unpark(P, a.id, Date.now() + 60_000)).to.include({ status: "waiting", admission: "pending" });
    });

    it("keeps a preview reported during processing, only on the current revision", async () => {
      const a = await store.insert(draft(P));
      expect(await store.reportPreview(a.id, 1, { key: "p.mp3", duration: 30 })).to.equal(null);
      await store.claim(a.id, 1);
      expect(await store.reportPreview(a.id, 2, { key: "p.mp3", duration: 30 })).to.equal(null);
      const p = await store.reportPreview(a.id, 1, { key: "p.mp3", duration: 30 });
      expect(p).to.include({ status: "processing" });
      expect(p!.audioPreview).to.deep.equal({ key: "p.mp3", duration: 30 });
      const done = await store.complete(a.id, 1, { audio: { key: "f.mp3", duration: 90 }, preview: { key: "p.mp3", duration: 30 } });
      expect(done).to.include({ status: "ready" });
    });
  });
}

const unixSec = (d: Date) => Math.floor(d.getTime() / 1000);
