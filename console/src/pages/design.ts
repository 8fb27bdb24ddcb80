// Player design (#/design, a chunk of its own): the project's player look (PUT /api/player
// `look`), checked for contrast as it is chosen, previewed live in the real player on the
// project's newest ready article, with the snippet that needs no change when the look does.
import { checkContrast, completeLook, CONTROLS, MIN_CONTROL_CONTRAST, MIN_TEXT_CONTRAST, resolveLook, type PlayerLook } from "../../../lib/player-look.js";
import { call } from "../api.js";
import { clear, field, h } from "../dom.js";
import { fmtNumber, t } from "../i18n.js";
import { generation, stillCurrent } from "../nav.js";
import { canWrite, heading, loading, notice, readOnlyNote } from "../ui.js";
import { loadPlayer } from "./articles.js";

interface PlayerInfo {
  publicKey: string;
  snippet: string;
  settings: { feed?: unknown; oembed?: unknown; look?: Partial<PlayerLook> };
}

export async function designPage(main: HTMLElement): Promise<void> {
  const gen = generation;
  const body = h("div", { "aria-busy": "true" }, loading());
  main.append(heading(t("design.title")), body);
  let p: PlayerInfo;
  let sample: { id: string } | undefined;
  try {
    [p, sample] = await Promise.all([
      call<PlayerInfo>("GET", "/api/player"),
      call<{ articles: Array<{ id: string }> }>("GET", "/api/articles?status=ready&limit=10").then((r) => r.articles[0]),
    ]);
  } catch (e) {
    if (stillCurrent(gen)) clear(body, notice(e));
    return;
  }
  if (!stillCurrent(gen)) return;
  body.removeAttribute("aria-busy");
  draw(body, p, sample?.id);
}

/** A colour setting: a picker, and "built-in" to leave it to the scheme. */
function colourField(id: string, label: string, value: string | null, fallback: string, onchange: () => void, disabled: boolean) {
  const picker = h("input", { id, type: "color", value: value ?? fallback, disabled: disabled || value === null, oninput: onchange });
  const builtIn = h("input", {
    id: `${id}-builtin`,
    type: "checkbox",
    checked: value === null,
    disabled,
    onchange: () => {
      picker.disabled = disabled || builtIn.checked;
      onchange();
    },
  });
  const el = h("div", { class: "field colour" }, h("label", { for: id }, label), h("div", { class: "row" }, picker, h("span", { class: "check" }, builtIn, h("label", { for: builtIn.id }, t("design.builtIn")))));
  return { el, value: () => (builtIn.checked ? null : picker.value) };
}

