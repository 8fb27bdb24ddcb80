// The gateway's router narrows its routes by the path's first two segments
// (gateway/route-index.ts): every path must reach exactly the routes, in the
// same order, that @koa/router's own match finds.
import { expect } from "chai";
import { Router } from "@koa/router";
import { indexRoutes, keyOf, literalPrefix } from "../../gateway/route-index.js";

// The gateway's route patterns (gateway/routes/*.ts), a regular expression and a middleware layer.
const ROUTES: Array<[string, string | RegExp]> = [
  ["delete", "/api/articles/:articleId"], ["delete", "/api/jobs/:jobId"], ["delete", "/api/sources/:sourceId"],
  ["get", "/api"], ["get", "/api/articles"], ["get", "/api/articles/:articleId"], ["get", "/api/articles/:articleId/segments"],
  ["get", "/api/articles/:articleId/stats"], ["get", "/api/articles_external_id/:externalId"], ["get", "/api/docs"],
  ["get", "/api/docs/init.js"], ["get", "/api/jobs/:jobId"], ["get", "/api/openapi.json"], ["get", "/api/player"],
  ["get", "/api/sources/:sourceId"], ["get", "/api/stats"], ["get", "/api/voices/:voice/sample"], ["get", "/feeds/:file"],
  ["get", "/healthz"], ["get", "/player/v1/embed/:key/:articleId"], ["get", "/player/v1/player.js"],
  ["get", "/api/articles_external_url/*externalUrl"], ["get", "/live/:articleId/:file"], ["get", "/audio/*key"],
  ["post", "/api/articles"], ["post", "/api/articles/:articleId/audio"], ["post", "/api/articles/bulk"],
  ["post", "/api/articles/import"], ["put", "/api/articles/:articleId"], ["options", "/api/articles"],
  ["get", "/{:lang}/guide"], ["get", /^\/legacy\/(\d+)$/i],
];

function router(): Router {
  const r = new Router();
  for (const [method, path] of ROUTES) (r as unknown as Record<string, (p: string | RegExp, m: () => void) => void>)[method](path, () => undefined);
  r.use("/api", (_ctx, next) => next());
  return r;
}

const PATHS = [
  "/", "", "/api", "/api/", "/API", "/api/articles", "/api/articles/", "/Api/Articles/abc", "/api/articles/abc",
  "/api/articles/abc/", "/api/articles/abc/segments", "/api/articles/bulk", "/api/articles/import", "/api/articles/a%2Fb",
  "/api/articles_external_id/x", "/api/articles_external_url/https%3A%2F%2Fexample.com%2Fa", "/api/articles_external_url/https://example.com/a?b",
  "/api/docs", "/api/docs/init.js", "/api/jobs/j1", "/api/voices/en-1/sample", "/feeds/f.xml", "/healthz", "/healthz/",
  "/player/v1/embed/k/a", "/player/v1/player.js", "/live/a/f.mp3", "/audio/a/b/c.mp3", "/AUDIO/x", "/legacy/12", "/LEGACY/12",
  "/en/guide", "/guide", "//api/articles", "/api//articles/x", "/nothing/here", "/api/articles/İd", "/ſtats",
];

describe("route index", () => {
  it("matches every path to the same routes, in the same order, as @koa/router", () => {
    const plain = router();
    const indexed = router();
    indexRoutes(indexed);
    const names = (r: Router, layers: Router["stack"]) => layers.map((l) => r.stack.indexOf(l));
    for (const path of PATHS) {
      for (const method of ["GET", "POST", "PUT", "DELETE", "HEAD", "OPTIONS"]) {
        const a = plain.match(path, method);
        const b = indexed.match(path, method);
        expect({ path, method, route: b.route, all: names(indexed, b.path), here: names(indexed, b.pathAndMethod) }).to.deep.equal({
          path, method, route: a.route, all: names(plain, a.path), here: names(plain, a.pathAndMethod),
        });
      }
    }
  });

  it("sees routes added after it was set up", () => {
    const r = router();
    indexRoutes(r);
    expect(r.match("/api/late/x", "GET").route).to.equal(false);
    r.get("/api/late/:id", () => undefined);
    expect(r.match("/api/late/x", "GET").route).to.equal(true);
  });

  it("narrows by the literal start of each pattern", () => {
    expect(literalPrefix("/API/Articles/:articleId")).to.equal("/api/articles/");
    expect(literalPrefix("/audio/*key")).to.equal("/audio/");
    expect(literalPrefix("/{:lang}/guide")).to.equal("/");
    expect(literalPrefix(/^\/x/)).to.equal("");
    expect(keyOf("/Api/Articles/abc/segments")).to.equal("/api/articles");
    expect(keyOf("/healthz")).to.equal("/healthz");
  });
});
