// The voice picker: every voice of GET /api/voices, each option naming the engine that reads it
// now (a cloud voice without its key is read by a local engine), and a Listen button that plays
// the voice's sample. Until the list arrives (or if it cannot), the built-in pairs are offered.
import { call } from "./api.js";
import { clear, h } from "./dom.js";
import { t } from "./i18n.js";
import { notice, VOICE_PAIRS } from "./ui.js";

interface Voice {
  name: string;
  langs: string[];
  engine: string;
  neural: boolean;
  available: boolean;
  speaks: Record<string, string>;
}

const ENGINE_NAMES: Record<string, string> = { kokoro: "Kokoro", pico: "SVOX Pico", espeak: "eSpeak NG", openai: "OpenAI", azure: "Azure" };
const NEURAL = new Set(["kokoro", "openai", "azure"]);

let listing: Promise<Voice[]> | undefined;

/** GET /api/voices, once per page load; a failure is not kept. */
function voices(): Promise<Voice[]> {
  listing ??= call<{ voices: Voice[] }>("GET", "/api/voices").then(
    (r) => r.voices,
    (err: unknown) => {
      listing = undefined;
      throw err;
    },
  );
  return listing;
}

const engineText = (engine: string) => t(NEURAL.has(engine) ? "voice.engineNeural" : "voice.engineLocal", { engine: ENGINE_NAMES[engine] ?? engine });

export interface VoicePicker {
  select: HTMLSelectElement;
  /** The select with its label, the engine line and the Listen button. */
  element: HTMLElement;
}

export function voicePicker(id: string, voice?: string, lang?: string, withDefault = true): VoicePicker {
  const option = (v: string, l: string, label: string) => h("option", { value: `${v}|${l}`, selected: v === voice && l === lang }, label);
  const select = h("select", { id, name: "voice" }, withDefault ? h("option", { value: "" }, t("article.voiceDefault")) : null, ...VOICE_PAIRS.map(([v, l]) => option(v, l, `${v} (${l})`)));
  const engineLine = h("p", { class: "hint", id: `${id}-engine`, "aria-live": "polite" });
  select.setAttribute("aria-describedby", engineLine.id);
  const player = h("audio", { controls: true, class: "sample-audio", id: `${id}-sample`, hidden: true });
  const out = h("div", { "aria-live": "polite" });
  let known = new Map<string, Voice>();

  const describe = () => {
    const [v, l] = select.value.split("|");
    const entry = known.get(v);
    listen.disabled = !v;
    clear(engineLine, entry && l ? t("voice.readBy", { engine: engineText(entry.speaks[l] ?? entry.engine) }) : "");
  };

  const listen = h(
    "button",
    {
      type: "button",
      class: "secondary",
      onclick: async () => {
        const [v, l] = select.value.split("|");
        if (!v) return;
        listen.disabled = true;
        clear(out, h("p", { role: "status" }, t("voice.rendering")));
        try {
          const res = await call<Response>("GET", `/api/voices/${encodeURIComponent(v)}/sample?lang=${encodeURIComponent(l)}`, { response: true });
          const blob = await res.blob();
          if (player.src) URL.revokeObjectURL(player.src);
          player.src = URL.createObjectURL(blob);
          player.hidden = false;
          clear(out);
          await player.play().catch(() => undefined);
        } catch (err) {
          clear(out, notice(err));
        } finally {
          listen.disabled = false;
        }
      },
    },
    t("voice.listen"),
  );

  select.addEventListener("change", describe);
  void voices().then(
    (list) => {
      known = new Map(list.map((v) => [v.name, v]));
      const chosen = select.value;
      const pairs = list.flatMap((v) => v.langs.map((l) => [v, l] as const));
      clear(
        select,
        withDefault ? h("option", { value: "" }, t("article.voiceDefault")) : null,
        ...pairs.map(([v, l]) => option(v.name, l, `${v.name} (${l}) · ${ENGINE_NAMES[v.speaks[l] ?? v.engine] ?? v.engine}`)),
      );
      if (chosen) select.value = chosen;
      describe();
    },
    // The list is a help, not a need: the built-in voices stay selectable.
    () => describe(),
  );
  describe();

  const label = h("label", { for: id }, t("article.fieldVoice"));
  const element = h("div", { class: "field" }, label, select, engineLine, h("div", { class: "voice-sample" }, listen, player, out));
  return { select, element };
}
