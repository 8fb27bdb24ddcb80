// From a feed item to what an article is made of: its identity (externalId,
// a hash of its key), the fingerprint that tells an edit, and its title and
// text — the feed's own full text in mode "text", else the item's page.
import { createHash } from "node:crypto";
import { unsafeIdProblem } from "../../../lib/text-rules.js";
import type { FeedItem } from "./parse-feed.js";
import type { SourceDoc } from "./port.js";

const EXTERNAL_ID_MAX = 256;

const sha = (s: string) => createHash("sha256").update(s).digest("base64url");

/** The item's key as stored: short and of one alphabet, whatever the guid looks like. */
export const keyHash = (key: string) => sha(key).slice(0, 22);

/** The guid or link itself where it is a valid externalId; else a hash of it (same item, same id). */
export function externalIdOf(item: FeedItem): string {
  const k = item.key.trim();
  // eslint-disable-next-line no-control-regex
  if (k.length > 0 && k.length <= EXTERNAL_ID_MAX && !/[\u0000-\u001f\u007f]/.test(k) && !unsafeIdProblem(k)) return k;
  return `feed:${sha(item.key)}`;
}

/** What, if it changes, is an edit of the item. A changed date alone is not (it would re-render the same words). */
export const fingerprint = (item: FeedItem) => sha(`${item.title ?? ""}\n${item.link ?? ""}\n${item.content ?? item.summary ?? ""}`);

/** Dated feeds newest first (the per-poll bound keeps the newest); undated ones in their own order. */
export function newestFirst(items: FeedItem[]): FeedItem[] {
  if (!items.every((i) => i.published !== undefined)) return items;
  return items
    .map((item, index) => ({ item, index }))
    .sort((a, b) => b.item.published! - a.item.published! || a.index - b.index)
    .map((x) => x.item);
}

/** Does this item's article come from its page rather than the feed? */
export const needsPage = (src: Pick<SourceDoc, "mode">, item: FeedItem) => src.mode === "page" || item.content === undefined;

/**
 * The first poll decides what counts as already there: items dated before `since`, and undated
 * items (which cannot be placed in time) that the feed held then. `backfill: N` takes the newest
 * N in as well, by moving `since` back to the N-th item's date and leaving them out of the baseline.
 */
export function firstPollCut(items: FeedItem[], since: number, backfill: number): { since: number; baseline: string[] } {
  const wanted = items.slice(0, backfill);
  const oldest = Math.min(since, ...wanted.map((i) => i.published ?? since));
  const baseline = items.slice(backfill).filter((i) => i.published === undefined).map((i) => keyHash(i.key));
  return { since: oldest, baseline };
}

/** Is an item not yet imported new (to be imported)? */
export function isNew(item: FeedItem, since: number, baseline: ReadonlySet<string>): boolean {
  // Feed dates are whole seconds (RSS, HTTP dates): an item of the second the source was added is new.
  return item.published !== undefined ? item.published >= Math.floor(since / 1000) * 1000 : !baseline.has(keyHash(item.key));
}
