// Entries for a Map or Set that holds the objects of requests in flight.
// When a Map or Set outgrows or compacts its table, V8 keeps the old table,
// entries and all, until the next full collection (iterators may still follow
// it). In the old generation such a table counts as a root for every
// scavenge, so a collection churned once per request kept whole requests
// (response, context, headers) alive and had them promoted: 1.5 MB per
// scavenge, scavenges four times longer and a full collection every ~0.3 s
// under load (bench/README.md, round 6). An entry that lets go of its value
// once the request is done leaves a dead table holding only emptied entries.

export interface Held<T> {
  /** Set to undefined when done with, before the entry leaves its collection. */
  value: T | undefined;
}

export const held = <T>(value: T): Held<T> => ({ value });
