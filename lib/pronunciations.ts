// Pronunciation rules of a project: a word or phrase and how to say it. The
// gateway checks them at the edge, the articles service stores them and
// snapshots the ones of an article's language onto each admitted revision,
// and the audio service applies them (services/audio/text/pronounce.ts).

export interface PronunciationRule {
  /** Word or phrase, matched as whole words. */
  match: string;
  /** Default false: "nguyen" matches "Nguyen". */
  caseSensitive?: boolean;
  /** Only for articles in this language: "de" or a locale such as "de-DE". Absent: every language. */
  lang?: string;
  /** A respelling, read instead of the word ("NOO-win"). */
  say?: string;
  /** Read letter by letter. */
  spell?: true;
  /** IPA transcription; providers without phoneme input read `say` when given, else the word as written. */
  ipa?: string;
}

export const PRONUNCIATION_LIMITS = {
  rules: 500,
  match: 100,
  say: 200,
  ipa: 200,
} as const;

/** BCP 47-ish: a language, optionally a region. */
export const RULE_LANG = /^[a-z]{2}(?:-[A-Z]{2})?$/;

// Letters, digits and the marks names carry; no markup or control characters.
const MATCH_TEXT = /^[\p{L}\p{M}\p{N}][\p{L}\p{M}\p{N} .'’&+-]*$/u;
const SAY_TEXT = /^[\p{L}\p{M}\p{N} .,'’-]+$/u;
// IPA symbols are letters (ə, ʃ, ŋ), modifier letters (ˈ, ˌ, ː) or combining marks; plus spaces and syllable dots.
const IPA_TEXT = /^[\p{L}\p{Lm}\p{M}\p{Sk} .‿|]+$/u;

const KEYS = new Set(["match", "caseSensitive", "lang", "say", "spell", "ipa"]);

/**
 * The first problem with a rule list, as "pronunciations[3].ipa: …", or null
 * when the list is valid. Used by the articles service on every write; the
 * gateway's schema check says the same things earlier.
 */
export function pronunciationProblem(value: unknown): string | null {
  if (!Array.isArray(value)) return "pronunciations: must be an array of rules";
  if (value.length > PRONUNCIATION_LIMITS.rules) return `pronunciations: must have at most ${PRONUNCIATION_LIMITS.rules} rules`;
  const seen = new Map<string, number>();
  for (let i = 0; i < value.length; i++) {
    const at = (field: string, text: string) => `pronunciations[${i}]${field ? `.${field}` : ""}: ${text}`;
    const r = value[i] as Record<string, unknown>;
    if (!r || typeof r !== "object" || Array.isArray(r)) return at("", "must be an object");
    for (const k of Object.keys(r)) if (!KEYS.has(k)) return at(k, "is not a rule field (match, caseSensitive, lang, say, spell, ipa)");
    if (typeof r.match !== "string") return at("match", r.match === undefined ? "is required" : "must be a string");
    if (r.match.trim() === "") return at("match", "must not be empty");
    if (r.match.length > PRONUNCIATION_LIMITS.match) return at("match", `must be at most ${PRONUNCIATION_LIMITS.match} characters`);
    if (!MATCH_TEXT.test(r.match)) return at("match", "must be a word or phrase: letters, digits, spaces and . ' & + -");
    if (r.caseSensitive !== undefined && typeof r.caseSensitive !== "boolean") return at("caseSensitive", "must be a boolean");
    if (r.lang !== undefined && (typeof r.lang !== "string" || !RULE_LANG.test(r.lang))) return at("lang", 'must be a language such as "de" or "de-DE"');
    const kinds = (["say", "spell", "ipa"] as const).filter((k) => r[k] !== undefined);
    if (kinds.length === 0) return at("say", "one of say, spell or ipa is required");
    if (kinds.length > 1 && !(kinds.length === 2 && kinds.includes("ipa") && kinds.includes("say"))) {
      return at(kinds[1], `only one of say, spell or ipa may be given (ipa may come with a say fallback), got ${kinds.join(" and ")}`);
    }
    if (r.spell !== undefined && r.spell !== true) return at("spell", "must be true");
    if (r.say !== undefined) {
      if (typeof r.say !== "string") return at("say", "must be a string");
      if (r.say.trim() === "") return at("say", "must not be empty");
      if (r.say.length > PRONUNCIATION_LIMITS.say) return at("say", `must be at most ${PRONUNCIATION_LIMITS.say} characters`);
      if (!SAY_TEXT.test(r.say)) return at("say", "must be a respelling: letters, digits, spaces and . , ' -");
    }
    if (r.ipa !== undefined) {
      if (typeof r.ipa !== "string") return at("ipa", "must be a string");
      if (r.ipa.trim() === "") return at("ipa", "must not be empty");
      if (r.ipa.length > PRONUNCIATION_LIMITS.ipa) return at("ipa", `must be at most ${PRONUNCIATION_LIMITS.ipa} characters`);
      if (!IPA_TEXT.test(r.ipa)) return at("ipa", "must be an IPA transcription (IPA letters, stress and length marks; no slashes or brackets)");
    }
    const key = `${r.caseSensitive ? r.match : r.match.toLowerCase()}\u0000${r.lang ?? ""}`;
    const twin = seen.get(key);
    if (twin !== undefined) return at("match", `repeats the match of pronunciations[${twin}] for the same language`);
    seen.set(key, i);
  }
  return null;
}

/** A copy holding only the rule fields, in a fixed order (what is stored and compared). */
export function cleanRule(r: PronunciationRule): PronunciationRule {
  const out: PronunciationRule = { match: r.match };
  if (r.caseSensitive) out.caseSensitive = true;
  if (r.lang) out.lang = r.lang;
  if (r.say !== undefined) out.say = r.say;
  if (r.spell) out.spell = true;
  if (r.ipa !== undefined) out.ipa = r.ipa;
  return out;
}

/** Rules that apply to an article in `lang` ("de-DE"): those without a language and those of its language or locale. */
export function rulesForLang(rules: readonly PronunciationRule[], lang: string): PronunciationRule[] {
  const l = lang.toLowerCase();
  return rules.filter((r) => !r.lang || l === r.lang.toLowerCase() || l.startsWith(`${r.lang.toLowerCase()}-`));
}
