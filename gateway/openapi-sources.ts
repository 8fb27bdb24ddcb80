// OpenAPI paths and schemas of /api/sources (docs/sources.md). Merged into the
// document by openapi.ts; the schemas are the ones that validate requests.
import { SourceIdParam } from "./source-schemas.js";

type Json = Record<string, unknown>;

const schemaRef = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const responseRef = (name: string) => ({ $ref: `#/components/responses/${name}` });
const ok = (description: string, name: string) => ({ "200": { description, content: { "application/json": { schema: schemaRef(name) } } } });
const STATUS: Record<string, string> = { BadRequest: "400", Unauthorized: "401", Forbidden: "403", NotFound: "404", PayloadTooLarge: "413", UnsupportedMediaType: "415", TooManyRequests: "429", InternalError: "500", Unavailable: "503", GatewayTimeout: "504" };
const std = (...names: string[]) => Object.fromEntries(names.map((n) => [STATUS[n], responseRef(n)]));
const READ = ["BadRequest", "Unauthorized", "TooManyRequests", "InternalError", "Unavailable", "GatewayTimeout"];
const WRITE = [...READ, "Forbidden", "PayloadTooLarge", "UnsupportedMediaType"];
const body = (name: string, example: unknown) => ({ required: true, content: { "application/json": { schema: schemaRef(name), example } } });
const idParam = { name: "sourceId", in: "path", required: true, description: SourceIdParam.description, schema: { type: "string", minLength: 1, maxLength: 200 }, example: "source-news-example-com-x7k2" };

export function sourcePaths(): Json {
  return {
    "/api/sources": {
      get: {
        operationId: "listSources",
        tags: ["sources"],
        summary: "Lists the feeds and sitemaps the project follows, with their polling state (any token)",
        responses: { ...ok("Every source of the project, oldest first.", "SourceListResult"), ...std(...READ) },
      },
      post: {
        operationId: "createSource",
        tags: ["sources"],
        summary: "Follows a feed or sitemap: its new items become articles (full token); the first poll starts at once",
        description:
          "Items published after the source is added become articles (externalId: the item's guid or link), unless `backfill` asks for older ones. " +
          "A project may follow a bounded number of sources (429 beyond it). The answer does not wait for the first poll: read the source's `state`.",
        requestBody: body("SourceCreateRequest", { url: "https://news.example.com/feed.xml", pollSeconds: 300, labels: ["news"] }),
        responses: { ...ok("The new source's id.", "IdResult"), ...std(...WRITE) },
      },
    },
    "/api/sources/{sourceId}": {
      parameters: [idParam],
      get: { operationId: "getSource", tags: ["sources"], summary: "Reads one source (any token)", responses: { ...ok("The source.", "SourceResult"), ...std(...READ, "NotFound") } },
      put: {
        operationId: "updateSource",
        tags: ["sources"],
        summary: "Changes a source's settings, or pauses and resumes it (full token)",
        requestBody: body("SourceUpdateRequest", { paused: true }),
        responses: { ...ok("The source as changed.", "SourceResult"), ...std(...WRITE, "NotFound") },
      },
      delete: {
        operationId: "deleteSource",
        tags: ["sources"],
        summary: "Stops following a source (full token); the articles it made are kept",
        responses: { ...ok("Deleted.", "SuccessResult"), ...std(...WRITE, "NotFound") },
      },
    },
    "/api/sources/{sourceId}/poll": {
      parameters: [idParam],
      post: {
        operationId: "pollSource",
        tags: ["sources"],
        summary: "Polls the source now and answers it afterwards (full token); works on a paused source too",
        description: "When a poll of it is already running (here or on another replica), answers the source as it is without a second poll.",
        responses: { ...ok("The source after the poll.", "SourceResult"), ...std(...WRITE, "NotFound") },
      },
    },
  };
}
