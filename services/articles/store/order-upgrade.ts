// The list order's keys (order.ts) for an archive an older release stored without them. The
// first start does not wait for them: a million articles took 23 minutes of start-up when the
// pass ran before the store opened (bench/README.md, issue 35). Instead the store opens at once
// and lists answer in the previous release's order (LEGACY_SORT, served by the indexes it left)
// while a background pass gives the keys, a page per transaction computed in the database itself
// (DocumentCollection.fillDerived), then builds the list indexes on them; only then do lists
// switch to the list order. The position is stored after every page, so a process killed
// mid-way goes on from there at its next start.
import { logger } from "../../../lib/log.js";
import { orderUpgradeGiven, orderUpgradeRunning } from "../../../lib/metrics.js";
import type { DocumentCollection, IndexOptions, IndexSpec } from "../../../lib/store/collection.js";
import type { ArticleDoc, ArticleLayout } from "./layout.js";
import { ORDER_KEYS_OF_ADDED } from "./order.js";

/** Documents per page: one transaction each, short enough that a create waits for at most one. */
export const ORDER_PAGE = 1000;
/** How often the pass logs its progress. */
const PROGRESS_EVERY_MS = 5000;

/** The marker documents, kept in the rules collection beside the projects' rules (store.ts `once`). */
const DONE = "\u0000done:order";
const POSITION = "\u0000progress:order";

interface MarkDoc {
  _id: string;
  rules: never[];
  changedAt: number;
  /** The id the pass has reached. */
  after?: string;
  /** Articles given their keys so far, over every start. */
  given?: number;
}

export interface OrderUpgrade {
  /** Whether lists use the list order yet (else LEGACY_SORT). */
  ordered(): boolean;
  /** Settles when every article has its keys (the list indexes are built after). */
  keyed: Promise<void>;
  /** Settles when the pass and its indexes are done (at once when there was nothing to do). */
  done: Promise<void>;
}

/** The list indexes: those over the order keys, built after the pass so its writes do not keep them up. */
const overOrder = ([spec]: [IndexSpec, IndexOptions?]) => "sortAt" in spec.keys;

/**
 * Drops the indexes the layout retired, makes the others, and gives the order keys: at once on a
 * new or finished store, else in the background (`done`), answering as soon as the store can serve.
 * `stopped` tells the pass the store is closing: it ends after its page, the next start goes on.
 */
export async function upgradeOrder(
  col: DocumentCollection<ArticleDoc>,
  marks: DocumentCollection<MarkDoc>,
  layout: ArticleLayout,
  stopped: () => boolean,
  pageSize = ORDER_PAGE,
): Promise<OrderUpgrade> {
  for (const name of layout.retiredIndexes) await col.dropIndex(name);
  const finished = (await marks.findOne({ _id: DONE })) !== null || (await col.findOne({})) === null;
  if (finished) {
    for (const [spec, o] of layout.indexes) await col.ensureIndex(spec, o);
    await marks.upsertOne({ _id: DONE }, { $set: { rules: [], changedAt: Date.now() } });
    return { ordered: () => true, keyed: Promise.resolve(), done: Promise.resolve() };
  }
  for (const ix of layout.indexes) if (!overOrder(ix)) await col.ensureIndex(...ix);
  let ordered = false;
  let keysGiven = () => {};
  const keyed = new Promise<void>((resolve) => (keysGiven = resolve));
  const done = (async () => {
    try {
      await pass();
    } finally {
      orderUpgradeRunning.set(0);
    }
  })();
  async function pass(): Promise<void> {
    const log = logger("articles");
    const at = await marks.findOne({ _id: POSITION });
    let after = at?.after ?? "";
    let given = at?.given ?? 0;
    const started = Date.now();
    let logged = started;
    orderUpgradeRunning.set(1);
    orderUpgradeGiven.set(given);
    log.info({ after: after || undefined, given }, "list order: giving the articles of an older release their order keys in the background; lists keep the previous order until it ends");
    for (;;) {
      if (stopped()) return;
      const page = await col.fillDerived(ORDER_KEYS_OF_ADDED, { after, limit: pageSize });
      if (page.last === undefined) break;
      after = page.last;
      given += page.modified;
      orderUpgradeGiven.set(given);
      // Not durable: a position lost in a power failure only repeats pages, which change nothing twice.
      await marks.upsertOne({ _id: POSITION }, { $set: { rules: [], changedAt: Date.now(), after, given } }, { durable: false });
      if (Date.now() - logged >= PROGRESS_EVERY_MS) {
        logged = Date.now();
        log.info({ given, after, seconds: Math.round((logged - started) / 1000) }, "list order: order keys given so far");
      }
      await new Promise((resolve) => setImmediate(resolve));
    }
    keysGiven();
    log.info({ given, seconds: Math.round((Date.now() - started) / 1000) }, "list order: keys given; building the list indexes");
    for (const ix of layout.indexes) if (overOrder(ix) && !stopped()) await col.ensureIndex(...ix);
    if (stopped()) return;
    await marks.upsertOne({ _id: DONE }, { $set: { rules: [], changedAt: Date.now() } });
    ordered = true;
    log.info({ given, seconds: Math.round((Date.now() - started) / 1000) }, "list order: done; lists and feeds use it now");
  }
  return { ordered: () => ordered, keyed, done };
}
