// Start-up provisioning: SEED_TOKENS (operator-chosen tokens) or, on a store
// with no project at all, a demo project so a first run works out of the box.
import { Ajv, type ErrorObject } from "ajv";
import { ConfigError } from "../../lib/config.js";
import type { AuthStore, TokenScope } from "./store/port.js";
import { hashToken, newPlainToken, tokenRecord } from "./tokens.js";

export interface SeedItem {
  token: string;
  project: string;
  scope: TokenScope;
}

export interface SeedResult {
  projectsCreated: number;
  tokensCreated: number;
  /** Already stored exactly as seeded. */
  unchanged: number;
  /** Indexes of seeded tokens an admin has revoked since; they stay revoked. */
  revoked: number[];
}

const seedSchema = {
  type: "array",
  items: {
    type: "object",
    required: ["token", "project", "scope"],
    additionalProperties: false,
    properties: {
      // No whitespace: the token travels in "Authorization: Bearer <token>".
      token: { type: "string", minLength: 8, maxLength: 512, pattern: "^\\S+$" },
      project: { type: "string", pattern: "^[A-Za-z0-9_-]{1,64}$" },
      scope: { type: "string", enum: ["full", "read"] },
    },
  },
} as const;

const validateSeed = new Ajv({ allErrors: true }).compile<SeedItem[]>(seedSchema);

function describe(err: ErrorObject): string {
  // "/2/scope" → "[2].scope"; never echo the value, it may be a token.
  const path = err.instancePath.replace(/^\/(\d+)/, "[$1]").replace(/\//g, ".");
  if (err.keyword === "required") return `SEED_TOKENS${path}.${String(err.params.missingProperty)}: is required`;
  if (err.keyword === "additionalProperties") return `SEED_TOKENS${path}: unknown field '${String(err.params.additionalProperty)}' (allowed: token, project, scope)`;
  if (err.keyword === "enum") return `SEED_TOKENS${path}: must be "full" or "read"`;
  if (path.endsWith(".token") && err.keyword === "pattern") return `SEED_TOKENS${path}: must not contain whitespace`;
  if (path.endsWith(".project")) return `SEED_TOKENS${path}: must be 1-64 characters of A-Z, a-z, 0-9, '_' or '-'`;
  return `SEED_TOKENS${path || ""}: ${err.message ?? "is invalid"}`;
}

/** Parses and checks SEED_TOKENS; throws ConfigError naming the item and field. */
export function parseSeedTokens(json: string): SeedItem[] {
  let data: unknown;
  try {
    data = JSON.parse(json);
  } catch (e) {
    throw new ConfigError(`Invalid configuration: SEED_TOKENS is not valid JSON (${(e as Error).message}); expected [{"token","project","scope"}]`);
  }
  if (!validateSeed(data)) {
    const msgs = [...new Set((validateSeed.errors ?? []).map(describe))].join("; ");
    throw new ConfigError(`Invalid configuration: ${msgs}`);
  }
  const seen = new Map<string, number>();
  data.forEach((item, i) => {
    const j = seen.get(item.token);
    if (j !== undefined && (data[j].project !== item.project || data[j].scope !== item.scope)) {
      throw new ConfigError(`Invalid configuration: SEED_TOKENS[${i}].token: same token as SEED_TOKENS[${j}] with a different project or scope`);
    }
    seen.set(item.token, i);
  });
  return data;
}

/**
 * Creates the seeded projects and tokens that are missing. Safe to run on
 * every start: a token already stored for the same project and scope is left
 * alone; one stored for another project or scope is a ConfigError.
 */
export async function applySeedTokens(store: AuthStore, json: string): Promise<SeedResult> {
  const items = parseSeedTokens(json);
  // Check everything before writing anything, so a bad item changes nothing.
  const existing = await Promise.all(items.map((item) => store.findTokenByHash(hashToken(item.token))));
  items.forEach((item, i) => {
    const found = existing[i];
    if (found && (found.projectId !== item.project || found.scope !== item.scope)) {
      throw new ConfigError(
        `Invalid configuration: SEED_TOKENS[${i}].token: already registered for project '${found.projectId}' with scope ${found.scope}; ` +
          `issue a different token instead of reusing this one`,
      );
    }
  });

  const result: SeedResult = { projectsCreated: 0, tokensCreated: 0, unchanged: 0, revoked: [] };
  for (const project of new Set(items.map((i) => i.project))) {
    if ((await store.createProject({ id: project, name: project })).created) result.projectsCreated++;
  }
  const done = new Set<string>();
  for (const [i, item] of items.entries()) {
    const found = existing[i];
    if (found) {
      if (found.revoked) result.revoked.push(i);
      else result.unchanged++;
      continue;
    }
    if (done.has(item.token)) continue;
    done.add(item.token);
    await store.insertToken(tokenRecord(item.token, item.project, item.scope));
    result.tokensCreated++;
  }
  return result;
}

export interface DemoProject {
  projectId: string;
  fullToken: string;
  readToken: string;
}

export const DEMO_PROJECT_ID = "demo";

/**
 * On a store without any project, creates project "demo" with one full and
 * one read token and returns the plain tokens (the only time they exist in
 * clear). Null when any project exists already.
 */
export async function ensureDemoProject(store: AuthStore): Promise<DemoProject | null> {
  if ((await store.countProjects()) > 0) return null;
  const res = await store.createProject({ id: DEMO_PROJECT_ID, name: "Demo project" });
  // Another replica won the race; it prints the tokens.
  if (!res.created) return null;
  const fullToken = newPlainToken();
  const readToken = newPlainToken();
  await store.insertToken(tokenRecord(fullToken, DEMO_PROJECT_ID, "full"));
  await store.insertToken(tokenRecord(readToken, DEMO_PROJECT_ID, "read"));
  return { projectId: DEMO_PROJECT_ID, fullToken, readToken };
}

/** The one-time banner for the demo tokens; written to stdout, never to the log. */
export function demoBanner(demo: DemoProject, baseUrl = "http://localhost:8080"): string {
  const line = "=".repeat(72);
  return [
    line,
    `  First start: created project '${demo.projectId}' with two API tokens.`,
    "  They are shown only now (only their hashes are stored). Keep them safe.",
    "",
    `  full access : ${demo.fullToken}`,
    `  read only   : ${demo.readToken}`,
    "",
    `  Try: curl -H 'Authorization: Bearer ${demo.readToken}' ${baseUrl}/api/articles`,
    "  Set SEED_TOKENS or use `npm run admin` to manage projects and tokens.",
    line,
    "",
  ].join("\n");
}
