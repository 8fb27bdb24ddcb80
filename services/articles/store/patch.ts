import type { ArticlePatch } from "./port.js";

/** Translates a content patch into $set/$unset, the update language both adapters speak. */
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
