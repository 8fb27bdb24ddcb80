// A raw HTTP upload for tests of refused bodies: sends a JSON-typed body of
// any size in chunks (never holding it whole), with or without a declared
// length, and reports the answer or the socket error a client would see.
import http from "node:http";

export interface RawAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/**
 * POSTs `total` bytes in chunks over node:http; resolves with the answer, or
 * rejects with the socket error (EPIPE/ECONNRESET) a client would see.
 */
export function upload(
  url: string,
  opts: { headers: Record<string, string>; total: number; declare?: boolean; stopAfter?: number; abortOnAnswer?: boolean },
): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const headers: Record<string, string | number> = { "content-type": "application/json", ...opts.headers };
    if (opts.declare !== false) headers["content-length"] = opts.total;
    const req = http.request({ host: u.hostname, port: u.port, path: u.pathname, method: "POST", headers, agent: false });
    req.on("error", reject);
    req.on("response", (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString("utf8") });
        // A client that stops uploading once it has its answer.
        if (opts.abortOnAnswer) req.destroy();
      });
      res.on("error", reject);
    });
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    let sent = 0;
    const limit = opts.stopAfter ?? opts.total;
    const pump = () => {
      while (!req.destroyed && sent < limit) {
        const n = Math.min(chunk.length, limit - sent);
        sent += n;
        if (!req.write(n === chunk.length ? chunk : chunk.subarray(0, n))) {
          req.once("drain", pump);
          return;
        }
      }
      // stopAfter: leave the upload hanging (the answer must come without it).
      if (opts.stopAfter === undefined) req.end();
    };
    req.write("[");
    sent = 1;
    pump();
  });
}

