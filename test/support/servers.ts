// Real servers for the MongoDB and NATS tiers.
// PLACEHOLDER: reads MONGODB_URL / NATS_URL only; the infrastructure work
// replaces the bodies so that local servers are started when unset.
// Contract: resolve to a URL; when no server can be had, throw under CI=true
// (a tier must never be skipped silently in CI) and otherwise skip the
// suite with a message saying it did not run.
export async function requireMongo(ctx: Mocha.Context): Promise<string> {
  const url = process.env.MONGODB_URL;
  if (url) return url;
  return unavailable(ctx, "MongoDB", "set MONGODB_URL");
}

export async function requireNats(ctx: Mocha.Context): Promise<string> {
  const url = process.env.NATS_URL;
  if (url) return url;
  return unavailable(ctx, "NATS", "set NATS_URL");
}

function unavailable(ctx: Mocha.Context, what: string, hint: string): never {
  const msg = `${what} tier did not run: no server available (${hint})`;
  if (process.env.CI === "true") throw new Error(msg);
  console.warn(`      ⚠ ${msg}`);
  ctx.skip();
}
