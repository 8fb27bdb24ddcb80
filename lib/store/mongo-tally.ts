// Tallies on MongoDB (the port's ensureTally / tally / tallies): counts per
// group kept with every write, so reading one is a single point look-up.
//
// Each document carries `_tally`, the groups it is counted in now (a JSON
// string, so a compare-and-set is a plain equality). The counters are
// documents of the same collection (`_id` "\0tally\0<name>\0<group>"), so a
// document write and the counter updates it causes go to the server as ONE
// bulk write: a client killed after sending cannot leave half of it undone.
//
// Why the compare-and-set: a write learns the document's new groups only from
// the document it returns, and two writers may race. The document's `_tally`
// moves from the groups it was counted in to the groups it is in now only
// through an update conditional on the old value, sent with its counter
// increments. The bulk write is unordered (the stand-in and some look-alikes go
// on past a refused operation even when asked to stop, so no correctness may
// hang on stopping): when the condition failed (the upsert then clashes on
// `_id`), the increments are taken back in a second write and the document is
// read again. A writer stops once one read shows the document's groups and
// `_tally` equal after its own write, or once its claim applied while the
// fields its groups came from were unchanged (TallySpec.fields; without them it
// reads the document again after its claim): so the last writer always leaves
// counters that match the documents.
//
// A document write and its count update are two commands. So that a process
// killed between them (kill -9, a lost node) leaves nothing miscounted, every
// write that touches a field a tally reads also sets `_tallyDirty` to a mark of
// its own (its time first, so marks sort by age), in the same command; a claim
// that moves the counts removes the mark it saw in the same command too. A
// write that left the groups as they were keeps its mark: clearing it on the
// request path would cost every such write a round trip. Marked documents sit
// in a sparse index; `sweep` settles them and clears the marks in bulk, at
// start (every mark) and in the background (marks older than a minute, so a
// writer still at work is left alone), so the index holds only recent writes.
//
// The window left: a process killed between a refused compare-and-set (or a
// refused insert) and the write that takes its increments back leaves those
// counts one too high. That needs a race on one document or a duplicate key at
// that very moment; `recount` repairs it, as it repairs a server that failed in
// the middle of one bulk write.
import { randomBytes } from "node:crypto";
import { MongoBulkWriteError, type AnyBulkWriteOperation, type Collection, type Document, type WriteError } from "mongodb";
import type { TallySpec } from "./collection.js";

const PREFIX = "\u0000tally\u0000";
const counterId = (name: string, group: string) => `${PREFIX}${name}\u0000${group}`;
const builtId = (name: string) => `${PREFIX}${name}`;

/** Filter fragment keeping the counters, markers and ghosts out of the collection's own queries. */
export const NOT_A_COUNTER: Document = { _tallyOf: { $exists: false }, _tallyBuilt: { $exists: false }, _tallyGhost: { $exists: false } };

type Groups = Record<string, string[]>;

export interface MongoTallies {
  readonly active: boolean;
  /** The update with this write's mark when it touches a field a tally reads (see above); else the same update. */
  mark(update: Document): Document;
  /** Settles the marked documents (of writers that died before counting theirs) and clears their marks; only marks older than `olderThanMs` when given. Answers how many. */
  sweep(olderThanMs?: number): Promise<number>;
  ensure(spec: TallySpec): Promise<void>;
  /** Inserts documents (stamped here) with their counts in one command; answers each one's refusal ("id": the id is in use). */
  insertMany(docs: Document[]): Promise<Array<WriteError | "id" | undefined>>;
  /** Brings the counters in line with a document as it was just written (null: nothing to do). */
  settle(doc: Document | null): Promise<void>;
  /** Deletes one document matching `filter` by id with its counts, or answers false when it no longer matches. */
  deleteOne(filter: Document, id: unknown): Promise<boolean>;
  count(name: string, group: string): Promise<number>;
  all(name: string): Promise<Map<string, number>>;
  /** Recomputes the counts of every tally from the documents (repair after a server failure). */
  recount(): Promise<void>;
  /** The document without the hidden field. */
  strip<T extends Document | null>(doc: T): T;
}

/** A filter on the port's string ids (the driver's types expect ObjectIds). */
const byId = (id: unknown, more: Document = {}): Document => ({ ...more, _id: id });

/** This process's marks: unique, so a claim or a clearing removes only the mark it saw. */
const markPrefix = randomBytes(6).toString("base64url");
let marks = 0;

/** Whether a (modifier) update can change `fields`; a replacement document can change anything. */
function touches(update: Document, fields: string[] | undefined): boolean {
  if (!fields) return true;
  const keys = Object.keys(update);
  if (keys.some((k) => !k.startsWith("$"))) return true;
  return keys.some((op) => Object.keys((update[op] as Document | undefined) ?? {}).some((path) => fields.includes(path.split(".")[0])));
}

