// A pronunciation fix reaches the audio already published: after a save, each
// rule that is new or changed says how many ready articles contain its words
// (the list's search, GET /api/articles?q=…&status=ready) and offers
// "Regenerate these N", a bulk job with the same filter (bulk.ts).
import { call } from "../api.js";
import { clear, h } from "../dom.js";
import { fmtNumber, tn, t } from "../i18n.js";
import { notice } from "../ui.js";
import { startJob } from "./bulk.js";

interface RuleWords {
  match: string;
}

/** Most changed rules looked up after one save. */
const MAX_RULES = 5;

/** Rules of `now` that are not in `before` as they are (new, or changed in any field). */
export function changedRules<R extends RuleWords>(before: R[], now: R[]): R[] {
  const seen = new Set(before.map((r) => JSON.stringify(r)));
  return now.filter((r) => !seen.has(JSON.stringify(r)) && r.match.trim() !== "");
}

/** One line per changed rule: the count of ready articles that say its words, and the button that regenerates them. */
export function affectedArticles(rules: RuleWords[], canWrite: boolean): HTMLElement {
  const box = h("div", { class: "affected", id: "affected" });
  for (const rule of rules.slice(0, MAX_RULES)) {
    const line = h("div", { class: "affected-rule" });
    box.append(line);
    void countFor(rule.match, line, canWrite);
  }
  return box;
}

async function countFor(words: string, line: HTMLElement, canWrite: boolean): Promise<void> {
  const filter = { q: words, status: "ready" };
  let count: number;
  let more: boolean;
  try {
    // More than the search counts (docs/api.md, countCapped): the job still takes every match, up to its maximum.
    ({ count, countCapped: more = false } = await call<{ count: number; countCapped?: boolean }>("GET", `/api/articles?${new URLSearchParams({ ...filter, limit: "10" })}`));
  } catch (e) {
    clear(line, notice(e));
    return;
  }
  if (count === 0) {
    clear(line, h("p", { role: "status" }, h("strong", null, words), ": ", t("pron.affectsNone")));
    return;
  }
  const progress = h("div", { class: "affected-progress" });
  const button = canWrite
    ? h("button", { type: "button", class: "regenerate-affected", onclick: async () => {
        button!.disabled = true;
        await startJob({ action: "regenerate", filter }, progress);
      } }, more ? t("pron.regenerateAll") : tn("pron.regenerate", count))
    : null;
  clear(line, h("p", { role: "status" }, h("strong", null, words), ": ", more ? t("pron.affectsMore", { n: fmtNumber(count) }) : tn("pron.affects", count)), button, progress);
}
