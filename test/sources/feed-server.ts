// A publisher's site for the sources tests: feeds, sitemaps and article pages
// served from 127.0.0.1 (reached through FETCH_ALLOW_PRIVATE, the test-only
// allow-list), with ETag / Last-Modified, and counts of what it answered.
import { createHash } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";

export interface Served {
  status?: number;
  body: string;
  type?: string;
  headers?: Record<string, string>;
  /** Answer with validators and 304 when they match (default true for 200s). */
  conditional?: boolean;
  /** Answer this much later (a slow site). */
  delayMs?: number;
}

export interface FeedServer {
  url: string;
  port: number;
  /** What a path answers from now on. */
  set(path: string, answer: Served): void;
  /** Requests and 304s per path. */
  hits(path: string): { requests: number; notModified: number };
  close(): Promise<void>;
}

export async function startFeedServer(): Promise<FeedServer> {
  const routes = new Map<string, Served & { etag: string; modified: string }>();
  const counts = new Map<string, { requests: number; notModified: number }>();
  const server = http.createServer((req, res) => {
    const r = routes.get((req.url ?? "/").split("?")[0]);
    if (r?.delayMs) setTimeout(() => answer(req, res), r.delayMs);
    else answer(req, res);
  });
  function answer(req: http.IncomingMessage, res: http.ServerResponse): void {
    const path = (req.url ?? "/").split("?")[0];
    const c = counts.get(path) ?? { requests: 0, notModified: 0 };
    counts.set(path, c);
    c.requests++;
    const r = routes.get(path);
    if (!r) {
      res.writeHead(404, { "content-type": "text/plain" }).end("not found");
      return;
    }
    const status = r.status ?? 200;
    const conditional = status === 200 && r.conditional !== false;
    if (conditional && (req.headers["if-none-match"] === r.etag || (!req.headers["if-none-match"] && req.headers["if-modified-since"] === r.modified))) {
      c.notModified++;
      res.writeHead(304, { etag: r.etag, "last-modified": r.modified }).end();
      return;
    }
    res.writeHead(status, { "content-type": r.type ?? "application/xml; charset=utf-8", ...(conditional ? { etag: r.etag, "last-modified": r.modified } : {}), ...r.headers });
    res.end(r.body);
  }
  server.keepAliveTimeout = 1_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  let tick = 0;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    set(path, answer) {
      const etag = `"${createHash("sha1").update(answer.body).digest("hex").slice(0, 16)}"`;
      // Whole seconds, as HTTP dates are: each change a second later than the previous.
      const modified = new Date(Date.UTC(2026, 0, 1) + ++tick * 1000).toUTCString();
      routes.set(path, { ...answer, etag, modified });
    },
    hits: (path) => ({ ...(counts.get(path) ?? { requests: 0, notModified: 0 }) }),
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
