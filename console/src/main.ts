// The publisher console: a shell (navigation, language, theme, sign-out) and
// pages chosen by the URL's fragment (#/articles, #/article/<id>, …). Every
// page reads and writes through the public REST API with the tab's token.
import "./style.css";
import "uplot/dist/uPlot.min.css";
import { session, setUnauthorizedHandler, tokenInfo, ApiError } from "./api.js";
import { clear, field, h } from "./dom.js";
import { LANGS, lang, pickLang, setLang, t, type Lang } from "./i18n.js";
import { articlePage, articlesPage, newArticlePage, newFromUrlPage } from "./pages/articles.js";
import { importPage } from "./pages/import.js";
import { playerPage } from "./pages/player.js";
import { pronunciationsPage } from "./pages/pronunciations.js";
import { sourcesPage } from "./pages/sources.js";
import { errorText, heading, labelTableCells, notice } from "./ui.js";
import { go, nextGeneration, setRerender, stillCurrent, type Route } from "./nav.js";

type Page = (main: HTMLElement, route: Route) => Promise<void> | void;

const pages: Record<string, Page> = {
  articles: articlesPage,
  article: articlePage,
  new: newArticlePage,
  "new-url": newFromUrlPage,
  pronunciations: pronunciationsPage,
  sources: sourcesPage,
  // The charts (and uPlot) are a chunk of their own, loaded on the first visit.
  stats: async (main, route) => (await import("./pages/stats.js")).statsPage(main, route),
  player: playerPage,
  // The designer is a chunk of its own too: most visits never open it.
  design: async (main) => (await import("./pages/design.js")).designPage(main),
  import: importPage,
};

const NAV: Array<[string, Parameters<typeof t>[0]]> = [
  ["articles", "nav.articles"],
  ["pronunciations", "nav.pronunciations"],
  ["stats", "nav.stats"],
  ["player", "nav.player"],
  ["design", "nav.design"],
  ["import", "nav.import"],
  ["sources", "nav.sources"],
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
        // The page is drawn again in the new language; focus stays on the switch (arrow keys keep choosing).
        void render("lang-switch");
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
    topHeader(controls()),
    h("main", { id: "main", class: "narrow" }, heading(t("auth.title")), h("p", null, t("auth.intro")), form),
  );
  input.focus();
}

/**
 * The signed-in frame: skip link, header (navigation, session, preferences; behind a menu button on
 * a phone) and <main>. Built once per sign-in and language, so a route change replaces only <main>
 * and the header keeps its state; `lang` tells when the language changed under it.
 */
let shell: { lang: Lang; links: Map<string, HTMLAnchorElement> } | undefined;
/** The header's menu (on a phone: behind its button), signed in or not. */
let menuOf: { menu: HTMLElement; toggle: HTMLButtonElement } | undefined;

function setMenu(open: boolean): void {
  if (!menuOf) return;
  menuOf.toggle.setAttribute("aria-expanded", String(open));
  menuOf.menu.classList.toggle("open", open);
}

/** The header: the console's name and, on a phone, a Menu button for the rest (Escape closes it and gives focus back). */
function topHeader(...content: HTMLElement[]): HTMLElement {
  const toggle = h("button", { type: "button", class: "menu-toggle", id: "menu-toggle", "aria-expanded": "false", "aria-controls": "site-menu", onclick: () => setMenu(toggle.getAttribute("aria-expanded") !== "true") }, t("nav.menu"));
  const menu = h(
    "div",
    {
      class: "site-menu",
      id: "site-menu",
      onkeydown: (e: KeyboardEvent) => {
        if (e.key === "Escape" && menu.classList.contains("open")) {
          setMenu(false);
          toggle.focus();
        }
      },
    },
    ...content,
  );
  menuOf = { menu, toggle };
  return h("header", { class: "top" }, h("div", { class: "bar" }, h("p", { class: "brand" }, t("app.name")), toggle), menu);
}

