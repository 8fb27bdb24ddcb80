import { sortAtOf } from "./order.js";
import type { AdmissionResult, ArticlePatch } from "./port.js";

/**
 * Translates a content patch into $set/$unset, the update language both drivers speak. A null
 * removes the field. A publication date moves the article in the list order: `created` is the
 * article's creation (its second and sequence), which a removed date falls back to.
 */
export function patchOps(patch: ArticlePatch, created: { added: number; seq: number }): { $set: Record<string, unknown>; $unset: Record<string, true> } {
  const $set: Record<string, unknown> = {};
  const $unset: Record<string, true> = {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === undefined) continue;
    if (v === null) $unset[k] = true;
    else $set[k] = Array.isArray(v) ? [...v] : v;
  }
  if (patch.published !== undefined) $set.sortAt = sortAtOf(patch.published ?? undefined, created.added, created.seq);
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
