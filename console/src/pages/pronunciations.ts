// Pronunciation rules as an editable table: GET/PUT /api/pronunciations; the
// API's 400 ("pronunciations[2].say: …") is shown beside rule 3. "Listen"
// renders a sample sentence with one rule (POST /api/pronunciations/preview).
import { ApiError, call } from "../api.js";
import { clear, field, h, uid } from "../dom.js";
import { t, tn } from "../i18n.js";
import { generation, stillCurrent } from "../nav.js";
import { affectedArticles, changedRules } from "./fix-everywhere.js";
import { canWrite, errorText, heading, loading, notice, readOnlyNote, VOICE_PAIRS } from "../ui.js";

interface Rule {
  match: string;
  say?: string;
  ipa?: string;
  spell?: boolean;
  caseSensitive?: boolean;
  lang?: string;
}

const LANG_CHOICES = ["", "en", "de", "en-US", "de-DE"];

/** Whether a rule of `ruleLang` ("de" or "de-DE") applies to text in locale `lang`, as the platform decides it. */
const fitsLang = (lang: string, ruleLang: string) => {
  const l = lang.toLowerCase();
  const r = ruleLang.toLowerCase();
  return l === r || l.startsWith(`${r}-`);
};

export async function pronunciationsPage(main: HTMLElement): Promise<void> {
  const gen = generation;
  const body = h("div", { "aria-busy": "true" }, loading());
  main.append(heading(t("pron.title")), h("p", null, t("pron.intro")), body);
  let rules: Rule[];
  try {
    rules = (await call<{ pronunciations: Rule[] }>("GET", "/api/pronunciations")).pronunciations;
  } catch (e) {
    if (stillCurrent(gen)) clear(body, notice(e));
    return;
  }
  if (!stillCurrent(gen)) return;
  body.removeAttribute("aria-busy");
  let savedRules = rules;
  const write = canWrite();
  const tbody = h("tbody");
  const out = h("div", { "aria-live": "polite" });
  const sample = h("input", { id: "sample-text", type: "text", maxlength: "200" });
  const voice = h("select", { id: "sample-voice" }, ...VOICE_PAIRS.map(([v, l]) => h("option", { value: `${v}|${l}`, selected: v === "alloy" && l === "en-US" }, `${v} (${l})`)));
  const player = h("audio", { controls: true, id: "sample-audio", class: "sample-audio" });

  const rowOf = (r: Rule) => {
    const rid = uid("rule");
    const ro = !write;
    const match = h("input", { type: "text", value: r.match, "aria-label": t("pron.match"), class: "r-match", disabled: ro });
    const say = h("input", { type: "text", value: r.say ?? "", "aria-label": t("pron.say"), class: "r-say", disabled: ro });
    const ipa = h("input", { type: "text", value: r.ipa ?? "", "aria-label": t("pron.ipa"), class: "r-ipa", disabled: ro });
    const spell = h("input", { type: "checkbox", checked: r.spell, "aria-label": t("pron.spell"), class: "r-spell", disabled: ro });
    const cs = h("input", { type: "checkbox", checked: r.caseSensitive, "aria-label": t("pron.case"), class: "r-case", disabled: ro });
    const lang = h("select", { "aria-label": t("pron.lang"), class: "r-lang", disabled: ro }, ...LANG_CHOICES.map((l) => h("option", { value: l, selected: (r.lang ?? "") === l }, l || t("pron.anyLang"))));
    const err = h("p", { class: "row-error", id: `${rid}-err`, role: "alert" });
    match.setAttribute("aria-describedby", err.id);
    const tr = h(
      "tr",
      { class: "rule" },
      h("td", null, match, err),
      h("td", null, say),
      h("td", null, ipa),
      h("td", { class: "center" }, spell),
      h("td", { class: "center" }, cs),
      h("td", null, lang),
      h(
        "td",
        { class: "row-actions" },
        write
          ? h(
              "button",
              {
                type: "button",
                class: "listen",
                onclick: async (e: Event) => {
                  const btn = e.currentTarget as HTMLButtonElement;
                  const rule = ruleOf(tr);
                  // A rule for one language is never applied to another, so its sample is read in its
                  // language: the same voice there if it speaks it, else the first that does (shown in the list).
                  if (rule.lang && !fitsLang(voice.value.split("|")[1], rule.lang)) {
                    const [cur] = voice.value.split("|");
                    const pair = VOICE_PAIRS.find(([pv, pl]) => pv === cur && fitsLang(pl, rule.lang!)) ?? VOICE_PAIRS.find(([, pl]) => fitsLang(pl, rule.lang!));
                    if (pair) voice.value = pair.join("|");
                  }
                  const [v, l] = voice.value.split("|");
                  btn.disabled = true;
                  clear(out, h("p", { role: "status" }, t("pron.rendering")));
                  try {
                    const res = await call<Response>("POST", "/api/pronunciations/preview", { body: { rule, text: sample.value.trim() || undefined, voice: v, lang: l }, response: true });
                    const blob = await res.blob();
                    if (player.src) URL.revokeObjectURL(player.src);
                    player.src = URL.createObjectURL(blob);
                    player.dataset.bytes = String(blob.size);
                    player.dataset.type = blob.type;
                    clear(out, notice(t("pron.ready", { match: rule.match }), "ok"));
                    await player.play().catch(() => undefined);
                  } catch (err2) {
                    clear(out, notice(err2));
                  } finally {
                    btn.disabled = false;
                  }
                },
              },
              t("pron.listen"),
            )
          : null,
        write ? h("button", { type: "button", class: "remove", onclick: () => tr.remove() }, t("pron.remove")) : null,
      ),
    );
    return tr;
  };
  const ruleOf = (tr: Element): Rule => {
    const q = <T extends HTMLElement>(c: string) => tr.querySelector(c) as unknown as T;
    const r: Rule = { match: q<HTMLInputElement>(".r-match").value.trim() };
    const say = q<HTMLInputElement>(".r-say").value.trim();
    const ipa = q<HTMLInputElement>(".r-ipa").value.trim();
    if (say) r.say = say;
    if (ipa) r.ipa = ipa;
    if (q<HTMLInputElement>(".r-spell").checked) r.spell = true;
    if (q<HTMLInputElement>(".r-case").checked) r.caseSensitive = true;
    const lang = q<HTMLSelectElement>(".r-lang").value;
    if (lang) r.lang = lang;
    return r;
  };
  for (const r of rules) tbody.append(rowOf(r));
  const table = h(
    "div",
    { class: "table-wrap", tabindex: "0", role: "region", "aria-label": t("pron.title") },
    h(
      "table",
      { class: "rules" },
      h("caption", { class: "sr-only" }, t("pron.caption")),
      h("thead", null, h("tr", null, ...(["pron.match", "pron.say", "pron.ipa", "pron.spell", "pron.case", "pron.lang", "pron.actions"] as const).map((k) => h("th", { scope: "col" }, t(k))))),
      tbody,
    ),
  );
  const empty = h("p", { class: "empty", hidden: rules.length > 0 }, t("pron.empty"));
  const save = async () => {
    for (const e of tbody.querySelectorAll(".row-error")) e.textContent = "";
    for (const e of tbody.querySelectorAll("[aria-invalid]")) e.removeAttribute("aria-invalid");
    const list = [...tbody.querySelectorAll("tr.rule")].map(ruleOf);
    clear(out, h("p", { role: "status" }, t("common.saving")));
    try {
      const r = await call<{ pronunciations: Rule[] }>("PUT", "/api/pronunciations", { body: list });
      // The audio already published still has the old readings: which articles, and a way to regenerate them.
      clear(out, notice(tn("pron.saved", r.pronunciations.length), "ok"), affectedArticles(changedRules(savedRules, r.pronunciations), write));
      savedRules = r.pronunciations;
    } catch (e) {
      const m = e instanceof ApiError ? /pronunciations\[(\d+)\]/.exec(e.message) : null;
      const row = m ? tbody.querySelectorAll("tr.rule")[Number(m[1])] : undefined;
      if (row) {
        (row.querySelector(".row-error") as HTMLElement).textContent = errorText(e);
        row.querySelector(".r-match")?.setAttribute("aria-invalid", "true");
        (row.querySelector(".r-match") as HTMLElement).focus();
        clear(out, notice(t("pron.ruleError", { n: Number(m![1]) + 1 })));
      } else clear(out, notice(e));
    }
  };
  clear(
    body,
    write ? null : readOnlyNote(),
    h("div", { class: "filters" }, field(t("pron.sample"), sample, t("pron.sampleHint")), field(t("article.fieldVoice"), voice)),
    table,
    empty,
    write
      ? h(
          "div",
          { class: "actions" },
          h(
            "button",
            {
              type: "button",
              id: "add-rule",
              onclick: () => {
                const tr = rowOf({ match: "" });
                tbody.append(tr);
                empty.hidden = true;
                (tr.querySelector(".r-match") as HTMLElement).focus();
              },
            },
            t("pron.add"),
          ),
          h("button", { type: "button", class: "primary", id: "save-rules", onclick: save }, t("pron.save")),
        )
      : null,
    out,
    player,
  );
}
