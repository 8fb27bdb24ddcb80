// Articles: the paged list (GET /api/articles, searched by words with ?q=), the lookup, an article's page
// (audio, errors, segments, edit, regenerate, delete) and the create form.
import { ApiError, call } from "../api.js";
import { clear, field, fmtDuration, h } from "../dom.js";
import { fmtDate, fmtNumber, t, tn } from "../i18n.js";
import { go, generation, stillCurrent, type Route } from "../nav.js";
import { badge, canWrite, confirmDialog, errorText, heading, loading, notice, readOnlyNote, SETTLED, STATUSES } from "../ui.js";
import { voicePicker } from "../voices.js";
import { bulkBar, jobResult, type BulkBar } from "./bulk.js";

interface ListItem {
  id: string;
  external_id: string | null;
  title: string;
  status: string;
  updated: number | null;
  added: number;
  labels: string[];
  audio_duration?: number;
  audio_preview_duration?: number;
}

const PAGE_SIZES = [10, 25, 50, 100];

function lookupForm(): HTMLElement {
  const input = h("input", { type: "search", id: "lookup", name: "lookup", autocomplete: "off" });
  const out = h("div", { "aria-live": "polite" });
  return h(
    "form",
    {
      class: "lookup",
      role: "search",
      onsubmit: async (e: Event) => {
        e.preventDefault();
        const q = input.value.trim();
        if (!q) return;
        clear(out, loading());
        const tries = /^https?:\/\//i.test(q)
          ? [`/api/articles_external_url/${encodeURIComponent(q)}`]
          : [`/api/articles/${encodeURIComponent(q)}`, `/api/articles_external_id/${encodeURIComponent(q)}`];
        for (const path of tries) {
          try {
            const r = await call<{ article: { id: string } }>("GET", path);
            go(`#/article/${encodeURIComponent(r.article.id)}`);
            return;
          } catch (err) {
            if (!(err instanceof ApiError) || (err.status !== 404 && err.status !== 400)) {
              clear(out, notice(err));
              return;
            }
          }
        }
        clear(out, notice(t("articles.notFound", { query: q })));
      },
    },
    field(t("articles.lookup"), input, t("articles.lookupHint")),
    h("button", { type: "submit" }, t("articles.find")),
    out,
  );
}

