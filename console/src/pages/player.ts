// Player and feeds: GET/PUT /api/player, POST /api/player/verify and /rotate.
import { call } from "../api.js";
import { clear, field, h } from "../dom.js";
import { t, type MessageKey } from "../i18n.js";
import { generation, go, stillCurrent } from "../nav.js";
import { canWrite, confirmDialog, heading, loading, notice, readOnlyNote } from "../ui.js";

interface Feed {
  enabled?: boolean;
  title?: string;
  description?: string;
  imageUrl?: string;
  author?: string;
  ownerEmail?: string;
  category?: string;
  explicit?: boolean;
  language?: string;
}
interface PlayerInfo {
  publicKey: string;
  snippet: string;
  scriptUrl: string;
  feedUrl: string;
  feedLanguage?: string;
  settings: { feed?: Feed; oembed?: { enabled?: boolean; hosts?: string[] }; look?: Record<string, unknown> };
  warnings?: Array<{ setting: string; message: string }>;
  oembedHosts?: Array<{ host: string; status: string; reason: string | null; checkedAt: string | null; verificationUrl: string }>;
}

export async function playerPage(main: HTMLElement): Promise<void> {
  const gen = generation;
  const body = h("div", { "aria-busy": "true" }, loading());
  main.append(heading(t("player.title")), body);
  let p: PlayerInfo;
  try {
    p = await call<PlayerInfo>("GET", "/api/player");
  } catch (e) {
    if (stillCurrent(gen)) clear(body, notice(e));
    return;
  }
  if (!stillCurrent(gen)) return;
  body.removeAttribute("aria-busy");
  draw(body, p);
}

/** The settings the feed check names, as the form's field and a sentence of this console's language. */
const WARNINGS: Record<string, { field: "imageUrl" | "ownerEmail" | "category"; label: MessageKey; says: MessageKey }> = {
  "feed.imageUrl": { field: "imageUrl", label: "player.feedImage", says: "player.warn.imageUrl" },
  "feed.ownerEmail": { field: "ownerEmail", label: "player.feedOwner", says: "player.warn.ownerEmail" },
  "feed.category": { field: "category", label: "player.feedCategory", says: "player.warn.category" },
};

/**
 * One thing the feed lacks, as a sentence with a button to the field that fixes it (the API's own
 * words for a setting this console does not know yet), never the setting's key.
 */
function warning(w: { setting: string; message: string }, fields: Record<"imageUrl" | "ownerEmail" | "category", HTMLInputElement>): HTMLElement {
  const known = WARNINGS[w.setting];
  if (!known) return h("li", { "data-setting": w.setting }, w.message);
  const input = fields[known.field];
  return h(
    "li",
    { "data-setting": w.setting },
    t(known.says, { value: input.value.trim() }),
    " ",
    input.disabled ? null : h("button", { type: "button", class: "link", onclick: () => input.focus() }, t("player.warnFix", { field: t(known.label) })),
  );
}

