// Runs the multi-process stack (launch/stack.ts) for the full-stack suites:
// names of its own (database, JetStream stream) so runs never see each
// other's data, every child's output kept for assertions, and a cleanup that
// leaves the servers as it found them.
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { MongoClient } from "mongodb";
import { connect } from "nats";
import { startStack, type Stack } from "../../launch/stack.js";
import { ROOMY_RATE_LIMITS } from "../support/rate-limits.js";

export const TOKENS = {
  aFull: "stack-a-full-0123456789",
  aRead: "stack-a-read-0123456789",
  bFull: "stack-b-full-0123456789",
};
export const ADMIN_TOKEN = "stack-admin-token-0123456789";

const SEED = JSON.stringify([
  { token: TOKENS.aFull, project: "alpha", scope: "full" },
  { token: TOKENS.aRead, project: "alpha", scope: "read" },
  { token: TOKENS.bFull, project: "beta", scope: "full" },
]);

export interface LogRecord {
  proc: string;
  msg?: string;
  pid?: number;
  articleId?: string;
  attempt?: number;
  [k: string]: unknown;
}

export class StackLogs {
  readonly lines: Array<{ proc: string; text: string }> = [];

  add(proc: string, text: string): void {
    this.lines.push({ proc, text });
    if (process.env.STACK_LOG) process.stdout.write(`${proc.padEnd(10)}| ${text}\n`);
  }

  /** The JSON log records, optionally of one process and one message. */
  records(filter: { proc?: string; msg?: string; articleId?: string } = {}): LogRecord[] {
    const out: LogRecord[] = [];
    for (const { proc, text } of this.lines) {
      if (filter.proc && proc !== filter.proc) continue;
      if (!text.startsWith("{")) continue;
      let r: LogRecord;
      try {
        r = { ...(JSON.parse(text) as object), proc };
      } catch {
        continue;
      }
      if (filter.msg && r.msg !== filter.msg) continue;
      if (filter.articleId && r.articleId !== filter.articleId) continue;
      out.push(r);
    }
    return out;
  }

  tail(n = 40): string {
    return this.lines.slice(-n).map((l) => `${l.proc.padEnd(10)}| ${l.text.slice(0, 400)}`).join("\n");
  }
}

export interface TestStack {
  stack: Stack;
  logs: StackLogs;
  mongoUrl: string;
  db: string;
  /** Stops the stack, drops its database and deletes its stream. */
  cleanup(): Promise<void>;
}

export interface TestStackRun {
  /** The stack's environment: this run's database, stream, data directory, seeded tokens, free ports. */
  env: Record<string, string | undefined>;
  db: string;
  /** Drops the database, deletes the streams and the data directory (after the stack stopped). */
  cleanup(): Promise<void>;
}

/** Names and settings of one stack run, for startStack() here or `npm run stack` in a child process. */
export async function prepareTestStack(o: { mongoUrl: string; natsUrl: string; env?: Record<string, string> }): Promise<TestStackRun> {
  const run = `${Date.now().toString(36)}${randomBytes(3).toString("hex")}`;
  const db = `e2e_stack_${run}`;
  const stream = `E2E_${run}`;
  // Audio caches and any other local files of this run only.
  const dataDir = await mkdtemp(path.join(tmpdir(), "e2e-stack-"));
  const env: Record<string, string | undefined> = {
    ...process.env,
    MONGODB_URL: o.mongoUrl,
    MONGODB_DB: db,
    DATA_DIR: dataDir,
    NATS_URL: o.natsUrl,
    NATS_STREAM: stream,
    NATS_SUBJECT: `e2e.${run}.jobs`,
    NATS_DURABLE: `e2e_${run}`,
    HOST: "127.0.0.1",
    PORT: "0",
    AUTH_PORT: "0",
    ARTICLES_PORT: "0",
    AUDIO_PORT: "0",
    AUDIO_REPLICAS: "2",
    // Two workers share two cores with the rest of the stack.
    AUDIO_THREADS: "1",
    SEED_TOKENS: SEED,
    ...ROOMY_RATE_LIMITS,
    RATE_LIMIT_KV_BUCKET: `rl_${run}`,
    ADMIN_TOKEN,
    // The assertions read the children's logs.
    LOG_LEVEL: "info",
    ...o.env,
  };
  return {
    env,
    db,
    async cleanup() {
      await dropDatabase(o.mongoUrl, db).catch(() => undefined);
      await deleteStream(o.natsUrl, stream).catch(() => undefined);
      await deleteStream(o.natsUrl, `${stream}_LISTENING`).catch(() => undefined);
      await deleteStream(o.natsUrl, `KV_rl_${run}`).catch(() => undefined);
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

export async function startTestStack(o: { mongoUrl: string; natsUrl: string; env?: Record<string, string> }): Promise<TestStack> {
  const run = await prepareTestStack(o);
  const logs = new StackLogs();
  let stack: Stack;
  try {
    stack = await startStack(run.env, { onLine: (p, l) => logs.add(p, l), startTimeoutMs: 90_000 });
  } catch (err) {
    await run.cleanup();
    throw err;
  }
  return {
    stack,
    logs,
    mongoUrl: o.mongoUrl,
    db: run.db,
    async cleanup() {
      await stack.stop();
      await run.cleanup();
    },
  };
}

export async function withMongo<T>(url: string, db: string, fn: (c: MongoClient) => Promise<T>): Promise<T> {
  const client = new MongoClient(url, { serverSelectionTimeoutMS: 5000 });
  try {
    await client.connect();
    return await fn(client);
  } finally {
    await client.close();
  }
}

async function dropDatabase(url: string, db: string): Promise<void> {
  await withMongo(url, db, (c) => c.db(db).dropDatabase());
}

export async function deleteStream(url: string, stream: string): Promise<void> {
  const nc = await connect({ servers: url, maxReconnectAttempts: 0, timeout: 3000 });
  try {
    const jsm = await nc.jetstreamManager();
    await jsm.streams.delete(stream);
  } finally {
    await nc.close();
  }
}

const WORDS = ["amber", "brisk", "cedar", "dune", "ember", "fjord", "gale", "harbor", "iris", "juniper", "kestrel", "lumen", "maple", "nectar", "orchid", "pebble", "quartz", "raven", "saffron", "tundra", "umber", "violet", "willow", "zephyr"];

/**
 * Prose of a given length for the synthesizer. Every sentence carries a random
 * word, so no two calls produce the same chunks and a chunk cache cannot turn
 * a render into a lookup.
 */
export function prose(chars: number): string {
  const s = [
    "The city council reviewed the budget for public libraries, parks and schools near the %s district.",
    "Members asked detailed questions about the %s project and the schedule for the coming years.",
    "Residents who attended the meeting welcomed the %s plan but asked for more evening hours.",
    "The mayor said the %s proposal balances new investment with careful spending.",
  ];
  const word = () => WORDS[randomBytes(1)[0] % WORDS.length];
  let out = "";
  for (let i = 0; out.length < chars; i++) out += (out ? " " : "") + s[i % s.length].replace("%s", `${word()} ${word()}`);
  return out.slice(0, chars);
}
