// A project's declarative rules, applied before any synthesis. The first rule
// that fails decides, and its name is what operators see (GetArticleDecision)
// so they can tell which setting to change.
import { readableUrl } from "../../../lib/urls.js";
import type { RulesView } from "./settings.js";

export interface RuleInput {
  /** What would be spoken (parsed or plain text). */
  text: string;
  url?: string;
  labels: readonly string[];
  lang: string;
  types: ReadonlyArray<{ name: string; score: number }>;
}

export interface RuleFailure {
  rule: string;
  detail: string;
}

const patternCache = new Map<string, RegExp>();

/**
 * `*` matches any run of characters, everything else literally, over the
 * whole URL. Deliberately not a regex: admins paste URLs, and a wildcard
 * cannot backtrack catastrophically.
 */
export function wildcard(pattern: string): RegExp {
  let re = patternCache.get(pattern);
  if (!re) {
    const body = pattern
      .split(/\*+/)
      .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
      .join(".*");
    re = new RegExp(`^${body}$`, "i");
    if (patternCache.size > 1_000) patternCache.clear();
    patternCache.set(pattern, re);
  }
  return re;
}

/** URLs are stored normalised (punycode host, escaped path): a pattern written with umlauts matches the readable form. */
const matchesAny = (patterns: readonly string[], url: string) => {
  const readable = readableUrl(url);
  return patterns.find((p) => wildcard(p).test(url) || (readable !== url && wildcard(p).test(readable)));
};

export function checkRules(rules: RulesView, a: RuleInput): RuleFailure | null {
  const chars = a.text.length;
  if (rules.minChars !== undefined && chars < rules.minChars) {
    return { rule: "rules.minChars", detail: `text has ${chars} characters; at least ${rules.minChars} required` };
  }
  if (rules.maxChars !== undefined && chars > rules.maxChars) {
    return { rule: "rules.maxChars", detail: `text has ${chars} characters; at most ${rules.maxChars} allowed` };
  }
  if (rules.languages?.length && !rules.languages.includes(a.lang)) {
    return { rule: "rules.languages", detail: `language ${a.lang} is not one of ${rules.languages.join(", ")}` };
  }
  if (rules.urlDeny?.length && a.url) {
    const hit = matchesAny(rules.urlDeny, a.url);
    if (hit) return { rule: "rules.urlDeny", detail: `url matches denied pattern '${hit}'` };
  }
  if (rules.urlAllow?.length && !(a.url && matchesAny(rules.urlAllow, a.url))) {
    return { rule: "rules.urlAllow", detail: a.url ? "url matches no allowed pattern" : "article has no url; urlAllow requires one" };
  }
  if (rules.labelsExclude?.length) {
    const hit = a.labels.find((l) => rules.labelsExclude!.includes(l));
    if (hit !== undefined) return { rule: "rules.labelsExclude", detail: `label '${hit}' is excluded` };
  }
  if (rules.labelsInclude?.length && !a.labels.some((l) => rules.labelsInclude!.includes(l))) {
    return { rule: "rules.labelsInclude", detail: `needs one of the labels ${rules.labelsInclude.join(", ")}` };
  }
  for (const [name, t] of Object.entries(rules.types ?? {})) {
    // An undetected type scores 0: "min" then demands that the type was found.
    const score = a.types.find((x) => x.name === name)?.score ?? 0;
    if (t.min !== undefined && score < t.min) return { rule: `rules.types.${name}.min`, detail: `${name} scored ${score}; at least ${t.min} required` };
    if (t.max !== undefined && score > t.max) return { rule: `rules.types.${name}.max`, detail: `${name} scored ${score}; at most ${t.max} allowed` };
  }
  return null;
}
