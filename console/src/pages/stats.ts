// Statistics as charts (this module and uPlot are a lazily loaded chunk):
// GET /api/stats or /api/articles/{id}/stats for a date range; every chart has
// its data as a table beside it.
import uPlot from "uplot";
import { call } from "../api.js";
import { clear, field, h, uid } from "../dom.js";
import { fmtNumber, t } from "../i18n.js";
import { generation, go, stillCurrent, type Route } from "../nav.js";
import { heading, loading, notice } from "../ui.js";

interface Figures {
  impressions: number;
  plays: number;
  progress25: number;
  progress50: number;
  progress75: number;
  completions: number;
  listenThroughRate: number;
  secondsListened: number;
  downloads: number;
}
const SOURCES = ["player", "embed", "console", "podcast"] as const;
interface Report {
  from: string;
  to: string;
  total: Figures;
  days: Array<{ day: string } & Figures>;
  bySource: Record<(typeof SOURCES)[number], Figures>;
  /** Project reports: the top articles, each with its title (null: the article no longer exists). */
  articles?: Array<{ articleId: string; title?: string | null } & Figures>;
}

const iso = (d: Date) => d.toISOString().slice(0, 10);

function css(name: string): string {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim() || "#888";
}

const ZERO: Figures = { impressions: 0, plays: 0, progress25: 0, progress50: 0, progress75: 0, completions: 0, listenThroughRate: 0, secondsListened: 0, downloads: 0 };

/** Every day of the range, days without events as zeros (the answer may leave them out). */
function everyDay(r: Report): Report["days"] {
  const by = new Map(r.days.map((d) => [d.day, d]));
  const out: Report["days"] = [];
  const end = Date.parse(`${r.to}T00:00:00Z`);
  for (let t = Date.parse(`${r.from}T00:00:00Z`); t <= end && out.length < 400; t += 86_400_000) {
    const day = iso(new Date(t));
    out.push(by.get(day) ?? { day, ...ZERO });
  }
  return out.length ? out : r.days;
}

/** Whole-number ticks for counts; none between 0 and 1. */
const COUNT_INCRS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1_000, 2_000, 5_000, 10_000, 20_000, 50_000, 100_000, 200_000, 500_000, 1_000_000, 10_000_000];

function chart(title: string, days: Report["days"], series: Array<[keyof Figures, string]>, fmt: (n: number) => string = (n) => fmtNumber(n), ratio = false): HTMLElement {
  const id = uid("chart");
  const box = h("div", { class: "chart", role: "img", "aria-label": t("stats.chartLabel", { title }) });
  const table = h(
    "table",
    { class: "chart-table" },
    h("caption", null, title),
    h("thead", null, h("tr", null, h("th", { scope: "col" }, t("stats.day")), ...series.map(([k]) => h("th", { scope: "col" }, t(`stats.${k}` as Parameters<typeof t>[0]))))),
    h("tbody", null, ...days.map((d) => h("tr", null, h("th", { scope: "row" }, d.day), ...series.map(([k]) => h("td", { class: "num", "data-key": k }, fmt(d[k] as number)))))),
  );
  const section = h(
    "section",
    { class: "chart-card", "aria-labelledby": id },
    h("h2", { id }, title),
    box,
    h("details", { class: "table-view" }, h("summary", null, t("stats.showTable", { title })), h("div", { class: "table-wrap", tabindex: "0", role: "region", "aria-label": t("stats.tableOf", { title }) }, table)),
  );
  const xs = days.map((d) => Date.parse(`${d.day}T00:00:00Z`) / 1000);
  const data: uPlot.AlignedData = [xs, ...series.map(([k]) => days.map((d) => d[k] as number))];
  const draw = () => {
    const width = Math.max(260, box.clientWidth || 600);
    box.replaceChildren();
    new uPlot(
      {
        width,
        height: 220,
        tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), "Etc/UTC"),
        legend: { show: true },
        axes: [
          { stroke: css("--fg"), grid: { stroke: css("--grid") }, ticks: { stroke: css("--grid") } },
          { stroke: css("--fg"), size: 64, grid: { stroke: css("--grid") }, ticks: { stroke: css("--grid") }, values: (_u, vals) => vals.map((v) => fmt(v)), ...(ratio ? { incrs: [0.1, 0.2, 0.25, 0.5] } : { incrs: COUNT_INCRS }) },
        ],
        scales: { y: { range: (_u, _min, max) => (ratio ? [0, 1] : [0, Math.max(1, max)]) } },
        series: [{ label: t("stats.day") }, ...series.map(([k, color]) => ({ label: t(`stats.${k}` as Parameters<typeof t>[0]), stroke: css(color), width: 2, points: { show: days.length < 40 } }))],
      },
      data,
      box,
    );
  };
  requestAnimationFrame(draw);
  let last = 0;
  new ResizeObserver(() => {
    const w = box.clientWidth;
    if (Math.abs(w - last) > 20) {
      last = w;
      requestAnimationFrame(draw);
    }
  }).observe(section);
  return section;
}

