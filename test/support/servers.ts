// Real servers for the MongoDB and NATS tiers.
// MONGODB_URL / NATS_URL win when set. Otherwise one local server of each kind
// is started on first use (nats-server from Debian's package, the in-memory
// mongo-java-server stand-in) and killed when the test process exits.
// Contract: resolve to a URL; when no server can be had, throw under CI=true
// (a tier must never be skipped silently in CI) and otherwise skip the
// suite with a message saying it did not run.
import { startMongoServer, type LocalServer } from "./mongo-server.js";
import { startNatsServer } from "./nats-server.js";

export { startMongoServer, startNatsServer };
export type { LocalServer };
export type { LocalNatsServer } from "./nats-server.js";

// First start can build the Java launcher or fetch jars: give hooks time.
const START_TIMEOUT_MS = 180_000;

let sharedMongo: Promise<string> | undefined;
let sharedNats: Promise<string> | undefined;

export async function requireMongo(ctx: Mocha.Context): Promise<string> {
  const url = process.env.MONGODB_URL;
  if (url) return url;
  sharedMongo ??= startMongoServer().then((s) => s.url);
  return await orUnavailable(ctx, "MongoDB", sharedMongo);
}

export async function requireNats(ctx: Mocha.Context): Promise<string> {
  const url = process.env.NATS_URL;
  if (url) return url;
  sharedNats ??= startNatsServer().then((s) => s.url);
  return await orUnavailable(ctx, "NATS", sharedNats);
}

async function orUnavailable(ctx: Mocha.Context, what: string, start: Promise<string>): Promise<string> {
  if (ctx.timeout() < START_TIMEOUT_MS) ctx.timeout(START_TIMEOUT_MS);
  try {
    return await start;
  } catch (err) {
    return unavailable(ctx, what, err instanceof Error ? err.message : String(err));
  }
}

function unavailable(ctx: Mocha.Context, what: string, reason: string): never {
  const msg = `${what} tier did not run: ${reason}`;
  if (process.env.CI === "true") throw new Error(msg);
  console.warn(`      ⚠ ${msg}`);
  ctx.skip();
}
