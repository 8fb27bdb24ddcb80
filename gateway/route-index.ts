// The router's match without testing every route's pattern on every request.
// @koa/router's `match` runs the regular expression of each of the gateway's
// ~50 routes against the path (and a debug call per route), for every request:
// ~3.5% of the busy time of a GET by id (bench/README.md, issue 33, round 3).
//
// Each route's pattern starts with a literal part (everything before its first
// parameter or group: "/api/articles/" for "/api/articles/:articleId"). A
// route can only match a path that starts with that literal, ignoring case.
// So the routes are narrowed by the path's first two segments: for a key K
// (a prefix of the path), a route whose literal L can match any path starting
// with K is one where L is a prefix of K or K a prefix of L (both are prefixes
// of the path). The candidates are kept per key, in the router's order, and
// tested exactly as @koa/router tests them, so the result is the same.
import type { Router } from "@koa/router";

type Layer = Router["stack"][number];
type MatchResult = ReturnType<Router["match"]>;

/** Distinct keys kept (first two segments of the paths seen); beyond it, candidates are worked out per request. */
const MAX_KEYS = 1_000;

/** What every path a route matches starts with, lowercased: "" when its pattern is a RegExp. */
export function literalPrefix(path: string | RegExp): string {
  if (typeof path !== "string") return "";
  const cut = path.search(/[:*(){}?+\\[\]]/);
  return (cut === -1 ? path : path.slice(0, cut)).toLowerCase();
}

/** The path's first two segments ("/api/articles" of "/api/articles/abc"), lowercased. */
export function keyOf(path: string): string {
  const second = path.indexOf("/", 1);
  const third = second === -1 ? -1 : path.indexOf("/", second + 1);
  return (third === -1 ? path : path.slice(0, third)).toLowerCase();
}

/** Replaces `router.match` with one that tests only the routes a path can reach; call once the routes are in place. */
export function indexRoutes(router: Router): void {
  let indexed = -1;
  let prefixes: string[] = [];
  const byKey = new Map<string, Layer[]>();
  const candidates = (key: string): Layer[] => {
    if (indexed !== router.stack.length) {
      // Routes added since: start over.
      indexed = router.stack.length;
      prefixes = router.stack.map((l) => literalPrefix(l.path));
      byKey.clear();
    }
    let list = byKey.get(key);
    if (!list) {
      list = router.stack.filter((_, i) => prefixes[i].startsWith(key) || key.startsWith(prefixes[i]));
      if (byKey.size < MAX_KEYS) byKey.set(key, list);
    }
    return list;
  };
  // The same result @koa/router's own match builds, over the candidates only.
  router.match = (path: string, method: string): MatchResult => {
    const result: MatchResult = { path: [], pathAndMethod: [], route: false };
    const normalizedMethod = method.toUpperCase();
    for (const layer of candidates(keyOf(path))) {
      if (!layer.match(path)) continue;
      result.path.push(layer);
      if (layer.methods.length === 0 || layer.methods.includes(normalizedMethod)) {
        result.pathAndMethod.push(layer);
        if (layer.methods.length > 0) result.route = true;
      }
    }
    return result;
  };
}
