// The gateway's edges (issues 12.8 and 13): who may upload, how refused
// uploads are answered, methods, query integers, characters in ids and
// labels, nesting depth, compressed bodies and where /metrics lives.
import http from "node:http";
import { Writable } from "node:stream";
import { expect } from "chai";
import { pino } from "pino";
import { compileSchema, ErrorResult } from "../../gateway/schemas.js";
import { jsonDepthExceeds } from "../../gateway/body.js";
import { expectNoStall } from "../support/bystander.js";
import { upload } from "../support/upload.js";
import { call, FULL, READ, startHarness, type Harness } from "./support.js";

const isError = compileSchema(ErrorResult);

function expectFail(res: { status: number; body: any }, status: number, message: RegExp | string): void {
  expect(res.status, JSON.stringify(res.body)).to.equal(status);
  expect(isError(res.body), JSON.stringify(res.body)).to.equal(true);
  if (typeof message === "string") expect(res.body.message).to.include(message);
  else expect(res.body.message).to.match(message);
}

/** Any method, fetch refuses TRACE. */
function rawCall(base: string, method: string, path: string): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: any }> {
  return new Promise((resolve, reject) => {
    const u = new URL(path, base);
    const req = http.request({ host: u.hostname, port: u.port, path: u.pathname, method, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: JSON.parse(Buffer.concat(chunks).toString("utf8")) }));
    });
    req.on("error", reject);
    req.end();
  });
}

