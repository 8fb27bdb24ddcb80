// Bulk actions on the articles list: rows are selected one by one (or "all N
// matching" the list's filter and search), an action is chosen and confirmed
// with the count, then the job's progress is shown until it ends, with Cancel
// (POST /api/articles/bulk, GET and DELETE /api/jobs/{id}). The running job's id
// is kept for the tab, so its progress is back after a reload or another page.
import { call } from "../api.js";
import { clear, field, h } from "../dom.js";
import { fmtNumber, t, tn, type MessageKey } from "../i18n.js";
import { confirmDialog, notice } from "../ui.js";

export interface BulkFilter {
  q?: string;
  status?: string;
  label?: string;
}

interface Job {
  id: string;
  action: string;
  state: "running" | "done" | "cancelled" | "failed";
  total: number;
  done: number;
  failed: number;
  remaining: number;
  errors: Array<{ articleId: string; error: string }>;
  reason?: string;
}

const ACTIONS = ["regenerate", "delete", "addLabels", "removeLabels"] as const;
type Action = (typeof ACTIONS)[number];
const JOB_KEY = "console.bulkJob";
const POLL_MS = 1_000;

/** Starts a job (after the caller's confirmation) and shows its progress in `into`; resolves with the job once it has ended. */
export async function startJob(body: Record<string, unknown>, into: HTMLElement): Promise<Job | undefined> {
  try {
    const r = await call<{ id: string; job: Job }>("POST", "/api/articles/bulk", { body });
    sessionStorage.setItem(JOB_KEY, r.id);
    return await watchJob(r.job, into);
  } catch (e) {
    clear(into, notice(e));
    return undefined;
  }
}

/** Progress of a job until it ends: a progress bar, the counts, Cancel; then what happened, with the first errors. */
export async function watchJob(first: Job, into: HTMLElement): Promise<Job> {
  let job = first;
  const bar = h("progress", { id: "bulk-bar", max: String(Math.max(1, job.total)), value: "0", "aria-label": t("bulk.progress") });
  const counts = h("p", { id: "bulk-counts" });
  const cancel = h("button", { type: "button", id: "bulk-cancel", onclick: async () => {
    cancel.disabled = true;
    try {
      job = (await call<{ job: Job }>("DELETE", `/api/jobs/${encodeURIComponent(job.id)}`)).job;
    } catch (e) {
      into.append(notice(e));
    }
  } }, t("bulk.cancel"));
  const live = h("div", { role: "status", "aria-live": "polite", id: "bulk-state" });
  clear(into, h("div", { class: "bulk-job" }, bar, counts, cancel, live));
  const draw = () => {
    bar.value = job.done + job.failed;
    counts.textContent = t("bulk.counts", { done: fmtNumber(job.done), failed: fmtNumber(job.failed), total: fmtNumber(job.total) });
  };
  draw();
  clear(live, t(`bulk.running.${job.action}` as MessageKey, { total: fmtNumber(job.total) }));
  while (job.state === "running" && into.isConnected) {
    await new Promise((r) => setTimeout(r, POLL_MS));
    try {
      job = (await call<{ job: Job }>("GET", `/api/jobs/${encodeURIComponent(job.id)}`)).job;
    } catch (e) {
      clear(live, notice(e));
      return job;
    }
    draw();
  }
  if (job.state !== "running") {
    cancel.remove();
    const errors = job.errors.slice(0, 10);
    clear(
      live,
      h("p", { class: `notice ${job.state === "done" && job.failed === 0 ? "ok" : "error"}` }, t(`bulk.ended.${job.state}`, { done: fmtNumber(job.done), failed: fmtNumber(job.failed), remaining: fmtNumber(job.remaining) }), job.reason ? ` ${job.reason}` : ""),
      errors.length ? h("ul", { class: "bulk-errors" }, ...errors.map((e) => h("li", null, h("a", { href: `#/article/${encodeURIComponent(e.articleId)}` }, e.articleId), `: ${e.error}`))) : null,
    );
  }
  return job;
}

/**
 * The job this tab started last: its progress while it runs; once it has ended, what happened, shown
 * once (the list is drawn again when a job ends, and this says why it changed).
 */
export async function resumeJob(into: HTMLElement): Promise<void> {
  const id = sessionStorage.getItem(JOB_KEY);
  if (!id) return;
  try {
    const { job } = await call<{ job: Job }>("GET", `/api/jobs/${encodeURIComponent(id)}`);
    if (job.state !== "running") sessionStorage.removeItem(JOB_KEY);
    await watchJob(job, into);
  } catch {
    sessionStorage.removeItem(JOB_KEY);
  }
}