function draw(body: HTMLElement, p: PlayerInfo): void {
  const write = canWrite();
  const out = h("div", { "aria-live": "polite", class: "form-status" });
  const copyOut = h("span", { "aria-live": "polite", class: "copied" });
  const snippet = h("pre", { class: "snippet", id: "snippet", tabindex: "0", "aria-label": t("player.snippet") }, h("code", null, p.snippet));
  const feed = p.settings.feed ?? {};
  const oembed = p.settings.oembed ?? {};
  const inp = (id: string, v: string | undefined, type = "text") => h("input", { id, type, value: v ?? "", disabled: !write });
  const chk = (id: string, v: boolean | undefined) => h("input", { id, type: "checkbox", checked: v, disabled: !write });
  const f = {
    enabled: chk("feed-enabled", feed.enabled ?? true),
    title: inp("feed-title", feed.title),
    description: inp("feed-description", feed.description),
    imageUrl: inp("feed-image", feed.imageUrl, "url"),
    author: inp("feed-author", feed.author),
    ownerEmail: inp("feed-owner", feed.ownerEmail, "email"),
    category: inp("feed-category", feed.category),
    language: inp("feed-language", feed.language),
    explicit: chk("feed-explicit", feed.explicit),
    oembedEnabled: chk("oembed-enabled", oembed.enabled),
  };
  const hosts = h("textarea", { id: "oembed-hosts", rows: "3", disabled: !write });
  hosts.value = (oembed.hosts ?? []).join("\n");
  const checkbox = (label: string, c: HTMLInputElement) => h("div", { class: "field check" }, c, h("label", { for: c.id }, label));
  const hostsTable = p.oembedHosts?.length
    ? h("div", { class: "table-wrap", tabindex: "0", role: "region", "aria-label": t("player.hostsState") }, h(
        "table",
        { class: "hosts" },
        h("caption", null, t("player.hostsState")),
        h("thead", null, h("tr", null, ...(["player.host", "player.hostStatus", "player.hostReason"] as const).map((k) => h("th", { scope: "col" }, t(k))))),
        h("tbody", null, ...p.oembedHosts.map((o) => h("tr", null, h("td", { class: "mono" }, o.host), h("td", null, h("span", { class: `badge h-${o.status}` }, t(`player.host.${o.status}` as Parameters<typeof t>[0]))), h("td", null, o.reason ?? "–")))),
      ))
    : h("p", { class: "empty" }, t("player.noHosts"));
  const run = async (what: () => Promise<PlayerInfo>, ok: string) => {
    clear(out, h("p", { role: "status" }, t("common.saving")));
    try {
      const np = await what();
      draw(body, np);
      body.querySelector(".form-status")?.replaceChildren(notice(ok, "ok"));
    } catch (e) {
      clear(out, notice(e));
    }
  };
  const save = () =>
    run(
      () =>
        call("PUT", "/api/player", {
          body: {
            feed: {
              enabled: f.enabled.checked,
              title: f.title.value.trim() || undefined,
              description: f.description.value.trim() || undefined,
              imageUrl: f.imageUrl.value.trim() || undefined,
              author: f.author.value.trim() || undefined,
              ownerEmail: f.ownerEmail.value.trim() || undefined,
              category: f.category.value.trim() || undefined,
              language: f.language.value.trim() || undefined,
              explicit: f.explicit.checked,
            },
            oembed: { enabled: f.oembedEnabled.checked, hosts: hosts.value.split(/\s+/).filter(Boolean) },
            // PUT replaces the whole document: the design (its own page) goes back as it is.
            look: p.settings.look,
          },
        }),
      t("player.saved"),
    );
  clear(
    body,
    h("h2", null, t("player.keyTitle")),
    h("p", null, t("player.key"), " ", h("code", { id: "public-key" }, p.publicKey)),
    h("p", null, t("player.snippetIntro")),
    snippet,
    h(
      "div",
      { class: "actions" },
      h(
        "button",
        {
          type: "button",
          id: "copy-snippet",
          onclick: async () => {
            try {
              await navigator.clipboard.writeText(p.snippet);
              copyOut.textContent = t("player.copied");
            } catch {
              const range = document.createRange();
              range.selectNodeContents(snippet);
              getSelection()?.removeAllRanges();
              getSelection()?.addRange(range);
              copyOut.textContent = t("player.copyManually");
            }
          },
        },
        t("player.copy"),
      ),
      copyOut,
    ),
    h("p", null, t("player.feedUrl"), " ", h("a", { href: p.feedUrl, id: "feed-url" }, p.feedUrl)),
    p.warnings?.length
      ? h("section", { class: "warnings", "aria-labelledby": "warn-h" }, h("h2", { id: "warn-h" }, t("player.warnings")), h("ul", null, ...p.warnings.map((w) => warning(w, f))))
      : h("p", { class: "ok-note" }, t("player.noWarnings")),
    h("h2", null, t("player.feedSettings")),
    write ? null : readOnlyNote(),
    h(
      "form",
      { class: "settings", novalidate: true, onsubmit: (e: Event) => (e.preventDefault(), void save()) },
      checkbox(t("player.feedEnabled"), f.enabled),
      field(t("player.feedTitle"), f.title),
      field(t("player.feedDescription"), f.description),
      field(t("player.feedImage"), f.imageUrl, t("player.feedImageHint")),
      field(t("player.feedAuthor"), f.author),
      field(t("player.feedOwner"), f.ownerEmail),
      field(t("player.feedCategory"), f.category, t("player.feedCategoryHint")),
      field(t("player.feedLanguage"), f.language, t("player.feedLanguageHint", { lang: p.feedLanguage ?? "" })),
      checkbox(t("player.feedExplicit"), f.explicit),
      h("h2", null, t("player.oembed")),
      checkbox(t("player.oembedEnabled"), f.oembedEnabled),
      field(t("player.hosts"), hosts, t("player.hostsHint")),
      write ? h("button", { type: "submit", class: "primary", id: "save-player" }, t("player.save")) : null,
    ),
    hostsTable,
    write
      ? h(
          "div",
          { class: "actions" },
          h("button", { type: "button", id: "verify-hosts", onclick: () => run(() => call("POST", "/api/player/verify"), t("player.verified")) }, t("player.verify")),
          h(
            "button",
            {
              type: "button",
              class: "danger",
              id: "rotate-key",
              onclick: async () => {
                if (await confirmDialog(t("player.rotateConfirm"), t("player.rotate"))) await run(() => call("POST", "/api/player/rotate"), t("player.rotated"));
              },
            },
            t("player.rotate"),
          ),
        )
      : null,
    out,
  );
  void go;
}