function dropOff(total: Figures): HTMLElement {
  const steps: Array<[keyof Figures, string]> = [
    ["plays", t("stats.plays")],
    ["progress25", "25 %"],
    ["progress50", "50 %"],
    ["progress75", "75 %"],
    ["completions", t("stats.completions")],
  ];
  const max = Math.max(1, total.plays);
  return h(
    "section",
    { class: "chart-card", "aria-labelledby": "dropoff-h" },
    h("h2", { id: "dropoff-h" }, t("stats.dropoff")),
    h("div", { class: "table-wrap", tabindex: "0", role: "region", "aria-label": t("stats.tableOf", { title: t("stats.dropoff") }) }, h(
      "table",
      { class: "dropoff" },
      h("caption", { class: "sr-only" }, t("stats.dropoff")),
      h("thead", null, h("tr", null, h("th", { scope: "col" }, t("stats.step")), h("th", { scope: "col" }, t("stats.listeners")), h("th", { scope: "col" }, t("stats.share")))),
      h(
        "tbody",
        null,
        ...steps.map(([k, label]) =>
          h("tr", null, h("th", { scope: "row" }, label), h("td", { class: "num" }, fmtNumber(total[k] as number)), h("td", null, h("meter", { min: "0", max: String(max), value: String(total[k]), "aria-label": label }), " ", `${fmtNumber(((total[k] as number) / max) * 100, 1)} %`)),
        ),
      ),
    )),
  );
}

/** Plays, listening time and downloads per source: where listens come from. */
function bySource(r: Report): HTMLElement {
  const title = t("stats.bySource");
  const cols = ["plays", "completions", "secondsListened", "downloads"] as const;
  return h(
    "section",
    { class: "chart-card", "aria-labelledby": "source-h" },
    h("h2", { id: "source-h" }, title),
    h("div", { class: "table-wrap", tabindex: "0", role: "region", "aria-label": t("stats.tableOf", { title }) }, h(
      "table",
      { class: "by-source" },
      h("caption", { class: "sr-only" }, title),
      h("thead", null, h("tr", null, h("th", { scope: "col" }, t("stats.source")), ...cols.map((k) => h("th", { scope: "col" }, t(`stats.${k}`))))),
      h(
        "tbody",
        null,
        ...SOURCES.map((src) => {
          const f = r.bySource?.[src] ?? ZERO;
          return h("tr", { "data-source": src }, h("th", { scope: "row" }, t(`stats.source.${src}`)), ...cols.map((k) => h("td", { class: "num", "data-key": k }, fmtNumber(f[k]))));
        }),
      ),
    )),
  );
}

