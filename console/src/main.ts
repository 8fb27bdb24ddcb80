// The publisher console: a shell (navigation, language, theme, sign-out) and
// pages chosen by the URL's fragment (#/articles, #/article/<id>, …). Every
// page reads and writes through the public REST API with the tab's token.
import "./style.css";
import "uplot/dist/uPlot.min.css";
import { session, setUnauthorizedHandler, tokenInfo, ApiError } from "./api.js";
import { clear, field, h } from "./dom.js";
import { LANGS, lang, pickLang, setLang, t, type Lang } from "./i18n.js";
import { articlePage, articlesPage, newArticlePage } from "./pages/articles.js";
import { importPage } from "./pages/import.js";
import { playerPage } from "./pages/player.js";
import { pronunciationsPage } from "./pages/pronunciations.js";
import { errorText, heading, notice } from "./ui.js";
import { go, nextGeneration, setRerender, stillCurrent, type Route } from "./nav.js";

type Page = (main: HTMLElement, route: Route) => Promise<void> | void;

const pages: Record<string, Page> = {
  articles: articlesPage,
  article: articlePage,
  new: newArticlePage,
  pronunciations: pronunciationsPage,
  // The charts (and uPlot) are a chunk of their own, loaded on the first visit.
  stats: async (main, route) => (await import("./pages/stats.js")).statsPage(main, route),
  player: playerPage,
  import: importPage,
};

const NAV: Array<[string, Parameters<typeof t>[0]]> = [
  ["articles", "nav.articles"],
  ["pronunciations", "nav.pronunciations"],
  ["stats", "nav.stats"],
  ["player", "nav.player"],
  ["import", "nav.import"],
];

let signInMessage = "";

function parseRoute(): Route {
  const raw = location.hash.replace(/^#\/?/, "");
  const [p, q] = raw.split("?");
  return { path: (p || "articles").split("/").map(decodeURIComponent), query: new URLSearchParams(q ?? "") };
}

function applyTheme(): void {
  const th = localStorage.getItem("console.theme") ?? "system";
  if (th === "system") delete document.documentElement.dataset.theme;
  else document.documentElement.dataset.theme = th;
}

function controls(): HTMLElement {
  const langSel = h(
    "select",
    {
      id: "lang-switch",
      onchange: (e: Event) => {
        setLang((e.target as HTMLSelectElement).value as Lang, true);
        void render();
      },
    },
    ...Object.keys(LANGS).map((l) => h("option", { value: l, selected: l === lang() }, t(`lang.${l}` as Parameters<typeof t>[0]))),
  );
  const theme = localStorage.getItem("console.theme") ?? "system";
  const themeSel = h(
    "select",
    {
      id: "theme-switch",
      onchange: (e: Event) => {
        localStorage.setItem("console.theme", (e.target as HTMLSelectElement).value);
        applyTheme();
      },
    },
    ...["system", "light", "dark"].map((v) => h("option", { value: v, selected: v === theme }, t(`theme.${v}` as Parameters<typeof t>[0]))),
  );
  return h("div", { class: "prefs" }, field(t("prefs.language"), langSel), field(t("prefs.theme"), themeSel));
}

function signIn(root: HTMLElement): void {
  const input = h("input", { type: "password", id: "token", name: "token", autocomplete: "off", spellcheck: "false", required: true });
  const status = h("div", { class: "signin-status", "aria-live": "polite" });
  if (signInMessage) status.append(notice(signInMessage));
  const form = h(
    "form",
    {
      class: "signin",
      onsubmit: async (e: Event) => {
        e.preventDefault();
        const token = input.value.trim();
        if (!token) return;
        const btn = form.querySelector("button") as HTMLButtonElement;
        btn.disabled = true;
        clear(status, h("p", { role: "status" }, t("auth.checking")));
        try {
          const { scope, project } = await tokenInfo(token);
          session.set(token, scope, project);
          signInMessage = "";
          input.value = "";
          if (!location.hash || location.hash === "#/signin") location.hash = "#/articles";
          await render();
        } catch (err) {
          clear(status, notice(err instanceof ApiError && err.status === 401 ? t("auth.invalid", { message: err.message }) : errorText(err)));
          btn.disabled = false;
          input.focus();
        }
      },
    },
    field(t("auth.token"), input, t("auth.tokenHint")),
    h("button", { type: "submit", class: "primary" }, t("auth.signIn")),
    status,
  );
  clear(
    root,
    h("header", { class: "top" }, h("p", { class: "brand" }, t("app.name")), controls()),
    h("main", { id: "main", class: "narrow" }, heading(t("auth.title")), h("p", null, t("auth.intro")), form),
  );
  input.focus();
}

async function render(): Promise<void> {
  const gen = nextGeneration();
  const root = document.getElementById("app")!;
  document.title = t("app.name");
  if (!session.token) return signIn(root);
  const route = parseRoute();
  const name = route.path[0] in pages ? route.path[0] : "articles";
  const main = h("main", { id: "main", tabindex: "-1" });
  const navList = h(
    "ul",
    null,
    ...NAV.map(([p, key]) => h("li", null, h("a", { href: `#/${p}`, "aria-current": p === name || (p === "articles" && (name === "article" || name === "new")) ? "page" : false }, t(key)))),
  );
  clear(
    root,
    h("a", { class: "skip", href: "#main", onclick: (e: Event) => (e.preventDefault(), main.focus()) }, t("nav.skip")),
    h(
      "header",
      { class: "top" },
      h("p", { class: "brand" }, t("app.name")),
      h("nav", { "aria-label": t("nav.label") }, navList),
      h(
        "div",
        { class: "session" },
        h("span", { class: `scope scope-${session.scope}`, title: session.project ?? false }, session.scope === "full" ? t("auth.scopeFull") : t("auth.scopeRead")),
        controls(),
        h(
          "button",
          {
            type: "button",
            id: "sign-out",
            onclick: () => {
              session.clear();
              signInMessage = t("auth.signedOut");
              location.hash = "#/signin";
              void render();
            },
          },
          t("auth.signOut"),
        ),
      ),
    ),
    main,
  );
  try {
    await pages[name](main, route);
  } catch (e) {
    if (stillCurrent(gen)) main.append(notice(errorText(e)));
  }
  if (stillCurrent(gen)) {
    const title = main.querySelector("h1");
    if (title) document.title = `${title.textContent} – ${t("app.name")}`;
  }
}

setUnauthorizedHandler((message) => {
  session.clear();
  signInMessage = t("auth.expired", { message });
  void render();
});

setRerender(() => void render());
setLang(pickLang());
applyTheme();
window.addEventListener("hashchange", () => void render());
void render();
