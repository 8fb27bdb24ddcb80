// Issue 35, point 3: the order of lists, on every ArticleStore driver. Newest first by the
// publication date when an article has one, else by its creation; among equal dates the later
// created first; never by the id string. Run by article-order.test.ts on SQLite and MongoDB.
import { expect } from "chai";
import type { ArticleStore, ListFilter } from "../../services/articles/store/port.js";
import { draft, type StoreFixture } from "./article-store.contract.js";

const SECOND = 1_700_000_000;
const at = (sec: number) => new Date(sec * 1000);
const iso = (sec: number) => new Date(sec * 1000).toISOString();

export function articleOrderContract(name: string, open: () => Promise<StoreFixture>): void {
  describe(`ArticleStore list order: ${name}`, function () {
    let fx: StoreFixture;
    let store: ArticleStore;
    let P: string;

    beforeEach(async function () {
      fx = await open();
      store = fx.store;
      P = `order-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
    });
    afterEach(async () => {
      await fx?.dispose();
    });

    const ids = async (filter?: ListFilter, limit = 100) => (await store.list(P, limit, 0, filter)).items.map((a) => a.id);
    /** Every page of `size`, joined: the same order as one page, nothing twice, nothing left out. */
    async function paged(size: number, filter?: ListFilter): Promise<string[]> {
      const out: string[] = [];
      for (let offset = 0; ; offset += size) {
        const page = await store.list(P, size, offset, filter);
        out.push(...page.items.map((a) => a.id));
        if (page.items.length < size) return out;
      }
    }

    it("lists articles created within one second newest first in creation order, not by id string, with and without filters", async () => {
      // Ids whose string order differs from the creation order ("item-10" < "item-9").
      const made: string[] = [];
      for (let i = 0; i < 30; i++) {
        const a = await store.insert(draft(P, { id: `item-${i}-${P}`, labels: i % 3 === 0 ? ["third"] : [] }), at(SECOND));
        made.push(a.id);
        if (i % 2 === 0) {
          await store.claim(a.id, 1, at(SECOND));
          await store.complete(a.id, 1, { audio: { key: `${a.id}/1/full.mp3`, duration: 1 } }, at(SECOND));
        }
      }
      const newest = [...made].reverse();
      expect(await ids()).to.deep.equal(newest);
      expect(await paged(10)).to.deep.equal(newest);
      expect(await ids({ status: "ready" })).to.deep.equal(newest.filter((_, i) => (29 - i) % 2 === 0));
      expect(await ids({ status: "waiting" })).to.deep.equal(newest.filter((_, i) => (29 - i) % 2 === 1));
      expect(await ids({ label: "third" })).to.deep.equal(newest.filter((_, i) => (29 - i) % 3 === 0));
      expect(await ids({ status: "ready", label: "third" })).to.deep.equal(newest.filter((_, i) => (29 - i) % 6 === 0));
      const ready = await store.listReady(P, { limit: 100, offset: 0 });
      expect(ready.items.map((a) => a.id)).to.deep.equal(newest.filter((_, i) => (29 - i) % 2 === 0));
      const readyThird = await store.listReady(P, { label: "third", limit: 100, offset: 0 });
      expect(readyThird.items.map((a) => a.id)).to.deep.equal(newest.filter((_, i) => (29 - i) % 6 === 0));
    });

    it("lists by the publication date where there is one, else by the creation, and keeps it on the article", async () => {
      // Created in this order, one minute apart; published dates put two of them elsewhere in time.
      const old = await store.insert(draft(P, { id: `published-long-ago-${P}`, published: iso(SECOND - 86_400) }), at(SECOND + 60));
      const plain = await store.insert(draft(P, { id: `no-date-${P}` }), at(SECOND + 120));
      const future = await store.insert(draft(P, { id: `published-later-${P}`, published: iso(SECOND + 3_600) }), at(SECOND + 180));
      const between = await store.insert(draft(P, { id: `published-between-${P}`, published: iso(SECOND + 90) }), at(SECOND + 240));
      expect(await ids()).to.deep.equal([future.id, plain.id, between.id, old.id]);
      expect((await store.get(P, old.id))?.published).to.equal(iso(SECOND - 86_400));
      expect((await store.get(P, plain.id))?.published).to.equal(undefined);
      // The listed items carry it too.
      expect((await store.list(P, 10, 0)).items.find((a) => a.id === between.id)?.published).to.equal(iso(SECOND + 90));
    });

    it("breaks ties of one publication date by creation order, the latest created first", async () => {
      const made: string[] = [];
      for (let i = 0; i < 12; i++) made.push((await store.insert(draft(P, { id: `same-date-${i}-${P}`, published: iso(SECOND) }), at(SECOND + i))).id);
      // Created later, but published earlier: after all of them.
      const earlier = await store.insert(draft(P, { id: `earlier-${P}`, published: iso(SECOND - 1) }), at(SECOND + 100));
      expect(await ids()).to.deep.equal([...[...made].reverse(), earlier.id]);
      expect(await paged(10)).to.deep.equal([...[...made].reverse(), earlier.id]);
    });

    it("moves an article when an update sets or removes its publication date", async () => {
      const a = await store.insert(draft(P, { id: `a-${P}` }), at(SECOND));
      const b = await store.insert(draft(P, { id: `b-${P}` }), at(SECOND + 10));
      const c = await store.insert(draft(P, { id: `c-${P}` }), at(SECOND + 20));
      expect(await ids()).to.deep.equal([c.id, b.id, a.id]);
      // a published after c was created: first.
      let out = await store.update(P, a.id, 1, { published: iso(SECOND + 30) });
      expect(out.ok).to.equal(true);
      expect(await ids()).to.deep.equal([a.id, c.id, b.id]);
      // c published before everything: last.
      await store.update(P, c.id, 1, { published: iso(SECOND - 30) });
      expect(await ids()).to.deep.equal([a.id, b.id, c.id]);
      // An update without the field keeps it.
      await store.update(P, c.id, 2, { title: "new title" });
      expect((await store.get(P, c.id))?.published).to.equal(iso(SECOND - 30));
      expect(await ids()).to.deep.equal([a.id, b.id, c.id]);
      // Removed: back to its creation.
      out = await store.update(P, a.id, 2, { published: null });
      expect(out.ok && out.article.published).to.equal(undefined);
      expect(await ids()).to.deep.equal([b.id, a.id, c.id]);
    });

    it("keeps the creation order that the caller's sequence gives, whatever order the writes land in", async () => {
      // A batch's creates take their sequence when they arrive (the service does), then are stored in any order.
      const { nextSeq } = await import("../../services/articles/store/order.js");
      const seqs = Array.from({ length: 8 }, () => nextSeq());
      const order = [5, 2, 7, 0, 3, 6, 1, 4];
      await Promise.all(order.map((i) => store.insert(draft(P, { id: `line-${i}-${P}`, seq: seqs[i] }))));
      expect(await ids()).to.deep.equal([7, 6, 5, 4, 3, 2, 1, 0].map((i) => `line-${i}-${P}`));
    });
  });
}
