// Shared pieces of the pages: error notices, read-only reasons, confirmation dialogs, statuses.
import { ApiError, session } from "./api.js";
import { h, uid } from "./dom.js";
import { t, type MessageKey } from "./i18n.js";

export const STATUSES = ["waiting", "parsed", "processing", "retry", "fallback", "ready", "errored", "rejected", "limit_reached", "no_money", "recrawling", "deleted"] as const;
/** Statuses after which nothing changes without a new request. */
export const SETTLED = new Set(["ready", "errored", "rejected", "limit_reached", "no_money", "deleted"]);

export const VOICE_PAIRS: Array<[string, string]> = [
  ...["echo", "fable", "alloy", "onyx", "nova", "shimmer"].flatMap((v): Array<[string, string]> => [
    [v, "en-US"],
    [v, "de-DE"],
  ]),
  ["de-DE-ConradNeural", "de-DE"],
  ["de-DE-KatjaNeural", "de-DE"],
];

export function canWrite(): boolean {
  return session.scope === "full";
}

/** The text of an API failure as people should read it (429: when to retry). */
export function errorText(e: unknown): string {
  if (e instanceof ApiError) {
    if (e.status === 429) return t("error.rateLimited", { seconds: e.retryAfter ?? 1, message: e.message });
    if (e.status === 0) return t("error.network", { message: e.message });
    return e.message;
  }
  return String((e as Error)?.message ?? e);
}

export function notice(e: unknown, kind: "error" | "ok" = "error"): HTMLElement {
  return h("p", { class: `notice ${kind}`, role: kind === "error" ? "alert" : "status" }, typeof e === "string" ? e : errorText(e));
}

export function loading(): HTMLElement {
  return h("p", { class: "loading", role: "status", "aria-live": "polite" }, t("common.loading"));
}

export function badge(status: string): HTMLElement {
  const tip = uid("tip");
  const known = (STATUSES as readonly string[]).includes(status);
  return h(
    "span",
    { class: `badge s-${status}`, tabindex: "0", "aria-describedby": tip },
    known ? t(`status.${status}` as MessageKey) : status,
    h("span", { class: "tip", role: "tooltip", id: tip }, known ? t(`status.${status}.meaning` as MessageKey) : ""),
  );
}

/** A write button for a full token; for a read token a disabled one with the reason beside it. */
export function writeButton(label: string, onclick: (ev: Event) => void, attrs: Record<string, unknown> = {}): HTMLElement {
  if (canWrite()) return h("button", { type: "button", ...attrs, onclick }, label);
  return readOnlyNote();
}

export function readOnlyNote(): HTMLElement {
  return h("p", { class: "readonly-note" }, t("auth.readOnlyReason"));
}

/** A modal confirmation (<dialog>); resolves true on confirm. */
export function confirmDialog(message: string, confirmLabel: string): Promise<boolean> {
  return new Promise((resolve) => {
    const title = uid("dlg");
    const dlg = h(
      "dialog",
      { class: "confirm", "aria-labelledby": title },
      h("p", { id: title }, message),
      h(
        "div",
        { class: "actions" },
        h("button", { type: "button", class: "danger", "data-confirm": "", onclick: () => done(true) }, confirmLabel),
        h("button", { type: "button", "data-cancel": "", onclick: () => done(false) }, t("common.cancel")),
      ),
    );
    const done = (v: boolean) => {
      dlg.close();
      dlg.remove();
      resolve(v);
    };
    dlg.addEventListener("cancel", () => done(false));
    document.body.append(dlg);
    dlg.showModal();
    (dlg.querySelector("[data-cancel]") as HTMLElement).focus();
  });
}

export function heading(text: string): HTMLElement {
  return h("h1", { tabindex: "-1", id: "page-title" }, text);
}

/**
 * Every table of the console becomes labelled cards on a phone (style.css): each body cell carries
 * its column's name (data-label, shown before it there). Watches `root` so rows drawn later (a new
 * pronunciation rule, the next page of a list, another helper's page) are labelled too.
 */
export function labelTableCells(root: HTMLElement): void {
  const label = (table: HTMLTableElement) => {
    const names = [...(table.tHead?.rows[0]?.cells ?? [])].map((c) => c.textContent?.trim() ?? "");
    if (!names.length) return;
    for (const body of table.tBodies)
      for (const row of body.rows)
        for (const [i, cell] of [...row.cells].entries()) if (!cell.hasAttribute("data-label") && names[i]) cell.setAttribute("data-label", names[i]);
  };
  new MutationObserver((records) => {
    const tables = new Set<HTMLTableElement>();
    for (const r of records)
      for (const n of r.addedNodes) {
        if (!(n instanceof Element)) continue;
        const own = n.closest("table");
        if (own) tables.add(own);
        for (const t of n.querySelectorAll("table")) tables.add(t);
      }
    tables.forEach(label);
  }).observe(root, { childList: true, subtree: true });
}