export async function articlesPage(main: HTMLElement, route: Route): Promise<void> {
  const gen = generation;
  const limit = PAGE_SIZES.includes(Number(route.query.get("limit"))) ? Number(route.query.get("limit")) : 25;
  const page = Math.max(0, Number(route.query.get("page") ?? 0) || 0);
  const statusFilter = route.query.get("status") ?? "";
  const labelFilter = route.query.get("label") ?? "";
  // Kept in the address like the filters: a search can be bookmarked, shared and gone back to.
  const words = (route.query.get("q") ?? "").trim();
  const nav = (changes: Record<string, string | number>) => {
    const q = new URLSearchParams({ limit: String(limit), page: String(page), status: statusFilter, label: labelFilter, q: words });
    for (const [k, v] of Object.entries(changes)) q.set(k, String(v));
    for (const k of [...q.keys()]) if (!q.get(k)) q.delete(k);
    go(`#/articles?${q}`);
  };
  // The API filters the whole archive: a new filter is a new first page, with its own total.
  const list = h("div", { class: "list", "aria-busy": "true" }, loading());
  const statusSel = h(
    "select",
    { id: "filter-status", onchange: (e: Event) => nav({ status: (e.target as HTMLSelectElement).value, page: 0 }) },
    h("option", { value: "" }, t("articles.allStatuses")),
    ...STATUSES.filter((s) => s !== "deleted").map((s) => h("option", { value: s, selected: s === statusFilter }, t(`status.${s}` as Parameters<typeof t>[0]))),
  );
  const labelInput = h("input", { id: "filter-label", type: "text", value: labelFilter, onchange: (e: Event) => nav({ label: (e.target as HTMLInputElement).value.trim(), page: 0 }) });
  const sizeSel = h(
    "select",
    { id: "page-size", onchange: (e: Event) => nav({ limit: (e.target as HTMLSelectElement).value, page: 0 }) },
    ...PAGE_SIZES.map((n) => h("option", { value: n, selected: n === limit }, String(n))),
  );
  main.append(
    h(
      "div",
      { class: "page-head" },
      heading(t("articles.title")),
      canWrite()
        ? h("div", { class: "head-actions" }, h("a", { class: "button primary", href: "#/new", id: "new-article" }, t("articles.new")), h("a", { class: "button", href: "#/new-url", id: "new-from-url" }, t("article.fromUrlTitle")))
        : readOnlyNote(),
    ),
    searchForm(words, (q) => nav({ q, page: 0 })),
    lookupForm(),
    h("div", { class: "filters" }, field(t("articles.filterStatus"), statusSel), field(t("articles.filterLabel"), labelInput, t("articles.filterHint")), field(t("articles.pageSize"), sizeSel)),
    list,
  );
  let res: { count: number; countCapped?: true; articles: ListItem[] };
  try {
    const q = new URLSearchParams({ limit: String(limit), offset: String(page * limit) });
    if (statusFilter) q.set("status", statusFilter);
    if (labelFilter) q.set("label", labelFilter);
    if (words) q.set("q", words);
    res = await call("GET", `/api/articles?${q}`);
  } catch (e) {
    if (stillCurrent(gen)) clear(list, notice(e));
    return;
  }
  if (!stillCurrent(gen)) return;
  list.removeAttribute("aria-busy");
  const pages = Math.max(1, Math.ceil(res.count / limit));
  // A search that matches more than it counts (docs/api.md, countCapped): pages go on while they are full.
  const more = res.countCapped === true;
  const pager = h(
    "nav",
    { class: "pager", "aria-label": t("articles.pages") },
    h("button", { type: "button", id: "page-prev", disabled: page === 0, onclick: () => nav({ page: page - 1 }) }, t("articles.prev")),
    h(
      "span",
      null,
      more
        ? t("articles.pageOfMore", { page: fmtNumber(page + 1), count: t("articles.countMore", { n: fmtNumber(res.count) }) })
        : t("articles.pageOf", { page: fmtNumber(page + 1), pages: fmtNumber(pages), count: tn("articles.count", res.count) }),
    ),
    h("button", { type: "button", id: "page-next", disabled: more ? res.articles.length < limit : page + 1 >= pages, onclick: () => nav({ page: page + 1 }) }, t("articles.next")),
  );
  if (res.count === 0) {
    clear(list, h("p", { class: "empty" }, words ? t("articles.noneFound", { query: words }) : t(statusFilter || labelFilter ? "articles.noneMatch" : "articles.empty")));
    // A bulk job that just emptied this view still says what it did.
    if (canWrite()) list.before(jobResult());
    return;
  }
  // Bulk actions for a full token: the rows of this page, or all the filter matches.
  // "All N matching" is what this list shows: its filters and its search words (the address's q).
  const bulk = canWrite() ? bulkBar({ q: words, status: statusFilter, label: labelFilter }, more ? undefined : res.count, () => nav({})) : undefined;
  if (bulk) list.before(bulk.element);
  drawRows(list, res, pager, words ? t("articles.searchCaption", { query: words }) : t("articles.caption"), bulk);
}

/** The search box: words of title and text; submitting puts them in the address (empty: the plain list). */
function searchForm(words: string, search: (q: string) => void): HTMLElement {
  const input = h("input", { type: "search", id: "search-q", name: "q", value: words, maxlength: "200", autocomplete: "off" });
  return h(
    "form",
    {
      class: "lookup search",
      role: "search",
      "aria-label": t("articles.search"),
      onsubmit: (e: Event) => {
        e.preventDefault();
        search(input.value.trim());
      },
    },
    field(t("articles.search"), input, t("articles.searchHint")),
    h("button", { type: "submit", id: "search-go" }, t("articles.searchGo")),
    words ? h("button", { type: "button", id: "search-clear", onclick: () => search("") }, t("articles.searchClear")) : null,
  );
}