describe("gateway: edges", function () {
  this.timeout(120_000);
  let h: Harness;
  before(async () => {
    h = await startHarness({ maxBodyBytes: 1024 * 1024 });
  });
  after(async () => {
    await h.close();
  });

  describe("token checked before the body is read (12.8)", () => {
    it("answers 401 to a bad token while the upload is still incomplete", async () => {
      const before = h.fake.articles.size;
      // The upload never completes: a gateway waiting for the body would answer only at its request
      // timeout (120 s, a 408), after this suite's own timeout.
      const res = await upload(h.url("/api/articles"), { headers: { authorization: "Bearer garbage" }, total: 900_000, stopAfter: 64 * 1024 });
      expect(res.status).to.equal(401);
      expect(JSON.parse(res.body)).to.deep.include({ result: "fail" });
      expect(h.fake.articles.size).to.equal(before);
    });

    it("answers 403 to a read-only token before reading the body", async () => {
      const res = await upload(h.url("/api/articles"), { headers: READ, total: 900_000, stopAfter: 64 * 1024 });
      expect(res.status).to.equal(403);
      expect(JSON.parse(res.body).message).to.include("read-only");
    });

    function expectContinue(token: string): Promise<{ status: number; continued: boolean }> {
      return new Promise((resolve, reject) => {
        const u = new URL(h.url("/api/articles"));
        const body = JSON.stringify({ title: "Continued", text: "t" });
        const req = http.request({
          host: u.hostname,
          port: u.port,
          path: u.pathname,
          method: "POST",
          agent: false,
          headers: { authorization: `Bearer ${token}`, "content-type": "application/json", "content-length": Buffer.byteLength(body), expect: "100-continue" },
        });
        let continued = false;
        req.on("continue", () => {
          continued = true;
          req.end(body);
        });
        req.on("response", (res) => {
          res.resume();
          res.on("end", () => resolve({ status: res.statusCode ?? 0, continued }));
        });
        req.on("error", reject);
        req.flushHeaders();
      });
    }

    it("Expect: 100-continue: a bad token is refused before the client is invited to send", async () => {
      expect(await expectContinue("garbage")).to.deep.equal({ status: 401, continued: false });
      expect(await expectContinue("read-token")).to.deep.equal({ status: 403, continued: false });
      expect(await expectContinue("full-token")).to.deep.equal({ status: 200, continued: true });
    });

    it("GETs do not call the auth service from the gateway", async () => {
      const calls = h.fake.authCalls;
      await call(h, "GET", "/api/articles", { headers: READ });
      expect(h.fake.authCalls).to.equal(calls);
    });
  });

  describe("413 reaches the client (13.1)", () => {
    it("20 uploads of 1.2x the limit each get a readable 413 ErrorResult", async () => {
      for (let i = 0; i < 20; i++) {
        const res = await upload(h.url("/api/articles"), { headers: FULL, total: Math.round(1.2 * 1024 * 1024), declare: i % 2 === 0 });
        expect(res.status, `upload ${i}`).to.equal(413);
        const body = JSON.parse(res.body);
        expect(body.result).to.equal("fail");
        expect(body.message).to.include("larger than");
      }
    });

    it("a kept-alive connection serves the next request after a 413", async () => {
      const big = JSON.stringify({ title: "T", text: "x".repeat(1024 * 1024 + 10) });
      for (let i = 0; i < 3; i++) {
        expectFail(await call(h, "POST", "/api/articles", { headers: FULL, json: JSON.parse(big) }), 413, "larger than");
        expect((await call(h, "POST", "/api/articles", { headers: FULL, json: { title: "After 413", text: "t" } })).status).to.equal(200);
      }
    });

    it("a 401 to a complete upload is readable too", async () => {
      for (let i = 0; i < 5; i++) {
        const res = await upload(h.url("/api/articles"), { headers: { authorization: "Bearer nope" }, total: 900_000 });
        expect(res.status).to.equal(401);
      }
    });
  });

  describe("methods (13.7, 12.8)", () => {
    it("TRACE gets 405 fail with Allow, not 501", async () => {
      const res = await rawCall(h.gateway.url, "TRACE", "/api/articles");
      expectFail(res, 405, "not allowed");
      expect(res.body.result).to.equal("fail");
      expect(res.headers.allow).to.include("GET").and.include("POST");
    });

    it("an unknown method on an unknown path is a 404", async () => {
      expectFail(await rawCall(h.gateway.url, "TRACE", "/nowhere"), 404, "No such endpoint");
    });

    it("logs method errors at info, without a stack", async () => {
      const lines: any[] = [];
      const sink = new Writable({
        write(chunk, _enc, done) {
          lines.push(JSON.parse(String(chunk)));
          done();
        },
      });
      const g = await startHarness({ log: pino({ level: "debug" }, sink) });
      try {
        await rawCall(g.gateway.url, "TRACE", "/api/articles");
        await rawCall(g.gateway.url, "DELETE", "/api/articles");
      } finally {
        await g.close();
      }
      const methodLines = lines.filter((l) => l.status === 405 && l.msg !== "request");
      expect(methodLines).to.have.length(2);
      for (const l of methodLines) {
        expect(l.level).to.equal(30);
        expect(l).not.to.have.property("err");
      }
      expect(lines.filter((l) => l.level >= 50)).to.have.length(0);
    });
  });

  describe("integer query parameters are plain decimal (13.8)", () => {
    for (const q of ["limit=0x10", "limit=1e1", "limit=%2B10", "offset=%20", "limit=", "offset=", "limit=10%20", "offset=-0"]) {
      it(`?${q} → 400`, async () => {
        expectFail(await call(h, "GET", `/api/articles?${q}`, { headers: READ }), 400, "plain decimal");
      });
    }
    it("?limit=20&offset=0 still works", async () => {
      expect((await call(h, "GET", "/api/articles?limit=20&offset=0", { headers: READ })).status).to.equal(200);
    });
  });

  describe("characters in ids, URLs and labels (12.8, 13.9)", () => {
    const bad: [string, object, string][] = [
      ["NUL in externalId", { externalId: "a\u0000b" }, "externalId: must not contain"],
      ["lone surrogate in externalId", { externalId: "a\ud800" }, "externalId: must not contain"],
      ["RLO in externalId", { externalId: "invoice\u202Etxt.exe" }, "externalId: must not contain"],
      ["LRI in a label", { labels: ["ok", "x\u2066y"] }, "labels[1]: must not contain"],
      ["RLM in a label", { labels: ["\u200Fx"] }, "labels[0]: must not contain"],
      ["control character in externalId", { externalId: "a\nb" }, "externalId: must not contain"],
      ["bidi control in url", { url: "https://example.com/\u202Ea" }, "url:"],
      ["blank first label", { labels: ["  ", "ok"] }, "labels[0]: must not be blank"],
      ["blank title", { title: " \t " }, "title: must not be blank"],
      ["blank text", { text: "\n \n" }, "text: must not be blank"],
      ["NUL in title", { title: "a\u0000" }, "title: must not contain"],
    ];
    for (const [what, fields, message] of bad) {
      it(`${what} → 400`, async () => {
        const before = h.fake.articles.size;
        expectFail(await call(h, "POST", "/api/articles", { headers: FULL, json: { title: "T", text: "t", ...fields } }), 400, message);
        expect(h.fake.articles.size).to.equal(before);
      });
    }

    it("emoji and right-to-left text (without controls) are fine", async () => {
      const res = await call(h, "POST", "/api/articles", { headers: FULL, json: { title: "שלום 😀", text: "مرحبا", externalId: "ext-😀-שלום", labels: ["עברית"] } });
      expect(res.status, res.text).to.equal(200);
    });

    it("path ids with NUL or bidi controls → 400", async () => {
      expectFail(await call(h, "GET", "/api/articles/ab%00c", { headers: READ }), 400, "articleId: must not contain");
      expectFail(await call(h, "GET", `/api/articles_external_id/${encodeURIComponent("x\u202Ey")}`, { headers: READ }), 400, "externalId: must not contain");
    });
  });

  describe("JSON nesting depth (12.8)", () => {
    it("refuses a body nested deeper than 64 before parsing it", async () => {
      const deep = `${"[".repeat(65)}${"]".repeat(65)}`;
      expectFail(await call(h, "POST", "/api/articles", { headers: { ...FULL, "content-type": "application/json" }, body: deep }), 400, "nested more than 64");
    });

    it("refuses a 500,000-deep array quickly", async () => {
      // The reference: a flat body of the same size, read and refused after parsing (text too long).
      const post = (body: string) => call(h, "POST", "/api/articles", { headers: { ...FULL, "content-type": "application/json" }, body });
      let started = performance.now();
      expect((await post(JSON.stringify({ title: "Flat", text: "a".repeat(500_000 - 30) }))).status).to.be.oneOf([200, 400]);
      const flat = performance.now() - started;
      started = performance.now();
      expectFail(await post("[".repeat(500_000)), 400, "nested more than 64");
      // Counting the nesting is one pass: no slower than reading and parsing a flat body of its size.
      expectNoStall("refusing the deep array", performance.now() - started, flat);
    });

    it("counts only structure, not brackets inside strings", () => {
      const text = JSON.stringify({ title: "[".repeat(500), text: '{"\\"[' });
      expect(jsonDepthExceeds(Buffer.from(text), 64)).to.equal(false);
      expect(jsonDepthExceeds(Buffer.from(`{"a":${"[".repeat(64)}${"]".repeat(64)}}`), 64)).to.equal(true);
      expect(jsonDepthExceeds(Buffer.from(`${"[".repeat(64)}${"]".repeat(64)}`), 64)).to.equal(false);
    });
  });

  describe("compressed bodies (13.10)", () => {
    it("Content-Encoding: gzip → 415 ErrorResult", async () => {
      const { gzipSync } = await import("node:zlib");
      const body = gzipSync(JSON.stringify({ title: "T", text: "t" }));
      const res = await call(h, "POST", "/api/articles", { headers: { ...FULL, "content-type": "application/json", "content-encoding": "gzip" }, body });
      expectFail(res, 415, "Content-Encoding 'gzip' is not supported");
    });
  });

  describe("/metrics is off the public port (12.8)", () => {
    it("404 on the public port by default", async () => {
      expectFail(await call(h, "GET", "/metrics"), 404, "No such endpoint");
    });

    it("served there only when asked for", async () => {
      const g = await startHarness({ metricsOnPublicPort: true });
      try {
        const res = await fetch(g.url("/metrics"));
        expect(res.status).to.equal(200);
        expect(await res.text()).to.include("process_cpu_seconds_total");
      } finally {
        await g.close();
      }
    });
  });
});
