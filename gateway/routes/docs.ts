// #1 (GET /api → docs), the docs page and the OpenAPI document. The page is
// Swagger UI from the pinned swagger-ui-dist package, served by the gateway
// itself: no CDN, so the docs work offline and under a strict CSP.
import { createReadStream, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import type { Router } from "@koa/router";
import { buildOpenApi } from "../openapi.js";

const require = createRequire(import.meta.url);
const ASSET_DIR = path.dirname(require.resolve("swagger-ui-dist/package.json"));
const UI_VERSION: string = JSON.parse(readFileSync(path.join(ASSET_DIR, "package.json"), "utf8")).version;

/** Versioned, so browsers may cache the files for good. */
export const ASSET_BASE = `/api/docs/assets/${UI_VERSION}`;

const ASSETS: Record<string, string> = {
  "swagger-ui.css": "text/css; charset=utf-8",
  "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
  "favicon-32x32.png": "image/png",
};

// persistAuthorization keeps the token the reader typed into "Authorize" in this
// browser's localStorage, so a reload does not ask for it again.
const INIT_JS = `window.addEventListener("load", function () {
  window.ui = SwaggerUIBundle({ url: "/api/openapi.json", dom_id: "#docs", deepLinking: true, layout: "BaseLayout", persistAuthorization: true });
});
`;

const PAGE = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Article Audio Publishing API</title>
<link rel="stylesheet" href="${ASSET_BASE}/swagger-ui.css">
<link rel="icon" type="image/png" href="${ASSET_BASE}/favicon-32x32.png">
</head>
<body>
<noscript>The interactive reference needs JavaScript; the raw description is at <a href="/api/openapi.json">/api/openapi.json</a>.</noscript>
<div id="docs"></div>
<script src="${ASSET_BASE}/swagger-ui-bundle.js"></script>
<script src="/api/docs/init.js"></script>
</body>
</html>
`;

const CSP = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'";

export function docsRoutes(router: Router): void {
  const openapi = JSON.stringify(buildOpenApi());

  router.get("/api", (ctx) => {
    ctx.body = null; // explicit: the redirect has no body at all
    ctx.status = 302;
    ctx.set("Location", "/api/docs");
  });

  router.get("/api/openapi.json", (ctx) => {
    ctx.type = "application/json";
    ctx.set("Access-Control-Allow-Origin", "*");
    ctx.body = openapi;
  });

  router.get("/api/docs", (ctx) => {
    ctx.type = "text/html; charset=utf-8";
    ctx.set("Content-Security-Policy", CSP);
    ctx.body = PAGE;
  });

  router.get("/api/docs/init.js", (ctx) => {
    ctx.type = "text/javascript; charset=utf-8";
    ctx.body = INIT_JS;
  });

  router.get(`${ASSET_BASE}/:file`, (ctx) => {
    const type = Object.hasOwn(ASSETS, ctx.params.file) ? ASSETS[ctx.params.file] : undefined;
    if (!type) return; // falls through to the JSON 404
    ctx.type = type;
    ctx.set("Cache-Control", "public, max-age=31536000, immutable");
    ctx.body = createReadStream(path.join(ASSET_DIR, ctx.params.file));
  });
}
