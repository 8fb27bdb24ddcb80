// Lines/s of bulk import (docs/import.md), two ways: the gateway's line
// handling alone (split, parse, validate, batch, order, write; a service that
// answers at once), and POST /api/articles/import end to end into a fresh
// embedded default. Usage: npx tsx bench/import-rate.ts [lines] [textChars]
import { mkdtemp, rm } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import path from "node:path";
import { Writable } from "node:stream";
import { mapError } from "../gateway/errors.js";
import { runImport } from "../gateway/import-stream.js";
import { startEmbedded } from "../launch/embedded.js";

const N = Number(process.argv[2] ?? 20_000);
const CHARS = Number(process.argv[3] ?? 1_000);
const TOKEN = "bench-import-full-0123456789";
const filler = "The council met on Tuesday to discuss the library budget and the schedule for repairs. ".repeat(Math.ceil(CHARS / 80)).slice(0, CHARS);

function chunks(): Buffer[] {
  const out: Buffer[] = [];
  let cur = "";
  for (let i = 0; i < N; i++) {
    cur += JSON.stringify({ title: `Article ${i}`, text: `${i} ${filler}`, externalId: `bench-${i}` }) + "\n";
    if (cur.length >= 64 * 1024) {
      out.push(Buffer.from(cur));
      cur = "";
    }
  }
  if (cur) out.push(Buffer.from(cur));
  return out;
}

const body = chunks();
const rate = (n: number, ms: number) => `${Math.round((n * 1000) / ms)} lines/s`;

{
  async function* input() {
    yield* body;
  }
  const t0 = performance.now();
  const s = await runImport({
    input: input(),
    out: { write: () => true, drain: async () => {} },
    send: async (items, lines) => items.map((_, i) => ({ id: `id-${lines[i]}` })),
    failureOf: (e) => mapError(e, "bench"),
    maxLineBytes: 10 * 1024 * 1024,
  });
  console.log(`gateway line handling alone: ${N} lines of ~${CHARS} chars, ${rate(s.imported, performance.now() - t0)}`);
}

{
  const dir = await mkdtemp(path.join(tmpdir(), "bench-import-"));
  const sys = await startEmbedded(
    {
      PORT: "0",
      HOST: "127.0.0.1",
      DATA_DIR: dir,
      LOG_LEVEL: "warn",
      SEED_TOKENS: JSON.stringify([{ token: TOKEN, project: "bench", scope: "full" }]),
      RATE_LIMIT_IMPORTS_PER_SECOND: "100000",
      RATE_LIMIT_IMPORTS_BURST: "1000000",
    },
    new Writable({ write: (_c, _e, cb) => cb() }),
  );
  try {
    const t0 = performance.now();
    const res = await fetch(`${sys.url}/api/articles/import?audio=onDemand`, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/x-ndjson" },
      body: new Blob(body.map((b) => new Uint8Array(b))),
    });
    const last = (await res.text()).trim().split("\n").at(-1);
    console.log(`POST /api/articles/import, embedded default: ${rate(N, performance.now() - t0)} (${last}); load average ${loadavg()[0].toFixed(1)}`);
  } finally {
    await sys.close();
    await rm(dir, { recursive: true, force: true });
  }
}
