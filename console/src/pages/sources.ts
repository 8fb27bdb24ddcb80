// Sources: the feeds and sitemaps the project follows (GET/POST /api/sources,
// PUT to pause or resume, POST …/poll, DELETE), each with its polling state
// and last error in words (docs/sources.md).
import { call } from "../api.js";
import { clear, field, h } from "../dom.js";
import { lang, t } from "../i18n.js";
import { generation, go, stillCurrent } from "../nav.js";
import { canWrite, confirmDialog, heading, loading, notice, readOnlyNote } from "../ui.js";

interface Source {
  id: string;
  url: string;
  kind: string | null;
  pollSeconds: number;
  paused: boolean;
  mode: string;
  labels: string[];
  state: { lastPoll: string | null; lastSuccess: string | null; nextPoll: string | null; seen: number; created: number; updated?: number; error: string | null };
}

const when = (iso: string | null) => (iso ? new Intl.DateTimeFormat(lang(), { dateStyle: "short", timeStyle: "medium" }).format(new Date(iso)) : "–");

export async function sourcesPage(main: HTMLElement): Promise<void> {
  const gen = generation;
  const body = h("div", { "aria-busy": "true" }, loading());
  const out = h("div", { "aria-live": "polite", id: "sources-out" });
  main.append(heading(t("sources.title")), h("p", null, t("sources.intro")), canWrite() ? addForm(out) : readOnlyNote(), out, body);
  let sources: Source[];
  try {
    sources = (await call<{ sources: Source[] }>("GET", "/api/sources")).sources;
  } catch (e) {
    if (stillCurrent(gen)) clear(body, notice(e));
    return;
  }
  if (!stillCurrent(gen)) return;
  body.removeAttribute("aria-busy");
  clear(
    body,
    h(
      "table",
      { class: "sources" },
      h("caption", null, t("sources.caption")),
      h("thead", null, h("tr", null, h("th", { scope: "col" }, t("sources.feed")), h("th", { scope: "col" }, t("sources.state")), h("th", { scope: "col" }, t("sources.actions")))),
      h("tbody", null, sources.length ? sources.map((s) => row(s, out)) : h("tr", null, h("td", { colspan: "3" }, t("sources.empty")))),
    ),
  );
}

function addForm(out: HTMLElement): HTMLElement {
  const url = h("input", { id: "source-url", type: "url", required: true, autocomplete: "url" });
  const every = h("input", { id: "source-every", type: "number", min: "1", max: "1440", value: "5", required: true });
  const mode = h("select", { id: "source-mode" }, h("option", { value: "text", selected: true }, t("sources.mode.text")), h("option", { value: "page" }, t("sources.mode.page")));
  const labels = h("input", { id: "source-labels", type: "text" });
  const backfill = h("input", { id: "source-backfill", type: "number", min: "0", max: "1000", value: "0" });
  const submit = h("button", { type: "submit" }, t("sources.add"));
  return h(
    "form",
    {
      id: "source-form",
      class: "source-form",
      onsubmit: async (e: Event) => {
        e.preventDefault();
        submit.disabled = true;
        clear(out, h("p", { role: "status" }, t("common.saving")));
        try {
          const minutes = Number(every.value);
          await call("POST", "/api/sources", {
            body: {
              url: url.value.trim(),
              pollSeconds: Math.round(minutes * 60),
              mode: mode.value,
              labels: labels.value.split(",").map((l) => l.trim()).filter(Boolean),
              backfill: Number(backfill.value) || 0,
            },
          });
          go("#/sources");
          // Drawn again; the notice goes into the new page's live region.
          requestAnimationFrame(() => document.getElementById("sources-out")?.replaceChildren(notice(t("sources.added"), "ok")));
        } catch (err) {
          clear(out, notice(err));
        } finally {
          submit.disabled = false;
        }
      },
    },
    h("h2", null, t("sources.new")),
    field(t("sources.url"), url, t("sources.urlHint")),
    field(t("sources.every"), every, t("sources.everyHint")),
    field(t("sources.mode"), mode, t("sources.modeHint")),
    field(t("sources.labels"), labels, t("sources.labelsHint")),
    field(t("sources.backfill"), backfill, t("sources.backfillHint")),
    submit,
  );
}

function row(s: Source, out: HTMLElement): HTMLElement {
  const st = s.state;
  const act = async (btn: HTMLButtonElement, fn: () => Promise<unknown>, done: string) => {
    btn.disabled = true;
    clear(out, h("p", { role: "status" }, t("common.saving")));
    try {
      await fn();
      go("#/sources");
      requestAnimationFrame(() => document.getElementById("sources-out")?.replaceChildren(notice(done, "ok")));
    } catch (err) {
      clear(out, notice(err));
      btn.disabled = false;
    }
  };
  const path = `/api/sources/${encodeURIComponent(s.id)}`;
  return h(
    "tr",
    { class: "source", "data-id": s.id },
    h("td", null, h("span", { class: "source-url" }, s.url), h("br"), h("span", { class: "hint" }, `${s.kind ?? t("sources.kindUnknown")} · ${t(s.mode === "page" ? "sources.mode.page" : "sources.mode.text")}`)),
    h(
      "td",
      null,
      h(
        "dl",
        { class: "source-state" },
        h("dt", null, t("sources.status")),
        h("dd", { class: "source-status" }, s.paused ? t("sources.paused") : st.error ? t("sources.failing") : t("sources.active")),
        h("dt", null, t("sources.lastPoll")),
        h("dd", null, when(st.lastPoll)),
        h("dt", null, t("sources.nextPoll")),
        h("dd", null, when(st.nextPoll)),
        h("dt", null, t("sources.counts")),
        h("dd", { class: "source-counts" }, t("sources.countsValue", { seen: st.seen, created: st.created })),
      ),
      st.error ? h("p", { class: "row-error source-error" }, st.error) : null,
    ),
    h(
      "td",
      { class: "row-actions" },
      canWrite()
        ? [
            h("button", { type: "button", class: "poll-now", onclick: (e: Event) => act(e.currentTarget as HTMLButtonElement, () => call("POST", `${path}/poll`), t("sources.polled")) }, t("sources.pollNow")),
            h(
              "button",
              { type: "button", class: "pause", "aria-pressed": s.paused ? "true" : "false", onclick: (e: Event) => act(e.currentTarget as HTMLButtonElement, () => call("PUT", path, { body: { paused: !s.paused } }), t(s.paused ? "sources.resumed" : "sources.pausedDone")) },
              t(s.paused ? "sources.resume" : "sources.pause"),
            ),
            h(
              "button",
              {
                type: "button",
                class: "delete-source danger",
                onclick: async (e: Event) => {
                  const btn = e.currentTarget as HTMLButtonElement;
                  if (await confirmDialog(t("sources.confirmDelete", { url: s.url }), t("sources.delete"))) await act(btn, () => call("DELETE", path), t("sources.deleted"));
                },
              },
              t("sources.delete"),
            ),
          ]
        : readOnlyNote(),
    ),
  );
}
