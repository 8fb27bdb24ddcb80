// The gateway's access log (gateway/request-context.ts): a line for every write, error, refusal
// and slow request; successful reads summed into one line per window, each its own line at debug.
import { expect } from "chai";
import http from "node:http";
import type net from "node:net";
import { Writable } from "node:stream";
import Koa from "koa";
import { pino } from "pino";
import { requestContext } from "../../gateway/request-context.js";

interface Line {
  level: number;
  msg: string;
  [k: string]: unknown;
}

async function withGateway(level: string, fn: (url: string, lines: Line[]) => Promise<void>): Promise<void> {
  const lines: Line[] = [];
  const out = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString("utf8").split("\n")) if (l) lines.push(JSON.parse(l) as Line);
      done();
    },
  });
  const app = new Koa();
  app.use(requestContext(pino({ level }, out), { readSummaryMs: 200 }));
  app.use(async (ctx) => {
    if (ctx.path === "/missing") ctx.status = 404;
    else if (ctx.path === "/slow") await new Promise((r) => setTimeout(r, 1_100));
    ctx.body = ctx.status === 404 ? "no" : "ok";
  });
  const server = http.createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  try {
    await fn(`http://127.0.0.1:${(server.address() as net.AddressInfo).port}`, lines);
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
}

const waitForLine = async (lines: Line[], pred: (l: Line) => boolean): Promise<Line> => {
  for (let i = 0; i < 200; i++) {
    const hit = lines.find(pred);
    if (hit) return hit;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error("no such log line");
};

describe("access log", () => {
  it("logs each write, error and slow read, and sums successful reads into one line", async () => {
    await withGateway("info", async (url, lines) => {
      for (let i = 0; i < 5; i++) expect((await fetch(`${url}/a/${i}`)).status).to.equal(200);
      expect((await fetch(`${url}/a`, { method: "HEAD" })).status).to.equal(200);
      expect((await fetch(`${url}/missing`)).status).to.equal(404);
      expect((await fetch(`${url}/w`, { method: "POST", body: "x" })).status).to.equal(200);
      expect((await fetch(`${url}/slow`)).status).to.equal(200);
      const summary = await waitForLine(lines, (l) => l.msg === "reads answered");
      const requests = lines.filter((l) => l.msg === "request");
      expect(requests.map((l) => `${l.method} ${l.path} ${l.status}`)).to.have.members(["GET /missing 404", "POST /w 200", "GET /slow 200"]);
      expect(requests.every((l) => typeof l.reqId === "string" && typeof l.ms === "number")).to.equal(true);
      expect(summary).to.include({ level: 30, reads: 6 });
      expect(summary.statuses).to.deep.equal({ 200: 6 });
      expect(summary.maxMs).to.be.a("number").and.at.least(summary.meanMs as number);
    });
  });

  it("writes a line for every read at debug", async () => {
    await withGateway("debug", async (url, lines) => {
      for (let i = 0; i < 3; i++) await fetch(`${url}/a/${i}`);
      await waitForLine(lines, (l) => l.path === "/a/2");
      const reads = lines.filter((l) => l.msg === "request");
      expect(reads.map((l) => l.path)).to.deep.equal(["/a/0", "/a/1", "/a/2"]);
      expect(reads.every((l) => l.level === 20)).to.equal(true);
      await new Promise((r) => setTimeout(r, 300));
      expect(lines.some((l) => l.msg === "reads answered")).to.equal(false);
    });
  });
});