function drawRows(list: HTMLElement, res: { count: number; articles: ListItem[] }, pager: HTMLElement, caption: string, bulk?: BulkBar): void {
  const items = res.articles;
  const rows = document.createDocumentFragment();
  for (const a of items) {
    rows.append(
      h(
        "tr",
        null,
        bulk ? h("td", { class: "select" }, bulk.rowBox(a.id, a.title)) : null,
        h("td", null, badge(a.status)),
        h("td", null, h("a", { href: `#/article/${encodeURIComponent(a.id)}` }, a.title)),
        h("td", { class: "mono" }, a.external_id ?? "–"),
        h("td", { class: "labels" }, a.labels.join(", ") || "–"),
        h("td", null, fmtDate(a.updated ?? a.added)),
        h("td", { class: "num" }, a.audio_duration ? `${fmtDuration(a.audio_duration)} / ${fmtDuration(a.audio_preview_duration)}` : "–"),
      ),
    );
  }
  clear(
    list,
    items.length === 0
      ? h("p", { class: "empty" }, t("articles.noneMatch"))
      : h(
          "div",
          { class: "table-wrap", tabindex: "0", role: "region", "aria-label": t("articles.title") },
          h(
            "table",
            { class: "articles" },
            h("caption", { class: "sr-only" }, caption),
            h(
              "thead",
              null,
              h(
                "tr",
                null,
                bulk ? h("th", { scope: "col", class: "select" }, bulk.pageBox(items.map((a) => a.id))) : null,
                ...(["col.status", "col.title", "col.externalId", "col.labels", "col.updated", "col.durations"] as const).map((k) => h("th", { scope: "col" }, t(k))),
              ),
            ),
            h("tbody", null, rows),
          ),
        ),
    pager,
  );
  performance.mark("console:articles-rendered");
}

interface Article {
  id: string;
  externalId: string | null;
  title: string;
  text: string;
  prompt: string | null;
  status: string;
  url: string | null;
  voice: string;
  lang: string;
  labels?: string[];
  added: number;
  updated: number | null;
  /** The publication date (unix seconds or ISO 8601), where the API gives one. */
  published?: number | string | null;
  audio?: string;
  audio_preview?: string;
  audio_duration?: number;
  audio_preview_duration?: number;
  error?: string;
  errors?: Array<{ error: string; date: string }>;
}

/** The article form (create and edit); submit gets the request body. */
function articleForm(a: Partial<Article> | undefined, submitLabel: string, onSubmit: (body: Record<string, unknown>, out: HTMLElement) => Promise<void>): HTMLFormElement {
  const title = h("input", { id: "a-title", name: "title", type: "text", value: a?.title ?? "", required: true });
  const text = h("textarea", { id: "a-text", name: "text", rows: "8", required: true });
  text.value = a?.text ?? "";
  const url = h("input", { id: "a-url", name: "url", type: "url", value: a?.url ?? "" });
  const picker = voicePicker("voice", a?.voice, a?.lang, true);
  const voice = picker.select;
  const prompt = h("textarea", { id: "a-prompt", name: "prompt", rows: "2" });
  prompt.value = a?.prompt ?? "";
  const labels = h("input", { id: "a-labels", name: "labels", type: "text", value: (a?.labels ?? []).join(", ") });
  const out = h("div", { class: "form-status", "aria-live": "polite" });
  const form = h(
    "form",
    {
      class: "article-form",
      novalidate: true,
      onsubmit: async (e: Event) => {
        e.preventDefault();
        const body: Record<string, unknown> = { title: title.value, text: text.value };
        if (url.value.trim()) body.url = url.value.trim();
        if (voice.value) [body.voice, body.lang] = voice.value.split("|");
        if (prompt.value.trim()) body.prompt = prompt.value;
        else if (a?.prompt) body.prompt = null;
        body.labels = labels.value.split(",").map((s) => s.trim()).filter(Boolean);
        const btn = form.querySelector("button[type=submit]") as HTMLButtonElement;
        btn.disabled = true;
        clear(out, h("p", { role: "status" }, t("common.saving")));
        try {
          await onSubmit(body, out);
        } catch (err) {
          clear(out, notice(err));
        } finally {
          btn.disabled = false;
        }
      },
    },
    field(t("article.fieldTitle"), title),
    field(t("article.fieldText"), text),
    field(t("article.fieldUrl"), url),
    picker.element,
    field(t("article.fieldPrompt"), prompt, t("article.promptHint")),
    field(t("article.fieldLabels"), labels, t("article.labelsHint")),
    h("button", { type: "submit", class: "primary" }, submitLabel),
    out,
  );
  return form;
}