export function mongoTallies(col: Collection<Document>): MongoTallies {
  const specs = new Map<string, TallySpec>();

  function groupsOf(doc: Document): Groups {
    const out: Groups = {};
    for (const name of [...specs.keys()].sort()) {
      const { _id: _, _tally: _t, ...plain } = doc;
      out[name] = [...new Set(specs.get(name)!.groups({ _id: doc._id, ...plain }))].sort();
    }
    return out;
  }
  /** Every field a registered tally reads, when each one says. */
  function watchedFields(): string[] | undefined {
    const all = [...specs.values()];
    return all.every((t) => t.fields) ? [...new Set(all.flatMap((t) => t.fields!))].sort() : undefined;
  }
  const encode = (g: Groups) => JSON.stringify(g);
  const decode = (s: unknown): Groups => (typeof s === "string" ? (JSON.parse(s) as Groups) : {});

  function incOps(deltas: Map<string, number>): AnyBulkWriteOperation<Document>[] {
    const ops: AnyBulkWriteOperation<Document>[] = [];
    for (const [key, n] of deltas) {
      if (n === 0) continue;
      const [name, group] = JSON.parse(key) as [string, string];
      ops.push({ updateOne: { filter: byId(counterId(name, group)), update: { $inc: { n }, $setOnInsert: { _tallyOf: name, group } }, upsert: true } });
    }
    return ops;
  }

  /** Adds `sign` for every group of `g` of a registered tally. */
  function addDeltas(deltas: Map<string, number>, g: Groups, sign: number) {
    for (const [name, groups] of Object.entries(g)) {
      if (!specs.has(name)) continue;
      for (const group of groups) {
        const key = JSON.stringify([name, group]);
        deltas.set(key, (deltas.get(key) ?? 0) + sign);
      }
    }
  }

  /** Indexes of the operations a bulk write refused; throws what was not a refusal. */
  function refused(e: unknown): Map<number, WriteError> {
    if (!(e instanceof MongoBulkWriteError) || !e.writeErrors) throw e;
    const list = Array.isArray(e.writeErrors) ? e.writeErrors : [e.writeErrors];
    if (list.length === 0) throw e;
    return new Map(list.map((w) => [w.index, w]));
  }
  const negated = (deltas: Map<string, number>) => new Map([...deltas].map(([k, v]) => [k, -v]));
  async function apply(deltas: Map<string, number>) {
    const ops = incOps(deltas);
    if (ops.length) await col.bulkWrite(ops, { ordered: false });
  }

  /**
   * What settling `doc` takes: the counter changes, and the claim that moves its `_tally` only
   * if nobody did first. Undefined when the document is settled already.
   */
  function moveOf(doc: Document, watched: string[] | undefined): { deltas: Map<string, number>; claim: AnyBulkWriteOperation<Document> } | undefined {
    const now = encode(groupsOf(doc));
    if (doc._tally === now) return undefined;
    const deltas = new Map<string, number>();
    addDeltas(deltas, decode(doc._tally), -1);
    addDeltas(deltas, JSON.parse(now) as Groups, +1);
    const absent = { $exists: false };
    // With the fields the groups come from in the condition, a claim applies only to the state it
    // was computed from: a writer that changed them first makes it fail, so no read after is needed.
    const state = Object.fromEntries((watched ?? []).map((f) => [f, doc[f] === undefined ? absent : doc[f]]));
    const filter = byId(doc._id, { ...state, _tally: doc._tally === undefined ? absent : doc._tally, _tallyDirty: doc._tallyDirty === undefined ? absent : doc._tallyDirty });
    // A claim that matches nothing upserts, and so clashes on `_id` (or leaves a ghost if the document is gone).
    return { deltas, claim: { updateOne: { filter, update: { $set: { _tally: now }, $unset: { _tallyDirty: "" }, $setOnInsert: { _tallyGhost: true } }, upsert: true } } };
  }

  /** Clearing a marked document's mark, unless a later write marked it again. */
  function unmarkOp(doc: Document): AnyBulkWriteOperation<Document> {
    return { updateOne: { filter: byId(doc._id, { _tally: doc._tally, _tallyDirty: doc._tallyDirty }), update: { $unset: { _tallyDirty: "" } } } };
  }

  async function settle(doc: Document | null): Promise<void> {
    const watched = watchedFields();
    for (let current = doc; current; current = await col.findOne(byId(current._id))) {
      const move = moveOf(current, watched);
      if (!move) return;
      const { deltas } = move;
      try {
        const r = await col.bulkWrite([move.claim, ...incOps(deltas)], { ordered: false });
        // The document was deleted meanwhile: the upsert made a ghost; take it and its counts back.
        if (r.upsertedCount > 0 && r.upsertedIds[0] !== undefined) {
          await col.bulkWrite([{ deleteOne: { filter: byId(current._id, { _tallyGhost: true }) } }, ...incOps(negated(deltas))], { ordered: false });
          return;
        }
        if (watched) return;
        // Claimed, but a writer that changed the document before the claim may have found it
        // settled and left: read it again, and stop only once a read shows it settled.
      } catch (e) {
        const failed = refused(e);
        if (failed.size !== 1 || failed.get(0)?.code !== 11000) throw e;
        // Another writer moved `_tally` first: the increments went in without it; take them back and look again.
        await apply(negated(deltas));
      }
    }
  }

  /**
   * settle() for many documents with one command (the count of an upgraded collection): the
   * claims and the increments of all of them; a document whose claim lost a race is settled alone.
   */
  async function settleMany(docs: Document[]): Promise<void> {
    const watched = watchedFields();
    if (!watched) {
      for (const d of docs) await settle(d);
      return;
    }
    const moves: Array<{ doc: Document; deltas: Map<string, number> }> = [];
    const claims: AnyBulkWriteOperation<Document>[] = [];
    const total = new Map<string, number>();
    for (const doc of docs) {
      const move = moveOf(doc, watched);
      if (!move) continue;
      for (const [k, v] of move.deltas) total.set(k, (total.get(k) ?? 0) + v);
      claims.push(move.claim);
      moves.push({ doc, deltas: move.deltas });
    }
    if (claims.length === 0) return;
    let failed = new Map<number, WriteError>();
    let upserted: Record<number, unknown>;
    try {
      upserted = (await col.bulkWrite([...claims, ...incOps(total)], { ordered: false })).upsertedIds;
    } catch (e) {
      failed = refused(e);
      if ([...failed].some(([i, w]) => i >= claims.length || w.code !== 11000)) throw e;
      upserted = (e as MongoBulkWriteError).result?.upsertedIds ?? {};
    }
    const back = new Map<string, number>();
    const again: Document[] = [];
    const ghosts: unknown[] = [];
    moves.forEach((m, i) => {
      if (!failed.has(i) && upserted[i] === undefined) return;
      for (const [k, v] of m.deltas) back.set(k, (back.get(k) ?? 0) - v);
      if (failed.has(i)) again.push(m.doc);
      else ghosts.push(m.doc._id);
    });
    if (ghosts.length) await col.deleteMany({ _id: { $in: ghosts as never }, _tallyGhost: true });
    await apply(back);
    for (const d of again) await settle(await col.findOne(byId(d._id)));
  }

  return {
    get active() {
      return specs.size > 0;
    },

    mark(update) {
      if (specs.size === 0 || !touches(update, watchedFields())) return update;
      const mark = `${Date.now()}.${markPrefix}.${++marks}`;
      if (Object.keys(update).some((k) => !k.startsWith("$"))) return { ...update, _tallyDirty: mark };
      return { ...update, $set: { ...((update.$set as Document | undefined) ?? {}), _tallyDirty: mark } };
    },

    async sweep(olderThanMs) {
      // Marks start with their time in ms (13 digits for centuries), so they sort by age.
      const before = olderThanMs === undefined ? undefined : String(Date.now() - olderThanMs);
      let settled = 0;
      let after: string | undefined;
      for (;;) {
        const range: Document = { $exists: true };
        if (after !== undefined) range.$gt = after;
        if (before !== undefined) range.$lt = before;
        const page = await col.find({ _tallyDirty: range }).sort({ _tallyDirty: 1 }).limit(500).toArray();
        const clear: AnyBulkWriteOperation<Document>[] = [];
        for (const d of page) {
          // Settled already (most: the write did not move it between groups): only the mark goes.
          if (!moveOf(d, watchedFields())) clear.push(unmarkOp(d));
          else await settle(d);
        }
        if (clear.length) await col.bulkWrite(clear, { ordered: false });
        settled += page.length;
        if (page.length < 500) return settled;
        after = page[page.length - 1]._tallyDirty as string;
      }
    },

    async ensure(spec) {
      specs.set(spec.name, spec);
      if (await col.findOne(byId(builtId(spec.name)))) return;
      // Once per tally and collection (a new install finds nothing to do); resumable:
      // a document already counted has an equal `_tally` and costs no write.
      let after: unknown;
      for (;;) {
        const filter: Document = { ...NOT_A_COUNTER };
        if (after !== undefined) filter._id = { $gt: after };
        const page = await col.find(filter).sort({ _id: 1 }).limit(500).toArray();
        await settleMany(page);
        if (page.length < 500) break;
        after = page[page.length - 1]._id;
      }
      await col.updateOne(byId(builtId(spec.name)), { $set: { _tallyBuilt: true } }, { upsert: true });
    },

    async insertMany(plain) {
      const docs: Document[] = plain.map((d) => ({ ...d, _tally: encode(groupsOf(d)) }));
      const deltas = new Map<string, number>();
      for (const d of docs) addDeltas(deltas, decode(d._tally), +1);
      const incs = incOps(deltas);
      // Inserts as upserts by id, so the documents and their counts are one command (a bulk write
      // sends inserts and updates as two); a document that matched instead was an id in use.
      const ops = docs.map(({ _id, ...fields }) => ({ updateOne: { filter: byId(_id), update: { $setOnInsert: fields }, upsert: true } }));
      let failed = new Map<number, WriteError>();
      let upserted: Record<number, unknown>;
      try {
        upserted = (await col.bulkWrite([...incs, ...ops], { ordered: false })).upsertedIds;
      } catch (e) {
        failed = refused(e);
        if ([...failed.keys()].some((i) => i < incs.length)) throw e;
        upserted = (e as MongoBulkWriteError).result?.upsertedIds ?? {};
      }
      const outcome = docs.map((_, i): WriteError | "id" | undefined => failed.get(incs.length + i) ?? (upserted[incs.length + i] === undefined ? "id" : undefined));
      // Refused documents were counted with the rest: take their counts back.
      const back = new Map<string, number>();
      outcome.forEach((o, i) => o && addDeltas(back, decode(docs[i]._tally), -1));
      await apply(back);
      return outcome;
    },

    settle,

    async deleteOne(filter, id) {
      for (let current = await col.findOne(byId(id, filter)); current; current = await col.findOne(byId(id, filter))) {
        const deltas = new Map<string, number>();
        addDeltas(deltas, decode(current._tally), -1);
        const gone = byId(id, { _tally: current._tally === undefined ? { $exists: false } : current._tally });
        const r = await col.bulkWrite([{ deleteOne: { filter: { ...filter, ...gone } } }, ...incOps(deltas)], { ordered: false });
        if (r.deletedCount === 1) return true;
        // Not deleted (changed meanwhile), yet the counters moved: put them back, then look again.
        await apply(negated(deltas));
      }
      return false;
    },

    async count(name, group) {
      const d = await col.findOne(byId(counterId(name, group)));
      return (d?.n as number | undefined) ?? 0;
    },

    async all(name) {
      const out = new Map<string, number>();
      for (const d of await col.find({ _tallyOf: name }).toArray()) if ((d.n as number) !== 0) out.set(d.group as string, d.n as number);
      return out;
    },

    async recount() {
      // Counts from scratch, then every counter set to its true value; run while writes are quiet.
      const counts = new Map<string, number>();
      let after: unknown;
      for (;;) {
        const filter: Document = { ...NOT_A_COUNTER };
        if (after !== undefined) filter._id = { $gt: after };
        const page = await col.find(filter).sort({ _id: 1 }).limit(1000).toArray();
        const fixes: AnyBulkWriteOperation<Document>[] = [];
        for (const d of page) {
          const g = groupsOf(d);
          addDeltas(counts, g, +1);
          const now = encode(g);
          if (d._tally !== now) fixes.push({ updateOne: { filter: byId(d._id), update: { $set: { _tally: now } } } });
        }
        if (fixes.length) await col.bulkWrite(fixes, { ordered: false });
        if (page.length < 1000) break;
        after = page[page.length - 1]._id;
      }
      const sets: AnyBulkWriteOperation<Document>[] = [];
      for (const name of specs.keys()) {
        for (const d of await col.find({ _tallyOf: name }).toArray()) {
          if (!counts.has(JSON.stringify([name, d.group]))) sets.push({ updateOne: { filter: byId(d._id), update: { $set: { n: 0 } } } });
        }
      }
      for (const [key, n] of counts) {
        const [name, group] = JSON.parse(key) as [string, string];
        sets.push({ updateOne: { filter: byId(counterId(name, group)), update: { $set: { n, _tallyOf: name, group } }, upsert: true } });
      }
      if (sets.length) await col.bulkWrite(sets, { ordered: false });
    },

    strip(doc) {
      if (doc && "_tally" in doc) delete (doc as Document)._tally;
      if (doc && "_tallyDirty" in doc) delete (doc as Document)._tallyDirty;
      return doc;
    },
  };
}
