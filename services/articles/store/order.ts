// The order of lists and feeds (issue 35): newest first by publication date when an article has
// one, else by its creation, and among equal dates by creation order. Two stored keys carry it,
// so one index walk in either driver serves every list (layout.ts):
//
// - `sortAt`: epoch ms of `published`, else of the creation;
// - `seq`: the creation sequence, a number that grows with every create of a process and tracks
//   the clock in microseconds (epoch ms × 1000, plus one per create when several fall into the
//   same millisecond), so creates of separate processes interleave by time, and the creates of
//   one import, made in the file's order, keep that order (the newest-first list shows its last
//   line first) however many fall into one second.
//
// Articles written by releases before these keys get them once, in the background after the
// first start (order-upgrade.ts), from `added` (seconds): the ones created within one second then
// tie, and keep the order they were stored in.

import type { DerivedFill } from "../../../lib/store/collection.js";

/** Creates per millisecond the sequence can tell apart before it runs ahead of the clock. */
export const SEQ_PER_MS = 1000;

let last = 0;

/** The next creation sequence number of this process: above the previous one and at least the clock's. */
export function nextSeq(nowMs = Date.now()): number {
  last = Math.max(last + 1, Math.floor(nowMs) * SEQ_PER_MS);
  return last;
}

/**
 * Epoch ms of an article's creation: the sequence's millisecond, within the second `added` (unix
 * seconds) names. The sequence runs ahead of the clock only when more than SEQ_PER_MS creates fall
 * into one millisecond, or when a create is stamped with a time other than now (tests): the
 * creation second still holds.
 */
export function createdMs(added: number, seq: number): number {
  return Math.min(Math.max(Math.floor(seq / SEQ_PER_MS), added * 1000), added * 1000 + 999);
}

/** The sequence number of an article stored before sequences, from its creation second. */
export const seqOfAdded = (added: number): number => added * 1000 * SEQ_PER_MS;

/**
 * The keys of an article stored before them, computed in the database from `added` alone:
 * seqOfAdded, and sortAtOf without a publication date (createdMs of that sequence is the second's
 * first millisecond). No release wrote `published` without the keys.
 */
export const ORDER_KEYS_OF_ADDED: DerivedFill = {
  unless: "seq",
  fields: { seq: { from: "added", times: 1000 * SEQ_PER_MS }, sortAt: { from: "added", times: 1000 } },
};

/** The list order's key: the publication date's epoch ms, else the creation's. */
export function sortAtOf(published: string | undefined, added: number, seq: number): number {
  if (published !== undefined) {
    const ms = Date.parse(published);
    if (Number.isFinite(ms)) return ms;
  }
  return createdMs(added, seq);
}

/** The sort of every list: the newest date first, then the latest created. */
export const LIST_SORT = { sortAt: -1, seq: -1 } as const;

/**
 * The order lists answer in while the keys are being given (order-upgrade.ts): the previous
 * release's, by creation second then id, which the indexes it left serve.
 */
export const LEGACY_SORT = { added: -1, _id: -1 } as const;