/** New article from URL: the platform fetches the page and takes title, text, language and address from it (docs/sources.md). */
export function newFromUrlPage(main: HTMLElement): void {
  main.append(heading(t("article.fromUrlTitle")));
  if (!canWrite()) {
    main.append(readOnlyNote());
    return;
  }
  const url = h("input", { id: "u-url", name: "url", type: "url", required: true, autocomplete: "url", placeholder: "https://" });
  const labels = h("input", { id: "u-labels", name: "labels", type: "text" });
  const out = h("div", { class: "form-status", "aria-live": "polite" });
  const form: HTMLFormElement = h(
    "form",
    {
      id: "url-form",
      class: "article-form",
      novalidate: true,
      onsubmit: async (e: Event) => {
        e.preventDefault();
        const body: Record<string, unknown> = { url: url.value.trim(), fetch: true };
        const ls = labels.value.split(",").map((x) => x.trim()).filter(Boolean);
        if (ls.length) body.labels = ls;
        const btn = form.querySelector("button[type=submit]") as HTMLButtonElement;
        btn.disabled = true;
        clear(out, h("p", { role: "status" }, t("common.saving")));
        try {
          const r = await call<{ id: string }>("POST", "/api/articles", { body });
          go(`#/article/${encodeURIComponent(r.id)}?created=1`);
        } catch (err) {
          clear(out, notice(err));
        } finally {
          btn.disabled = false;
        }
      },
    },
    field(t("article.fieldPageUrl"), url, t("article.fromUrlHint")),
    field(t("article.fieldLabels"), labels, t("article.labelsHint")),
    h("button", { type: "submit", class: "primary" }, t("article.fromUrlCreate")),
    out,
  );
  main.append(form);
}

export function newArticlePage(main: HTMLElement): void {
  main.append(heading(t("article.newTitle")));
  if (!canWrite()) {
    main.append(readOnlyNote());
    return;
  }
  main.append(
    articleForm(undefined, t("article.create"), async (body) => {
      const r = await call<{ id: string }>("POST", "/api/articles", { body });
      go(`#/article/${encodeURIComponent(r.id)}?created=1`);
    }),
  );
}

/** The platform's player script, loaded once per tab from the gateway itself (script-src 'self'). */
let playerScript: Promise<void> | undefined;
export function loadPlayer(): Promise<void> {
  playerScript ??= new Promise<void>((resolve, reject) => {
    const script = h("script", {
      src: "/player/v1/player.js",
      onload: () => resolve(),
      onerror: () => {
        playerScript = undefined;
        reject(new Error("/player/v1/player.js did not load"));
      },
    });
    document.head.append(script);
  });
  return playerScript;
}

function audioBlock(a: Article, textDrawn: Promise<void>): HTMLElement {
  if (a.status !== "ready" || !a.audio) return h("p", { class: "empty" }, t("article.noAudio"));
  // The project's own player, as listeners hear it; editors' plays count as the console's in the
  // statistics' split by source. The full audio reads along in the text below (drawn before the player
  // looks for it); the preview, a shortened reading, does not.
  const slots: Array<[HTMLElement, string, string]> = [
    [h("figure", null, h("figcaption", null, t("article.full", { d: fmtDuration(a.audio_duration) }))), "audio-full", "full"],
    [h("figure", null, h("figcaption", null, t("article.preview", { d: fmtDuration(a.audio_preview_duration) }))), "audio-preview", "preview"],
  ];
  const box = h("div", { class: "audio" }, ...slots.map(([figure]) => figure));
  // The players go in once the key is known, with every attribute set: one lookup each.
  void Promise.all([call<{ publicKey: string }>("GET", "/api/player"), loadPlayer(), textDrawn])
    .then(([player]) => {
      for (const [figure, id, which] of slots) {
        const el = document.createElement("article-audio-player");
        const reading = which === "full" ? { "article-text": "#article-text" } : { "read-along": "off" };
        for (const [k, v] of Object.entries({ id, key: player.publicKey, "article-id": a.id, audio: which, source: "console", ...reading })) el.setAttribute(k, v);
        figure.append(el);
      }
    })
    .catch((e: unknown) => box.append(notice(e)));
  return box;
}