/** Where the tab's last job, if any, shows its progress or outcome, for a list with nothing to select. */
export function jobResult(): HTMLElement {
  const into = h("div", { id: "bulk-progress" });
  void resumeJob(into);
  return into;
}

export interface BulkBar {
  element: HTMLElement;
  /** The selection box of a row. */
  rowBox(id: string, title: string): HTMLElement;
  /** The box selecting every row on this page. */
  pageBox(ids: string[]): HTMLElement;
}

/**
 * The bar above the list: how many are selected, "all N matching", the action, its labels, Apply.
 * `count`: what the list's filter (and search) match in all, undefined when a search matches
 * more than it counts (no "all N matching" then); `onEnded`: the list is drawn again.
 */
export function bulkBar(filter: BulkFilter, count: number | undefined, onEnded: () => void): BulkBar {
  const selected = new Set<string>();
  let all = false;
  const boxes = new Map<string, HTMLInputElement>();
  const status = h("p", { id: "bulk-selected", role: "status", "aria-live": "polite" });
  const allButton = h("button", { type: "button", id: "bulk-all", onclick: () => {
    all = !all;
    for (const b of boxes.values()) b.checked = all || selected.has(b.value);
    draw();
  } });
  const action = h("select", { id: "bulk-action", onchange: () => draw() }, ...ACTIONS.map((a) => h("option", { value: a }, t(`bulk.action.${a}` as MessageKey))));
  const labels = h("input", { id: "bulk-labels", type: "text", autocomplete: "off" });
  const labelsField = field(t("bulk.labels"), labels, t("bulk.labelsHint"));
  const apply = h("button", { type: "button", id: "bulk-apply", class: "primary", onclick: () => void run() }, t("bulk.apply"));
  const progress = h("div", { id: "bulk-progress" });
  const size = () => (all ? (count ?? 0) : selected.size);

  function draw(): void {
    status.textContent = all ? tn("bulk.allSelected", count ?? 0) : tn("bulk.selected", selected.size);
    allButton.textContent = all ? t("bulk.onlySelected") : tn("bulk.selectAll", count ?? 0);
    labelsField.hidden = !(action.value === "addLabels" || action.value === "removeLabels");
    apply.disabled = size() === 0;
  }

  async function run(): Promise<void> {
    const act = action.value as Action;
    const body: Record<string, unknown> = { action: act };
    if (act === "addLabels" || act === "removeLabels") {
      const list = labels.value.split(",").map((s) => s.trim()).filter(Boolean);
      if (!list.length) {
        clear(progress, notice(t("bulk.labelsNeeded")));
        labels.focus();
        return;
      }
      body.labels = list;
    }
    if (all) body.filter = Object.fromEntries(Object.entries(filter).filter(([, v]) => v));
    else body.ids = [...selected];
    if (!(await confirmDialog(tn(`bulk.confirm.${act}`, size(), { labels: ((body.labels as string[]) ?? []).join(", ") }), t(`bulk.action.${act}` as MessageKey)))) return;
    apply.disabled = true;
    const job = await startJob(body, progress);
    apply.disabled = false;
    if (job) onEnded();
  }

  draw();
  const element = h(
    "section",
    { class: "bulk", "aria-label": t("bulk.title") },
    h("div", { class: "bulk-row" }, status, count !== undefined && count > 0 ? allButton : null),
    h("div", { class: "filters" }, field(t("bulk.action"), action), labelsField, apply),
    progress,
  );
  void resumeJob(progress);
  return {
    element,
    rowBox(id, title) {
      const box = h("input", { type: "checkbox", class: "bulk-box", value: id, "aria-label": t("bulk.selectRow", { title }), onchange: () => {
        if (all) {
          // Leaving "all matching" by unticking a row: the rows of this page stay selected but that one.
          all = false;
          for (const b of boxes.values()) if (b.checked) selected.add(b.value);
        }
        if (box.checked) selected.add(id);
        else selected.delete(id);
        draw();
      } });
      box.checked = all || selected.has(id);
      boxes.set(id, box);
      return box;
    },
    pageBox(ids) {
      const box = h("input", { type: "checkbox", id: "bulk-page", "aria-label": t("bulk.selectPage"), onchange: () => {
        all = false;
        for (const id of ids) {
          if (box.checked) selected.add(id);
          else selected.delete(id);
          const b = boxes.get(id);
          if (b) b.checked = box.checked;
        }
        draw();
      } });
      return box;
    },
  };
}