function draw(body: HTMLElement, p: PlayerInfo, articleId: string | undefined): void {
  const write = canWrite();
  const current = completeLook(p.settings.look);
  const out = h("div", { "aria-live": "polite", class: "form-status" });
  const update = () => refresh();
  const accent = colourField("look-accent", t("design.accent"), current.accent, "#1a73e8", update, !write);
  const background = colourField("look-background", t("design.background"), current.background, "#f4f4f6", update, !write);
  const scheme = h("select", { id: "look-scheme", disabled: !write, onchange: update }, ...(["auto", "light", "dark"] as const).map((s) => h("option", { value: s, selected: current.scheme === s }, t(`design.scheme.${s}`))));
  const layout = h("select", { id: "look-layout", disabled: !write, onchange: update }, ...(["full", "compact"] as const).map((l) => h("option", { value: l, selected: current.layout === l }, t(`design.layout.${l}`))));
  const shown = Object.fromEntries(CONTROLS.map((c) => [c, h("input", { id: `look-control-${c}`, type: "checkbox", checked: current.controls[c], disabled: !write, onchange: update })]));
  const radius = h("input", { id: "look-radius", type: "range", min: "0", max: "24", step: "1", value: String(current.radius), disabled: !write, oninput: update });
  const radiusOut = h("output", { for: "look-radius", id: "look-radius-out" });
  const checks = h("div", { id: "contrast", role: "status", "aria-live": "polite" });
  const save = h("button", { type: "submit", class: "primary", id: "save-look" }, t("design.save"));
  const preview = h("div", { class: "design-preview", id: "design-preview" });
  let player: HTMLElement | undefined;

  const look = (): PlayerLook =>
    completeLook({
      accent: accent.value(),
      background: background.value(),
      scheme: scheme.value as PlayerLook["scheme"],
      layout: layout.value as PlayerLook["layout"],
      controls: Object.fromEntries(CONTROLS.map((c) => [c, shown[c].checked])) as PlayerLook["controls"],
      radius: Number(radius.value),
    });

  function refresh(): void {
    const l = look();
    radiusOut.textContent = `${l.radius} px`;
    const results = checkContrast(l);
    const ratio = (n: number, min: number) => h("span", { class: n >= min ? "pass" : "fail" }, `${fmtNumber(n, 2)}:1 ${n >= min ? t("design.pass") : t("design.fail", { min: fmtNumber(min) })}`);
    clear(
      checks,
      h("table", { class: "contrast" },
        h("caption", null, t("design.contrast")),
        h("thead", null, h("tr", null, h("th", { scope: "col" }, t("design.schemeCol")), h("th", { scope: "col" }, t("design.textCol")), h("th", { scope: "col" }, t("design.iconCol")), h("th", { scope: "col" }, t("design.accentCol")))),
        h("tbody", null, ...results.map((r) => h("tr", { "data-scheme": r.scheme, "data-ok": String(r.ok) }, h("th", { scope: "row" }, t(`design.scheme.${r.scheme}`)), h("td", null, ratio(r.text, MIN_TEXT_CONTRAST)), h("td", null, ratio(r.icon, MIN_TEXT_CONTRAST)), h("td", null, ratio(r.accent, MIN_CONTROL_CONTRAST))))),
      ),
    );
    save.disabled = !results.every((r) => r.ok);
    player?.setAttribute("look", JSON.stringify(resolveLook(l)));
  }

  if (articleId) {
    void loadPlayer()
      .then(() => {
        player = document.createElement("article-audio-player");
        for (const [k, v] of Object.entries({ key: p.publicKey, "article-id": articleId, source: "console", "read-along": "off", look: JSON.stringify(resolveLook(look())) })) player.setAttribute(k, v);
        preview.replaceChildren(player);
      })
      .catch((e: unknown) => preview.replaceChildren(notice(e)));
  } else preview.append(h("p", { class: "empty" }, t("design.noArticle")));

  const submit = async (e: Event) => {
    e.preventDefault();
    clear(out, h("p", { role: "status" }, t("common.saving")));
    try {
      // PUT replaces the whole settings document: the feed and oEmbed settings go back as they are.
      const np = await call<PlayerInfo>("PUT", "/api/player", { body: { feed: p.settings.feed, oembed: p.settings.oembed, look: look() } });
      p.settings = np.settings;
      clear(out, notice(t("design.saved"), "ok"));
    } catch (err) {
      clear(out, notice(err));
    }
  };

  clear(
    body,
    h("p", null, t("design.intro")),
    write ? null : readOnlyNote(),
    h(
      "div",
      { class: "design" },
      h(
        "form",
        { class: "settings", id: "design-form", novalidate: true, onsubmit: submit },
        accent.el,
        background.el,
        field(t("design.scheme"), scheme),
        field(t("design.layout"), layout),
        h("fieldset", null, h("legend", null, t("design.controls")), ...CONTROLS.map((c) => h("div", { class: "field check" }, shown[c], h("label", { for: shown[c].id }, t(`design.control.${c}`))))),
        h("div", { class: "field" }, h("label", { for: "look-radius" }, t("design.radius")), h("div", { class: "row" }, radius, radiusOut)),
        checks,
        write ? save : null,
        out,
      ),
      h("section", { class: "chart-card", "aria-labelledby": "preview-h" }, h("h2", { id: "preview-h" }, t("design.preview")), preview),
    ),
    h("h2", null, t("design.snippet")),
    h("p", null, t("design.snippetIntro")),
    h("pre", { class: "snippet", tabindex: "0", "aria-label": t("player.snippet") }, h("code", null, p.snippet)),
  );
  refresh();
}