export async function statsPage(main: HTMLElement, route: Route): Promise<void> {
  const gen = generation;
  const article = route.query.get("article") ?? "";
  const today = new Date();
  const to = route.query.get("to") ?? iso(today);
  const from = route.query.get("from") ?? iso(new Date(today.getTime() - 29 * 86_400_000));
  const fromIn = h("input", { type: "date", id: "stats-from", value: from, max: to });
  const toIn = h("input", { type: "date", id: "stats-to", value: to });
  const body = h("div", { "aria-busy": "true" }, loading());
  main.append(
    heading(article ? t("stats.articleTitle", { id: article }) : t("stats.title")),
    ...(article ? [h("p", { class: "crumbs" }, h("a", { href: `#/article/${encodeURIComponent(article)}` }, t("stats.backToArticle")))] : []),
    h(
      "form",
      {
        class: "filters range",
        onsubmit: (e: Event) => {
          e.preventDefault();
          const q = new URLSearchParams({ from: fromIn.value, to: toIn.value });
          if (article) q.set("article", article);
          go(`#/stats?${q}`);
        },
      },
      field(t("stats.from"), fromIn),
      field(t("stats.to"), toIn),
      h("button", { type: "submit" }, t("stats.apply")),
    ),
    body,
  );
  let r: Report;
  try {
    const q = `from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}`;
    r = await call<Report>("GET", article ? `/api/articles/${encodeURIComponent(article)}/stats?${q}` : `/api/stats?${q}`);
  } catch (e) {
    if (stillCurrent(gen)) clear(body, notice(e));
    return;
  }
  if (!stillCurrent(gen)) return;
  body.removeAttribute("aria-busy");
  const tot = r.total;
  const days = everyDay(r);
  const kpi = (label: string, value: string, id: string) => h("div", { class: "kpi" }, h("dt", null, label), h("dd", { id }, value));
  const top = (r.articles ?? []).slice().sort((a, b) => b.plays - a.plays || b.downloads - a.downloads).slice(0, 20);
  clear(
    body,
    h(
      "dl",
      { class: "kpis" },
      kpi(t("stats.impressions"), fmtNumber(tot.impressions), "kpi-impressions"),
      kpi(t("stats.plays"), fmtNumber(tot.plays), "kpi-plays"),
      kpi(t("stats.downloads"), fmtNumber(tot.downloads), "kpi-downloads"),
      kpi(t("stats.completions"), fmtNumber(tot.completions), "kpi-completions"),
      kpi(t("stats.listenThroughRate"), `${fmtNumber(tot.listenThroughRate * 100, 1)} %`, "kpi-ltr"),
      kpi(t("stats.secondsListened"), fmtNumber(tot.secondsListened), "kpi-seconds"),
    ),
    tot.impressions === 0 && tot.plays === 0 && tot.downloads === 0 ? h("p", { class: "empty" }, t("stats.empty")) : null,
    chart(
      t("stats.chartActivity"),
      days,
      [
        ["impressions", "--c1"],
        ["plays", "--c2"],
        ["completions", "--c3"],
      ],
    ),
    chart(
      t("stats.chartListens"),
      days,
      [
        ["plays", "--c2"],
        ["downloads", "--c4"],
      ],
    ),
    bySource(r),
    chart(t("stats.chartSeconds"), days, [["secondsListened", "--c4"]]),
    chart(t("stats.chartLtr"), days, [["listenThroughRate", "--c2"]], (n) => `${fmtNumber(n * 100, 1)} %`, true),
    dropOff(tot),
    article
      ? null
      : h(
          "section",
          { class: "chart-card", "aria-labelledby": "top-h" },
          h("h2", { id: "top-h" }, t("stats.top")),
          top.length
            ? h("div", { class: "table-wrap", tabindex: "0", role: "region", "aria-label": t("stats.tableOf", { title: t("stats.top") }) }, h(
                "table",
                { class: "top" },
                h("caption", { class: "sr-only" }, t("stats.top")),
                h("thead", null, h("tr", null, ...(["stats.article", "stats.plays", "stats.downloads", "stats.completions", "stats.listenThroughRate", "stats.secondsListened"] as const).map((k) => h("th", { scope: "col" }, t(k))))),
                h(
                  "tbody",
                  null,
                  ...top.map((a) =>
                    h(
                      "tr",
                      null,
                      h("th", { scope: "row" }, h("a", { href: `#/stats?article=${encodeURIComponent(a.articleId)}&from=${from}&to=${to}`, title: a.articleId }, a.title || a.articleId)),
                      h("td", { class: "num" }, fmtNumber(a.plays)),
                      h("td", { class: "num" }, fmtNumber(a.downloads)),
                      h("td", { class: "num" }, fmtNumber(a.completions)),
                      h("td", { class: "num" }, `${fmtNumber(a.listenThroughRate * 100, 1)} %`),
                      h("td", { class: "num" }, fmtNumber(a.secondsListened)),
                    ),
                  ),
                ),
              ))
            : h("p", { class: "empty" }, t("stats.noTop")),
        ),
  );
}