interface Segment {
  kind: "title" | "heading" | "paragraph";
  text: string;
}

/** A paragraph of the article: a heading (marked by extraction with U+2002/U+2003) or running text. */
const block = (text: string, heading = /^[\u2002\u2003]/.test(text)) => h(heading ? "h3" : "p", null, text.trim());

/** The paragraphs of an article's own text, split as the audio service splits them (blank lines, else lines); HTML read as text. */
function textBlocks(text: string): HTMLElement[] {
  if (/<\/?(p|h[1-6]|div|br|article|section)\b/i.test(text)) {
    // Sent as HTML (parse: true): its blocks' text, from an inert document (nothing runs or loads).
    const doc = new DOMParser().parseFromString(text, "text/html");
    return [...doc.body.querySelectorAll("h2,h3,h4,p,li,blockquote")].filter((e) => e.textContent?.trim()).map((e) => block(e.textContent!, /^H[23]$/.test(e.tagName)));
  }
  const raw = text.replace(/\r\n?/g, "\n");
  return (/\n[^\S\n]*\n/.test(raw) ? raw.split(/\n[^\S\n]*\n/) : raw.split("\n")).filter((p) => p.trim()).map((p) => block(p));
}

/**
 * The article's text. A ready revision with timed segments is shown from them, paragraph by paragraph
 * as it is heard, so the platform's player (read-along, article-text="#article-text") finds each
 * sentence on the page and highlights it while it plays: the same data and the same code as on a
 * publisher's page. Otherwise the article's own text, split as the audio service splits it.
 */
async function drawText(a: Article, into: HTMLElement): Promise<void> {
  let segs: Segment[] = [];
  if (a.status === "ready") {
    try {
      segs = (await call<{ segments?: Segment[] }>("GET", `/api/articles/${encodeURIComponent(a.id)}/segments`)).segments ?? [];
    } catch {
      /* a revision rendered before segments existed (404): its own text then */
    }
  }
  const blocks = segs.length ? segs.filter((s) => s.kind !== "title").map((s) => block(s.text, s.kind === "heading")) : textBlocks(a.text);
  clear(into, ...blocks);
}

/** When the article was published (its `published`, where the API gives one), else when it was added. */
function publishedOf(a: Article): number {
  const p = a.published;
  if (typeof p === "number") return p;
  const ms = typeof p === "string" ? Date.parse(p) : NaN;
  return Number.isFinite(ms) ? ms / 1000 : a.added;
}

