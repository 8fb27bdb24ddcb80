// When the reconciler should look at an article again: the one place that
// derives it from the article's state. Stored as `dueAt` (epoch ms) while the
// article waits for audio work and absent otherwise, so the reconciler's query
// reads a sparse index of the due articles and never the archive.
import { PENDING_STATUSES, type ArticleStatus } from "./port.js";

/** What the due time depends on. */
export interface DueState {
  status: ArticleStatus;
  /** Audio on demand: a parked article waits for someone to ask for it, so it is never due. */
  parked?: true;
  /** Created from its URL, its page not read yet: due so that a fetch lost with its process is done again. */
  pageFetch?: "pending";
}

/** Epoch ms from which the reconciler may pick the article up, or undefined when it never should. */
export function dueAt(a: DueState, changedAt: number): number | undefined {
  if (a.status === "recrawling") return a.pageFetch === "pending" ? changedAt : undefined;
  return PENDING_STATUSES.includes(a.status) && a.parked !== true ? changedAt : undefined;
}
