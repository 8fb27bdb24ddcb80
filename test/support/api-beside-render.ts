// Another project's API latency on the embedded default (`npm start`'s process) while a project's
// articles render, held against the same measure on the same process with nothing rendering, in
// the same run (issue 34: rendering never costs the API its latency). The bystander project reads
// one article and creates articles of its own (audio on demand, so its creates render nothing);
// the busy project's long English articles keep the speech engine working throughout the window.
// Used by bench/kokoro-api.ts (figures) and test/e2e/kokoro-api.test.ts (relative bounds).
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import http from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "../../lib/net/free-port.js";
import { readEvery, type Latencies } from "./bystander.js";
import { EMBEDDED_TOKEN, startEmbeddedProcess } from "./embedded-process.js";
import { descendantsOf } from "./processes.js";

const BYSTANDER_TOKEN = "bystander-full-token-0123456789abcdef";
const ADMIN_TOKEN = "api-beside-render-admin-0123456789";

export interface ApiLatency {
  reads: Latencies;
  creates: Latencies;
  /** CPU-seconds per second the processes under the service (the speech hosts) used in the window: 2 = both cores. */
  renderCores: number;
}

export interface ApiBesideRender {
  idle: ApiLatency;
  busy: ApiLatency;
  /** Whether the busy project's articles were still rendering when the busy window ended. */
  stillRendering: boolean;
  /** The service's warnings (LOG_LEVEL=warn): whether Kokoro loaded is said there. */
  stderr: string;
}

export interface ApiBesideRenderOptions {
  /** LOCAL_ENGINES and friends for the service. */
  env: NodeJS.ProcessEnv;
  windowMs?: number;
  readEveryMs?: number;
  createEveryMs?: number;
  /** The busy project's articles and their length. */
  articles?: number;
  chars?: number;
}

const SENTENCES = [
  "The council met again on Thursday to discuss the harbour, the new ferry timetable and the cost of repairing the old sea wall.",
  "Several residents asked why the work had taken so long, and the engineer in charge explained that the winter storms had washed away two of the temporary supports.",
  "A local fisherman said the delays had cost his family most of the summer season, because the boats could not reach the inner quay at low tide.",
  "The mayor promised a written answer within a month and asked the regional government for an emergency grant.",
];

function prose(chars: number, seed: number): string {
  const out: string[] = [];
  for (let i = 0, n = 0; n < chars; i++) {
    const s = SENTENCES[(i + seed) % SENTENCES.length];
    out.push(s);
    n += s.length + 1;
    if (i % 4 === 3) out.push("\n\n");
  }
  return out.join(" ").replace(/ \n\n /g, "\n\n");
}

function cpuSecondsUnder(pid: number): number {
  let total = 0;
  for (const { pid: p } of descendantsOf(pid)) {
    try {
      const stat = readFileSync(`/proc/${p}/stat`, "utf8");
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      total += (Number(f[11]) + Number(f[12])) / 100;
    } catch {
      // gone meanwhile
    }
  }
  return total;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });

function request(url: string, token: string, method: string, body?: unknown): Promise<{ status: number; json: any }> {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const req = http.request(url, { method, agent, headers: { authorization: `Bearer ${token}`, ...(data ? { "content-type": "application/json", "content-length": data.length } : {}) } }, (res) => {
      const parts: Buffer[] = [];
      res.on("data", (d: Buffer) => parts.push(d));
      res.on("end", () => {
        const text = Buffer.concat(parts).toString("utf8");
        resolve({ status: res.statusCode ?? 0, json: text ? JSON.parse(text) : undefined });
      });
    });
    req.on("error", reject);
    req.end(data);
  });
}

export async function apiBesideRender(opts: ApiBesideRenderOptions): Promise<ApiBesideRender> {
  const windowMs = opts.windowMs ?? 15_000;
  const dir = mkdtempSync(join(tmpdir(), "api-beside-render-"));
  const authPort = await freePort("127.0.0.1");
  const sys = await startEmbeddedProcess(dir, {
    ...opts.env,
    AUTH_PORT: String(authPort),
    ADMIN_TOKEN,
    SEED_TOKENS: JSON.stringify([
      { token: EMBEDDED_TOKEN, project: "measured", scope: "full" },
      { token: BYSTANDER_TOKEN, project: "bystander", scope: "full" },
    ]),
    RATE_LIMIT_WRITES_PER_SECOND: "100000",
    RATE_LIMIT_WRITES_BURST: "1000000",
  });
  try {
    execFileSync(process.execPath, ["--import", "tsx", "services/auth/cli.ts", "settings:set", "bystander", "audio=onDemand"], {
      env: { ...process.env, AUTH_URL: `http://127.0.0.1:${authPort}`, ADMIN_TOKEN },
      stdio: "ignore",
    });
    const pid = sys.child.pid!;
    const api = (token: string, method: string, path: string, body?: unknown) => request(`${sys.url}${path}`, token, method, body);
    let n = 0;
    const create = async (): Promise<string> => {
      const r = await api(BYSTANDER_TOKEN, "POST", "/api/articles", { title: `Bystander ${n}`, text: `A short note, number ${n++}, that waits for a listener.` });
      if (r.status >= 300) throw new Error(`bystander create: ${r.status}`);
      return r.json.id as string;
    };
    const readId = await create();
    const read = async () => {
      const r = await api(BYSTANDER_TOKEN, "GET", `/api/articles/${readId}`);
      if (r.status !== 200) throw new Error(`bystander read: ${r.status}`);
    };
    // Warm: the first calls compile their paths.
    for (let i = 0; i < 20; i++) await Promise.all([read(), create()]);

    const measure = async (): Promise<ApiLatency> => {
      const cpu0 = cpuSecondsUnder(pid);
      const t0 = performance.now();
      const reads = readEvery(read, opts.readEveryMs ?? 50);
      const creates = readEvery(create, opts.createEveryMs ?? 100);
      const [r, c] = await Promise.all([reads.stop(windowMs), creates.stop(windowMs)]);
      return { reads: r, creates: c, renderCores: (cpuSecondsUnder(pid) - cpu0) / ((performance.now() - t0) / 1000) };
    };

    const idle = await measure();
    const ids: string[] = [];
    for (let i = 0; i < (opts.articles ?? 2); i++) {
      const r = await api(EMBEDDED_TOKEN, "POST", "/api/articles", { title: `Harbour report ${i}`, text: prose(opts.chars ?? 4_000, i), lang: "en-US", voice: "alloy" });
      if (r.status >= 300) throw new Error(`busy create: ${r.status}`);
      ids.push(r.json.id);
    }
    // The engine at work: the first article claimed.
    for (let i = 0; i < 600; i++) {
      const a = (await api(EMBEDDED_TOKEN, "GET", `/api/articles/${ids[0]}`)).json.article;
      if (a.status !== "waiting") break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const busy = await measure();
    const states = await Promise.all(ids.map(async (id) => (await api(EMBEDDED_TOKEN, "GET", `/api/articles/${id}`)).json.article));
    const stillRendering = states.some((a) => a.status !== "ready" && a.status !== "error");
    return { idle, busy, stillRendering, stderr: sys.stderr() };
  } finally {
    await sys.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

export const describeApi = (l: ApiLatency): string =>
  `reads p50 ${l.reads.p50.toFixed(1)} / p99 ${l.reads.p99.toFixed(1)} ms (${l.reads.n}), creates p50 ${l.creates.p50.toFixed(1)} / p99 ${l.creates.p99.toFixed(1)} ms (${l.creates.n}); speech hosts ${l.renderCores.toFixed(2)} cores`;
