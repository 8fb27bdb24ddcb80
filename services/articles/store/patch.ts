import type { AdmissionResult, ArticlePatch } from "./port.js";

/** Translates a content patch into $set/$unset, the update language both drivers speak. */
export function patchOps(patch: ArticlePatch): { $set: Record<string, unknown>; $unset: Record<string, true> } {
  const $set: Record<string, unknown> = {};
  const $unset: Record<string, true> = {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === undefined) continue;
    if (k === "prompt" && v === null) $unset.prompt = true;
    else $set[k] = Array.isArray(v) ? [...v] : v;
  }
  return { $set, $unset };
}

export const unsetAll = (keys: readonly string[]) => Object.fromEntries(keys.map((k) => [k, true as const])) as Record<string, true>;

/** The update applied when admission finishes (the layout adds its change timestamp). */
export function admissionOps(r: AdmissionResult): { $set: Record<string, unknown>; $unset: Record<string, true> } {
  const $set: Record<string, unknown> = { status: r.status, types: r.types.map((t) => ({ name: t.name, score: t.score })) };
  const $unset: Record<string, true> = { admittingUntil: true };
  for (const k of ["spokenText", "decision", "reservedChars", "pronunciations", "loudness"] as const) {
    if (r[k] !== undefined) $set[k] = r[k];
    else $unset[k] = true;
  }
  if (!r.keepPending) $unset.admission = true;
  return { $set, $unset };
}
