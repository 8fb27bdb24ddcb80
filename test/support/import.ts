// Bulk import as a publisher calls it: NDJSON up, NDJSON results down.
import http from "node:http";

export interface ImportAnswer {
  status: number;
  headers: Headers;
  /** Each answer line parsed (ndjson), or the ErrorResult as the single element. */
  lines: any[];
  text: string;
}

export const ndjson = (rows: unknown[]) => rows.map((r) => (typeof r === "string" ? r : JSON.stringify(r))).join("\n") + "\n";

export async function postImport(baseUrl: string, token: string | undefined, body: string, opts: { query?: string; contentType?: string } = {}): Promise<ImportAnswer> {
  const headers: Record<string, string> = { "content-type": opts.contentType ?? "application/x-ndjson" };
  if (token) headers.authorization = `Bearer ${token}`;
  const res = await fetch(`${baseUrl}/api/articles/import${opts.query ? `?${opts.query}` : ""}`, { method: "POST", headers, body });
  const text = await res.text();
  const lines = text
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l));
  return { status: res.status, headers: res.headers, lines, text };
}

/** An import whose upload the test writes piece by piece, reading result lines as they come. */
export function openImport(baseUrl: string, token: string, query = "") {
  const u = new URL(`${baseUrl}/api/articles/import${query}`);
  const req = http.request({ host: u.hostname, port: u.port, path: u.pathname + u.search, method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/x-ndjson" } });
  const received: any[] = [];
  const waiters: Array<() => void> = [];
  let buffered = "";
  let status = 0;
  const response = new Promise<http.IncomingMessage>((resolve, reject) => {
    req.on("response", (res) => {
      status = res.statusCode ?? 0;
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        buffered += chunk;
        let nl;
        while ((nl = buffered.indexOf("\n")) !== -1) {
          received.push(JSON.parse(buffered.slice(0, nl)));
          buffered = buffered.slice(nl + 1);
        }
        for (const w of waiters.splice(0)) w();
      });
      resolve(res);
    });
    req.on("error", reject);
  });
  const ended = response.then((res) => new Promise<void>((resolve) => res.on("end", resolve)));
  return {
    req,
    received,
    status: () => status,
    write: (text: string) => new Promise<void>((resolve, reject) => req.write(text, (e) => (e ? reject(e) : resolve()))),
    end: () => req.end(),
    /** Resolves once `n` result lines arrived (rejects after timeoutMs). */
    async waitForLines(n: number, timeoutMs = 30_000): Promise<any[]> {
      const until = Date.now() + timeoutMs;
      while (received.length < n) {
        if (Date.now() > until) throw new Error(`only ${received.length} of ${n} result lines after ${timeoutMs} ms`);
        await Promise.race([new Promise<void>((r) => waiters.push(r)), new Promise((r) => setTimeout(r, 100))]);
      }
      return received.slice(0, n);
    },
    ended,
  };
}
