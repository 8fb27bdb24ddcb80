// What the import isolation scenarios measure: a bystander project's reads and
// /livez probes (and this process's event-loop lag) while something runs, and
// uploads that trickle. Only relative figures are asserted (a reference
// measured in the same test), so a loaded machine does not fail them.
import { readdirSync } from "node:fs";
import http from "node:http";

export interface Bystander {
  reads: number[];
  probes: number[];
  /** Largest lateness of a 20 ms timer in this process (the whole server, on the embedded default). */
  lag: number;
  failedReads: number;
}

function timedGet(agent: http.Agent, url: string, token?: string): Promise<{ ms: number; status: number }> {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const req = http.get(url, { agent, headers: token ? { authorization: `Bearer ${token}` } : {} }, (res) => {
      res.resume();
      res.on("end", () => resolve({ ms: performance.now() - t0, status: res.statusCode ?? 0 }));
    });
    req.on("error", () => resolve({ ms: performance.now() - t0, status: 0 }));
  });
}

/** Reads `readPath` with `token` at ~20/s and probes /livez at 4/s while `work` runs. */
export async function bystanderDuring(base: string, readPath: string, token: string, work: () => Promise<unknown>): Promise<Bystander> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
  const reads: Promise<{ ms: number; status: number }>[] = [];
  const probes: Promise<{ ms: number; status: number }>[] = [];
  let lag = 0;
  let last = performance.now();
  const ticker = setInterval(() => {
    const now = performance.now();
    lag = Math.max(lag, now - last - 20);
    last = now;
  }, 20);
  const r = setInterval(() => reads.push(timedGet(agent, `${base}${readPath}`, token)), 50);
  const p = setInterval(() => probes.push(timedGet(agent, `${base}/livez`)), 250);
  try {
    await work();
  } finally {
    clearInterval(r);
    clearInterval(p);
    clearInterval(ticker);
  }
  const rs = await Promise.all(reads);
  const ps = await Promise.all(probes);
  agent.destroy();
  return { reads: rs.map((x) => x.ms), probes: ps.map((x) => x.ms), lag, failedReads: rs.filter((x) => x.status !== 200).length + ps.filter((x) => x.status !== 200).length };
}

export interface TimedCreate {
  /** When it was sent and answered, on performance.now()'s clock. */
  sentAt: number;
  doneAt: number;
  status: number;
}

/** Single creates (POST /api/articles) with `token` at 5/s while `work` runs, each timed. */
export async function createsDuring(base: string, token: string, work: () => Promise<unknown>): Promise<TimedCreate[]> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
  const u = new URL(`${base}/api/articles`);
  const creates: Promise<TimedCreate>[] = [];
  const one = (n: number) =>
    new Promise<TimedCreate>((resolve) => {
      const sentAt = performance.now();
      const body = JSON.stringify({ title: `Bystander create ${n}`, text: `Published while another project imports, number ${n}.` });
      const req = http.request(
        { host: u.hostname, port: u.port, path: u.pathname, method: "POST", agent, headers: { authorization: `Bearer ${token}`, "content-type": "application/json", "content-length": Buffer.byteLength(body) } },
        (res) => {
          res.resume();
          res.on("end", () => resolve({ sentAt, doneAt: performance.now(), status: res.statusCode ?? 0 }));
        },
      );
      req.on("error", () => resolve({ sentAt, doneAt: performance.now(), status: 0 }));
      req.end(body);
    });
  const timer = setInterval(() => creates.push(one(creates.length)), 200);
  try {
    await work();
  } finally {
    clearInterval(timer);
  }
  const out = await Promise.all(creates);
  agent.destroy();
  return out;
}

/**
 * One import of `body`, keeping only the answer's last line (a million result
 * lines are not worth parsing here; fetch's whole-text answer also held this
 * process's other requests up for seconds).
 */
export function importKeepingLast(base: string, token: string, body: string, query = ""): Promise<{ status: number; last: any }> {
  return new Promise((resolve, reject) => {
    const u = new URL(`${base}/api/articles/import${query}`);
    const req = http.request({ host: u.hostname, port: u.port, path: u.pathname + u.search, method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/x-ndjson" } }, (res) => {
      let tail = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (tail = (tail + c).slice(-1000)));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, last: JSON.parse(tail.trim().split("\n").at(-1)!) }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

export const maxOf = (xs: number[]) => xs.reduce((a, b) => Math.max(a, b), 0);

/** Open descriptors of a process (Linux); undefined where /proc is not there. */
export function descriptorsOf(pid: number): number | undefined {
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return undefined;
  }
}

/**
 * `n` import uploads that send one byte every `everyMs` and never finish, as a
 * slow-loris client would; each ends when the server ends it. Resolves the
 * statuses heard and a stop() that closes what is still open.
 */
export function trickleImports(base: string, token: string, n: number, everyMs: number) {
  const u = new URL(`${base}/api/articles/import`);
  const statuses: number[] = [];
  const bodies: string[] = [];
  let closed = 0;
  const reqs: http.ClientRequest[] = [];
  for (let i = 0; i < n; i++) {
    const req = http.request({ host: u.hostname, port: u.port, path: u.pathname, method: "POST", agent: false, headers: { authorization: `Bearer ${token}`, "content-type": "application/x-ndjson" } }, (res) => {
      statuses.push(res.statusCode ?? 0);
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (text += c));
      res.on("end", () => bodies.push(text));
      // A refused client stops sending, as a client should.
      if (res.statusCode !== 200) req.destroy();
    });
    req.on("close", () => closed++);
    req.on("error", () => {});
    req.flushHeaders();
    reqs.push(req);
  }
  const timer = setInterval(() => {
    for (const r of reqs) if (!r.destroyed && !r.writableEnded) r.write(" ");
  }, everyMs);
  return {
    statuses,
    bodies,
    get closed() {
      return closed;
    },
    stop() {
      clearInterval(timer);
      for (const r of reqs) r.destroy();
    },
  };
}