function buildShell(root: HTMLElement): NonNullable<typeof shell> {
  const links = new Map<string, HTMLAnchorElement>();
  const navList = h("ul", null, ...NAV.map(([p, key]) => h("li", null, links.set(p, h("a", { href: `#/${p}`, onclick: () => setMenu(false) }, t(key))).get(p)!)));
  const header = topHeader(
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
  );
  clear(
    root,
    h("a", { class: "skip", href: "#main", onclick: (e: Event) => (e.preventDefault(), focusHeading(document.getElementById("main")!)) }, t("nav.skip")),
    header,
    h("main", { id: "main", tabindex: "-1" }),
  );
  return { lang: lang(), links };
}

/** Focus on the page's heading (or <main> when it has none). */
function focusHeading(main: HTMLElement): void {
  const title = main.querySelector<HTMLElement>("h1");
  (title ?? main).focus({ preventScroll: false });
}

/**
 * When the page's heading is drawn (at once, or after its first request): the document's title,
 * focus on the heading (unless `keep` holds the element that should keep it) and the page named in
 * the polite live region, so a screen reader hears where it landed.
 */
function arrive(main: HTMLElement, gen: number, keep?: string): void {
  let titled = false;
  const watch = new MutationObserver(() => step());
  const step = () => {
    if (!stillCurrent(gen)) return watch.disconnect();
    const title = main.querySelector<HTMLElement>("h1");
    if (!title) return;
    if (!titled) {
      titled = true;
      document.title = `${title.textContent} – ${t("app.name")}`;
      title.focus();
      announce(t("nav.arrived", { title: title.textContent ?? "" }));
    }
    // The control just used (a filter, the pager, the language switch) gets focus back once it is
    // drawn again (with the page's first answer, for the pager), unless the user has moved on.
    const keeper = keep ? document.getElementById(keep) : null;
    if (keeper && (document.activeElement === title || document.activeElement === document.body)) keeper.focus();
    if (!keep || keeper) watch.disconnect();
  };
  watch.observe(main, { childList: true, subtree: true });
  step();
}

/** One polite live region for the whole session, outside the redrawn parts, so it is never replaced while speaking. */
function announce(text: string): void {
  let region = document.getElementById("announcer");
  if (!region) document.body.append((region = h("div", { id: "announcer", class: "sr-only", role: "status", "aria-live": "polite", "aria-atomic": "true" })));
  region.textContent = "";
  // A change after a frame: some screen readers skip text that is set in the same task as a clear.
  requestAnimationFrame(() => (region!.textContent = text));
}

let lastPath = "";

/** Draws the current route; `keep`: the id of an element that keeps focus (the control just used). */
async function render(keep?: string): Promise<void> {
  const gen = nextGeneration();
  const root = document.getElementById("app")!;
  document.title = t("app.name");
  // Drawn again for the control just used (the language switch): a phone's menu stays open around it.
  const reopen = keep !== undefined && !!menuOf?.menu.classList.contains("open");
  if (!session.token) {
    shell = undefined;
    signIn(root);
    setMenu(reopen);
    if (keep) document.getElementById(keep)?.focus();
    announce(t("nav.arrived", { title: t("auth.title") }));
    return;
  }
  const route = parseRoute();
  const name = route.path[0] in pages ? route.path[0] : "articles";
  // The same page with another query (a filter, the page size, the pager): focus stays on the control used.
  const path = route.path.join("/");
  const used = document.activeElement?.closest("main") ? document.activeElement.id : "";
  if (keep === undefined && path === lastPath && used) keep = used;
  lastPath = path;
  if (!shell || shell.lang !== lang()) shell = buildShell(root);
  setMenu(reopen);
  for (const [p, a] of shell.links) {
    if (p === name || (p === "articles" && (name === "article" || name === "new" || name === "new-url"))) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
  // A new <main> per route: a page that finishes after the user left draws into a detached one.
  const main = h("main", { id: "main", tabindex: "-1" });
  document.getElementById("main")!.replaceWith(main);
  arrive(main, gen, keep);
  try {
    await pages[name](main, route);
  } catch (e) {
    if (stillCurrent(gen)) main.append(notice(errorText(e)));
  }
}

setUnauthorizedHandler((message) => {
  session.clear();
  signInMessage = t("auth.expired", { message });
  void render();
});

setRerender(() => void render());
labelTableCells(document.getElementById("app")!);
setLang(pickLang());
applyTheme();
window.addEventListener("hashchange", () => void render());
void render();
