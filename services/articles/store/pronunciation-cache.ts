// A project's pronunciation rules are read by every admission; keeping them
// for a few seconds saves the create path a database round trip. A change
// made through this process applies at once; one made through another
// articles replica within `ttlMs` (the same freshness as project settings).
import type { PronunciationRule } from "../../../lib/pronunciations.js";
import type { ArticleStore } from "./port.js";

export function withCachedPronunciations(store: ArticleStore, ttlMs = 5_000, maxProjects = 10_000): ArticleStore {
  const cache = new Map<string, { rules: PronunciationRule[]; until: number }>();
  return {
    ...store,
    async getPronunciations(projectId) {
      const hit = cache.get(projectId);
      if (hit && hit.until > Date.now()) return hit.rules;
      const rules = await store.getPronunciations(projectId);
      if (cache.size >= maxProjects) cache.delete(cache.keys().next().value as string);
      cache.set(projectId, { rules, until: Date.now() + ttlMs });
      return rules;
    },
    async setPronunciations(projectId, rules, now) {
      cache.delete(projectId);
      try {
        await store.setPronunciations(projectId, rules, now);
      } finally {
        // A read racing the write must not keep the old list for the whole ttl.
        cache.delete(projectId);
      }
    },
  };
}