export async function articlePage(main: HTMLElement, route: Route): Promise<void> {
  const gen = generation;
  const id = route.path[1] ?? "";
  const body = h("div", { "aria-busy": "true" }, loading());
  main.append(h("p", { class: "crumbs" }, h("a", { href: "#/articles" }, t("article.back"))), body);
  let a: Article;
  try {
    a = (await call<{ article: Article }>("GET", `/api/articles/${encodeURIComponent(id)}`)).article;
  } catch (e) {
    if (stillCurrent(gen)) clear(body, heading(t("article.title")), notice(e));
    return;
  }
  if (!stillCurrent(gen)) return;
  body.removeAttribute("aria-busy");
  const statusLine = h("p", { class: "status-line", id: "status-line", "aria-live": "polite" });
  const setStatus = (s: string) => clear(statusLine, t("article.status"), " ", badge(s), s === "ready" || SETTLED.has(s) ? null : h("span", { class: "spinner", "aria-hidden": "true" }));
  setStatus(a.status);
  const errors = h("div");
  const drawErrors = (x: Article) =>
    clear(
      errors,
      x.status === "errored" && x.errors?.length
        ? [h("h2", null, t("article.errors")), h("ul", { class: "errors" }, ...x.errors.map((er) => h("li", null, h("time", { datetime: er.date }, new Date(er.date).toLocaleString()), " — ", er.error)))]
        : null,
    );
  drawErrors(a);
  const text = h("div", { id: "article-text", class: "article-text", lang: a.lang });
  let textDrawn = drawText(a, text);
  const source = a.url ? h("a", { href: a.url, rel: "noopener noreferrer", id: "article-source" }, a.url) : null;
  const textSection = h(
    "section",
    { class: "text", "aria-labelledby": "text-h" },
    h("h2", { id: "text-h" }, t("article.text")),
    h(
      "p",
      { class: "byline" },
      t("article.published", { date: fmtDate(publishedOf(a)) }),
      source ? [" · ", t("article.source"), " ", source] : null,
    ),
    text,
  );
  const facts = h(
    "dl",
    { class: "facts" },
    h("dt", null, t("col.id")),
    h("dd", { class: "mono" }, a.id),
    h("dt", null, t("col.externalId")),
    h("dd", { class: "mono" }, a.externalId ?? "–"),
    h("dt", null, t("article.fieldVoice")),
    h("dd", null, `${a.voice} (${a.lang})`),
    h("dt", null, t("col.labels")),
    h("dd", null, (a.labels ?? []).join(", ") || "–"),
    h("dt", null, t("col.updated")),
    h("dd", null, fmtDate(a.updated ?? a.added)),
  );
  const actions = h("div", { class: "actions" }, h("a", { class: "button", href: `#/stats?article=${encodeURIComponent(a.id)}` }, t("article.stats")));
  const editOut = h("div");
  if (canWrite() && a.status !== "deleted") {
    actions.append(
      h(
        "button",
        {
          type: "button",
          id: "regenerate",
          onclick: async () => {
            try {
              await call("PUT", `/api/articles/${encodeURIComponent(a.id)}`, { body: { title: a.title, text: a.text } });
              go(`#/article/${encodeURIComponent(a.id)}?t=${Date.now()}`);
            } catch (e) {
              clear(editOut, notice(e));
            }
          },
        },
        t("article.regenerate"),
      ),
      h(
        "button",
        {
          type: "button",
          class: "danger",
          id: "delete",
          onclick: async () => {
            if (!(await confirmDialog(t("article.deleteConfirm", { title: a.title }), t("article.delete")))) return;
            try {
              await call("DELETE", `/api/articles/${encodeURIComponent(a.id)}`);
              go("#/articles");
            } catch (e) {
              clear(editOut, notice(e));
            }
          },
        },
        t("article.delete"),
      ),
    );
  } else if (!canWrite()) actions.append(readOnlyNote());
  const edit =
    canWrite() && a.status !== "deleted"
      ? h(
          "details",
          { class: "edit" },
          h("summary", null, t("article.edit")),
          articleForm(a, t("article.save"), async (b, out) => {
            await call("PUT", `/api/articles/${encodeURIComponent(a.id)}`, { body: b });
            clear(out, notice(t("article.saved"), "ok"));
            go(`#/article/${encodeURIComponent(a.id)}?t=${Date.now()}`);
          }),
        )
      : null;
  // The player right after the status: two Tabs from the heading (where a route change puts focus) to Play.
  const audio = h("div", null, audioBlock(a, textDrawn));
  clear(body, heading(a.title), statusLine, audio, actions, editOut, errors, textSection, facts, edit);

  // Polls while the audio is being made: 1 s, then slower, never more than one call in flight.
  let delay = 1000;
  let status = a.status;
  while (!SETTLED.has(status) && stillCurrent(gen)) {
    await new Promise((r) => setTimeout(r, delay));
    if (!stillCurrent(gen)) return;
    if (document.hidden) continue;
    delay = Math.min(10_000, Math.round(delay * 1.3));
    try {
      const x = (await call<{ article: Article }>("GET", `/api/articles/${encodeURIComponent(a.id)}`)).article;
      if (!stillCurrent(gen)) return;
      if (x.status !== status) {
        // Created from a URL: its page has been read, and its title, text and address are the page's now.
        if (status === "recrawling" && !a.text) {
          go(`#/article/${encodeURIComponent(a.id)}?t=${Date.now()}`);
          return;
        }
        status = x.status;
        setStatus(status);
        textDrawn = drawText(x, text);
        clear(audio, audioBlock(x, textDrawn));
        drawErrors(x);
      }
    } catch (e) {
      if (e instanceof ApiError && e.status === 429) delay = Math.max(delay, (e.retryAfter ?? 1) * 1000);
      else if (stillCurrent(gen)) clear(editOut, notice(errorText(e)));
    }
  }
}
