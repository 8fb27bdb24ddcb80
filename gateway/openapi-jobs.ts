// OpenAPI paths of the bulk actions (POST /api/articles/bulk, GET and DELETE
// /api/jobs/{id}); their schemas are BULK_SCHEMAS of schemas.ts, the ones that
// validate the requests. Merged into the document by openapi.ts.
import { BULK_MAX_ARTICLES, JobIdParam } from "./schemas.js";

type Json = Record<string, unknown>;

const schemaRef = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const responses = (...codes: string[]) => Object.fromEntries(codes.map((c) => [c, { $ref: `#/components/responses/${RESPONSE[c]}` }]));
const RESPONSE: Record<string, string> = {
  "400": "BadRequest",
  "401": "Unauthorized",
  "403": "Forbidden",
  "404": "NotFound",
  "413": "PayloadTooLarge",
  "415": "UnsupportedMediaType",
  "429": "TooManyRequests",
  "500": "InternalError",
  "503": "Unavailable",
  "504": "GatewayTimeout",
};
const COMMON = ["400", "401", "403", "429", "500", "503", "504"];
const { description: idDescription, examples: idExamples, ...idSchema } = JobIdParam;
const jobIdParam = { name: "id", in: "path", required: true, description: idDescription, schema: idSchema, example: (idExamples as string[])[0] };
const jobAnswer = (description: string) => ({ "200": { description, content: { "application/json": { schema: schemaRef("BulkJobResult") } } } });

export function jobPaths(): Json {
  return {
    "/api/articles/bulk": {
      post: {
        operationId: "startBulkJob",
        tags: ["articles"],
        summary: "Regenerates, deletes or relabels many articles as one background job (full token)",
        description:
          `The articles are the listed \`ids\` or those the \`filter\` matches when the job starts (at most ${BULK_MAX_ARTICLES}; a larger filter is a 400). ` +
          "The answer comes at once (202) with the job's id; `GET /api/jobs/{id}` shows its progress. Each article goes through what its own call does: " +
          "regenerate is an update without changes (a new revision, read again, counted against the daily limit and the credit: when either runs out the job stops, state `failed`, and says so), " +
          "delete is `DELETE /api/articles/{id}`, addLabels and removeLabels change the labels only (no new revision, no new audio). " +
          "Articles are taken at the pace of the project's `writes` rate limit, from the same bucket as its API writes (leaving a quarter of the burst for them). " +
          "A project runs one job at a time: a second start while one runs is a 429 naming the running job. See docs/api.md#bulk-actions.",
        requestBody: {
          required: true,
          content: {
            "application/json": {
              schema: schemaRef("BulkRequest"),
              example: { action: "addLabels", filter: { label: "politics" }, labels: ["archive"] },
            },
          },
        },
        responses: {
          "202": { description: "The job is running; its id and first state.", content: { "application/json": { schema: schemaRef("BulkStartResult") } } },
          ...responses(...COMMON, "413", "415"),
        },
      },
    },
    "/api/jobs/{id}": {
      get: {
        operationId: "getBulkJob",
        tags: ["articles"],
        summary: "Reads a bulk job's progress (any token of the project)",
        description: "Finished jobs stay readable for 7 days.",
        parameters: [jobIdParam],
        responses: { ...jobAnswer("The job as it stands."), ...responses(...COMMON, "404") },
      },
      delete: {
        operationId: "cancelBulkJob",
        tags: ["articles"],
        summary: "Cancels a running bulk job after the article in hand (full token)",
        description: "Articles already done stay done. A job that has already finished is answered as it is.",
        parameters: [jobIdParam],
        responses: { ...jobAnswer("The job after the cancel (state `cancelled`, or how it had finished)."), ...responses(...COMMON, "404") },
      },
    },
  };
}
