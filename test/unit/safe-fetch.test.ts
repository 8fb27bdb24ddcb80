import { expect } from "chai";
import http from "node:http";
import type { AddressInfo } from "node:net";
import zlib from "node:zlib";
import { blockedReason, isPublicAddress } from "../../lib/net/address.js";
import { allowPrivateFrom, parseAllowList } from "../../lib/net/allow-list.js";
import { checkTarget, FetchLimitError, safeFetch, UnsafeUrlError, type SafeFetchOptions } from "../../lib/net/safe-fetch.js";

type Handler = (req: http.IncomingMessage, res: http.ServerResponse, body: string) => void;

async function serve(handler: Handler): Promise<{ url: string; port: number; seen: http.IncomingMessage[]; close(): Promise<void> }> {
  const seen: http.IncomingMessage[] = [];
  const server = http.createServer((req, res) => {
    seen.push(req);
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => handler(req, res, body));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    seen,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

const onlyLoopbackIp: SafeFetchOptions["allowPrivate"] = (host) => host === "127.0.0.1";

async function rejection(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (err) {
    return err as Error;
  }
  throw new Error("expected a rejection");
}

describe("address classification", () => {
  const blocked = [
    "127.0.0.1", "127.8.9.10", "10.1.2.3", "172.16.0.1", "172.31.255.255", "192.168.1.1", "169.254.169.254",
    "100.64.0.1", "100.127.255.254", "0.0.0.0", "224.0.0.1", "239.255.255.250", "255.255.255.255",
    "::", "::1", "::ffff:127.0.0.1", "::ffff:7f00:1", "::ffff:10.0.0.1", "::ffff:0:127.0.0.1", "::127.0.0.1",
    "fe80::1", "fe80::1%eth0", "fd00::1", "fc12:3456::1", "ff02::1", "64:ff9b::a00:1", "2002:c0a8:0101::1", "2001:db8::1",
  ];
  for (const a of blocked) it(`refuses ${a}`, () => expect(blockedReason(a), a).to.be.a("string"));

  const open = ["8.8.8.8", "1.1.1.1", "172.32.0.1", "100.128.0.1", "2606:4700:4700::1111", "2a00:1450:4001:80b::200e", "::ffff:8.8.8.8", "64:ff9b::808:808"];
  for (const a of open) it(`allows ${a}`, () => expect(isPublicAddress(a), a).to.equal(true));

  it("refuses things that are not addresses", () => {
    expect(isPublicAddress("localhost")).to.equal(false);
    expect(isPublicAddress("")).to.equal(false);
  });
});

describe("safeFetch", () => {
  const servers: Array<{ close(): Promise<void> }> = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });
  async function start(handler: Handler) {
    const s = await serve(handler);
    servers.push(s);
    return s;
  }

  it("fetches an allowed page and returns status, headers and body", async () => {
    const s = await start((_req, res) => {
      res.setHeader("content-type", "text/html; charset=utf-8");
      res.end("<p>hello</p>");
    });
    const r = await safeFetch(`${s.url}/a`, { allowPrivate: onlyLoopbackIp, accept: ["text/html"] });
    expect(r.status).to.equal(200);
    expect(r.headers.get("content-type")).to.match(/text\/html/);
    expect(r.body.toString()).to.equal("<p>hello</p>");
    expect(r.url).to.equal(`${s.url}/a`);
  });

  it("refuses loopback without an allow decision, before connecting", async () => {
    const s = await start((_req, res) => res.end("secret"));
    const err = await rejection(safeFetch(s.url));
    expect(err).to.be.instanceOf(UnsafeUrlError);
    expect(err.message).to.match(/loopback/);
    expect(s.seen).to.have.length(0);
  });

  it("refuses a hostname that resolves to 127.0.0.1 and tells allowPrivate which address it got", async () => {
    const s = await start((_req, res) => res.end("secret"));
    const asked: string[] = [];
    const err = await rejection(
      safeFetch(`http://localhost:${s.port}/`, {
        allowPrivate: (host, address) => {
          asked.push(`${host}=${address}`);
          return host === "127.0.0.1";
        },
      }),
    );
    expect(err).to.be.instanceOf(UnsafeUrlError);
    expect(asked.some((a) => a === "localhost=127.0.0.1" || a === "localhost=::1")).to.equal(true);
    expect(s.seen).to.have.length(0);
  });

  for (const host of ["[::1]", "[::ffff:127.0.0.1]", "[::ffff:7f00:1]", "[::]", "[fe80::1]", "[fd00::1]", "[64:ff9b::7f00:1]", "0x7f000001", "2130706433", "127.1", "0", "169.254.169.254", "100.64.0.1", "224.0.0.1"]) {
    it(`refuses http://${host}/`, async () => {
      const err = await rejection(safeFetch(`http://${host}/`, { timeoutMs: 2000 }));
      expect(err).to.be.instanceOf(UnsafeUrlError);
    });
  }

  for (const url of ["file:///etc/passwd", "ftp://example.com/", "gopher://example.com/", "javascript:alert(1)", "not a url"]) {
    it(`refuses ${url}`, async () => {
      const err = await rejection(safeFetch(url));
      expect(err).to.be.instanceOf(UnsafeUrlError);
    });
  }

  it("refuses a redirect to a private address without contacting it", async () => {
    const inner = await start((_req, res) => res.end("internal"));
    const outer = await start((_req, res) => {
      res.writeHead(302, { location: `http://localhost:${inner.port}/admin` });
      res.end();
    });
    const err = await rejection(safeFetch(outer.url, { allowPrivate: onlyLoopbackIp }));
    expect(err).to.be.instanceOf(UnsafeUrlError);
    expect(err.message).to.match(/redirect|localhost/);
    expect(inner.seen).to.have.length(0);

    const meta = await start((_req, res) => {
      res.writeHead(301, { location: "http://169.254.169.254/latest/meta-data/" });
      res.end();
    });
    expect(await rejection(safeFetch(meta.url, { allowPrivate: onlyLoopbackIp }))).to.be.instanceOf(UnsafeUrlError);
    const scheme = await start((_req, res) => {
      res.writeHead(302, { location: "file:///etc/passwd" });
      res.end();
    });
    expect(await rejection(safeFetch(scheme.url, { allowPrivate: onlyLoopbackIp }))).to.be.instanceOf(UnsafeUrlError);
  });

  it("follows allowed redirects, turns a 303 into GET, and stops after maxRedirects", async () => {
    const s = await start((req, res, body) => {
      const n = Number(new URL(req.url!, "http://x").searchParams.get("n") ?? 0);
      if (req.url!.startsWith("/see-other")) {
        res.writeHead(303, { location: "/final" });
        return res.end();
      }
      if (req.url === "/final") return res.end(`${req.method} ${body}`);
      res.writeHead(302, { location: `/loop?n=${n + 1}` });
      res.end();
    });
    const r = await safeFetch(`${s.url}/see-other`, { method: "POST", body: "payload", allowPrivate: onlyLoopbackIp });
    expect(r.body.toString()).to.equal("GET ");
    expect(r.url).to.equal(`${s.url}/final`);

    const err = await rejection(safeFetch(`${s.url}/loop`, { allowPrivate: onlyLoopbackIp, maxRedirects: 3 }));
    expect(err).to.be.instanceOf(FetchLimitError);
    expect((err as FetchLimitError).code).to.equal("too_many_redirects");
    expect(s.seen.filter((r) => r.url!.startsWith("/loop"))).to.have.length(4);
  });

  it("drops credentials when a redirect changes host, keeps them on the same origin", async () => {
    const other = await start((req, res) => res.end(JSON.stringify({ auth: req.headers.authorization ?? null, cookie: req.headers.cookie ?? null })));
    const first = await start((req, res) => {
      if (req.url === "/same") {
        res.writeHead(302, { location: "/echo" });
        return res.end();
      }
      if (req.url === "/echo") return res.end(JSON.stringify({ auth: req.headers.authorization ?? null }));
      // Same IP, different port: a different origin.
      res.writeHead(302, { location: `http://127.0.0.1:${other.port}/` });
      res.end();
    });
    const headers = { authorization: "Bearer s3cr3t", cookie: "sid=1" };
    const away = await safeFetch(`${first.url}/away`, { headers, allowPrivate: onlyLoopbackIp });
    expect(JSON.parse(away.body.toString())).to.deep.equal({ auth: null, cookie: null });
    const same = await safeFetch(`${first.url}/same`, { headers, allowPrivate: onlyLoopbackIp });
    expect(JSON.parse(same.body.toString())).to.deep.equal({ auth: "Bearer s3cr3t" });
  });

  it("aborts a body larger than maxBytes, declared or streamed", async () => {
    const s = await start((req, res) => {
      if (req.url === "/declared") {
        res.writeHead(200, { "content-type": "text/html", "content-length": String(10_000) });
        return res.end("x".repeat(10_000));
      }
      res.writeHead(200, { "content-type": "text/html" });
      const chunk = "y".repeat(1024);
      let sent = 0;
      const timer = setInterval(() => {
        if (res.destroyed || sent > 1000) {
          clearInterval(timer);
          return res.end();
        }
        res.write(chunk);
        sent++;
      }, 1);
    });
    const declared = await rejection(safeFetch(`${s.url}/declared`, { maxBytes: 4096, allowPrivate: onlyLoopbackIp }));
    expect(declared).to.be.instanceOf(FetchLimitError);
    expect((declared as FetchLimitError).code).to.equal("too_large");
    const streamed = await rejection(safeFetch(`${s.url}/streamed`, { maxBytes: 8192, allowPrivate: onlyLoopbackIp }));
    expect(streamed).to.be.instanceOf(FetchLimitError);
    expect((streamed as FetchLimitError).code).to.equal("too_large");
  });

  it("limits the decompressed size, not the compressed one", async () => {
    const bomb = zlib.gzipSync(Buffer.alloc(2 * 1024 * 1024, 0x20));
    const small = zlib.gzipSync(Buffer.from("<p>compressed</p>"));
    const s = await start((req, res) => {
      res.writeHead(200, { "content-type": "text/html", "content-encoding": "gzip" });
      res.end(req.url === "/bomb" ? bomb : small);
    });
    expect(bomb.length).to.be.below(64 * 1024);
    const ok = await safeFetch(`${s.url}/small`, { allowPrivate: onlyLoopbackIp });
    expect(ok.body.toString()).to.equal("<p>compressed</p>");
    const err = await rejection(safeFetch(`${s.url}/bomb`, { maxBytes: 64 * 1024, allowPrivate: onlyLoopbackIp }));
    expect((err as FetchLimitError).code).to.equal("too_large");
  });

  it("times out a server that never answers, and one that drips", async () => {
    const s = await start((req, res) => {
      if (req.url === "/drip") {
        res.writeHead(200, { "content-type": "text/html" });
        const timer = setInterval(() => (res.destroyed ? clearInterval(timer) : res.write(".")), 50);
        return;
      }
      // never respond
    });
    const silent = await rejection(safeFetch(`${s.url}/silent`, { timeoutMs: 300, allowPrivate: onlyLoopbackIp }));
    expect(silent).to.be.instanceOf(FetchLimitError);
    expect((silent as FetchLimitError).code).to.equal("timeout");
    const drip = await rejection(safeFetch(`${s.url}/drip`, { timeoutMs: 300, allowPrivate: onlyLoopbackIp }));
    // The drip never ends: only a deadline on the whole answer stops it (a hang would be this test's timeout).
    expect((drip as FetchLimitError).code).to.equal("timeout");
  });

  it("refuses a response whose content type is not accepted, but accepts parameters on an allowed type", async () => {
    const s = await start((req, res) => {
      if (req.url === "/pdf") {
        res.writeHead(200, { "content-type": "application/pdf" });
        return res.end("%PDF-1.7");
      }
      if (req.url === "/none") return res.end("???");
      res.writeHead(200, { "content-type": "application/xhtml+xml; charset=utf-8" });
      res.end("<html/>");
    });
    const accept = ["text/html", "application/xhtml+xml"];
    const pdf = await rejection(safeFetch(`${s.url}/pdf`, { accept, allowPrivate: onlyLoopbackIp }));
    expect(pdf).to.be.instanceOf(FetchLimitError);
    expect((pdf as FetchLimitError).code).to.equal("content_type");
    expect(pdf.message).to.match(/application\/pdf/);
    const none = await rejection(safeFetch(`${s.url}/none`, { accept, allowPrivate: onlyLoopbackIp }));
    expect((none as FetchLimitError).code).to.equal("content_type");
    expect((await safeFetch(`${s.url}/xhtml`, { accept, allowPrivate: onlyLoopbackIp })).status).to.equal(200);
  });

  it("connects to the address it checked, never resolving the name a second time", async () => {
    const s = await start((req, res) => res.end(req.headers.host));
    let lookups = 0;
    // "rebind.invalid" does not exist in DNS: the request can only succeed if
    // the checked answer is the one used for the connection.
    const r = await safeFetch(`http://rebind.invalid:${s.port}/`, {
      resolve: async () => {
        lookups++;
        return [{ address: "127.0.0.1", family: 4 }];
      },
      allowPrivate: (host, address) => host === "rebind.invalid" && address === "127.0.0.1",
    });
    expect(r.body.toString()).to.equal(`rebind.invalid:${s.port}`);
    expect(lookups).to.equal(1);
  });

  it("refuses a name when any of its addresses is private", async () => {
    const err = await rejection(
      safeFetch("http://mixed.invalid/", {
        resolve: async () => [
          { address: "93.184.216.34", family: 4 },
          { address: "10.0.0.5", family: 4 },
        ],
      }),
    );
    expect(err).to.be.instanceOf(UnsafeUrlError);
    expect(err.message).to.match(/private/);
  });

  it("reports an unknown host as a lookup failure, not a crash", async () => {
    const err = await rejection(safeFetch("http://does-not-exist.invalid/", { timeoutMs: 5000 }));
    expect(err).to.be.instanceOf(FetchLimitError);
    expect((err as FetchLimitError).code).to.equal("dns");
  });

  it("stops when the caller aborts", async () => {
    const s = await start(() => {});
    const ac = new AbortController();
    setTimeout(() => ac.abort(new Error("shutting down")), 50);
    const err = await rejection(safeFetch(s.url, { signal: ac.signal, allowPrivate: onlyLoopbackIp }));
    expect(err.message).to.equal("shutting down");
  });
});

describe("FETCH_ALLOW_PRIVATE entries (host[:port])", () => {
  it("parses hosts, addresses and ports, and refuses bad entries naming the variable", () => {
    expect(parseAllowList(" cms.intranet , 10.0.0.5:8080,[FD00::0:1]:443, fd00::2 ,Hooks.Local.:9000")).to.deep.equal([
      { host: "cms.intranet" },
      { host: "10.0.0.5", port: 8080 },
      { host: "fd00::1", port: 443 },
      { host: "fd00::2" },
      { host: "hooks.local", port: 9000 },
    ]);
    expect(parseAllowList(undefined)).to.deep.equal([]);
    for (const bad of ["host:0", "host:70000", "host:http", "a b", "http://x/y", "[::1]:x", "::1:80x"]) {
      expect(() => parseAllowList(bad), bad).to.throw(/FETCH_ALLOW_PRIVATE/);
    }
  });

  it("matches the host as written or the address it resolved to, and a port only when listed", () => {
    const allow = allowPrivateFrom("cms.intranet:8080,10.0.0.9,[::1]:3000")!;
    expect(allow("cms.intranet", "10.0.0.1", 8080)).to.equal(true);
    expect(allow("CMS.intranet", "10.0.0.1", 8080)).to.equal(true);
    expect(allow("cms.intranet", "10.0.0.1", 8081)).to.equal(false);
    expect(allow("other.intranet", "10.0.0.9", 22)).to.equal(true);
    expect(allow("::1", "::1", 3000)).to.equal(true);
    expect(allow("0:0:0:0:0:0:0:1", "0:0:0:0:0:0:0:1", 3000)).to.equal(true);
    expect(allow("::1", "::1", 3001)).to.equal(false);
    expect(allowPrivateFrom(" , ")).to.equal(undefined);
  });

  it("reaches an allow-listed host:port but refuses the same host on another port, before connecting", async () => {
    const allowed = await serve((_req, res) => res.end("allowed"));
    const other = await serve((_req, res) => res.end("other"));
    try {
      const opts = { allowPrivate: allowPrivateFrom(`127.0.0.1:${allowed.port}`) };
      const ok = await safeFetch(`${allowed.url}/x`, opts);
      expect(ok.body.toString()).to.equal("allowed");
      const err = await rejection(safeFetch(`${other.url}/x`, opts));
      expect(err).to.be.instanceOf(UnsafeUrlError);
      expect(err.message).to.match(/loopback/);
      expect(other.seen).to.have.length(0);
      // A bare host entry allows every port.
      const any = await safeFetch(`${other.url}/x`, { allowPrivate: allowPrivateFrom("127.0.0.1") });
      expect(any.body.toString()).to.equal("other");
    } finally {
      await allowed.close();
      await other.close();
    }
  });

  it("applies the port rule to redirects too", async () => {
    const target = await serve((_req, res) => res.end("secret"));
    const start = await serve((_req, res) => {
      res.writeHead(302, { location: `${target.url}/internal` });
      res.end();
    });
    try {
      const err = await rejection(safeFetch(`${start.url}/`, { allowPrivate: allowPrivateFrom(`127.0.0.1:${start.port}`) }));
      expect(err).to.be.instanceOf(UnsafeUrlError);
      expect(target.seen).to.have.length(0);
    } finally {
      await target.close();
      await start.close();
    }
  });

  it("checkTarget refuses a private URL without contacting it, and accepts a public or unresolvable one", async () => {
    const rx = await serve((_req, res) => res.end());
    try {
      const err = await rejection(checkTarget(`${rx.url}/hook`));
      expect(err).to.be.instanceOf(UnsafeUrlError);
      expect(rx.seen).to.have.length(0);
      await checkTarget(`${rx.url}/hook`, { allowPrivate: allowPrivateFrom(`127.0.0.1:${rx.port}`) });
      await checkTarget("https://8.8.8.8/hook");
      await checkTarget("https://nowhere.invalid/hook", { resolve: async () => Promise.reject(new Error("ENOTFOUND")) });
      expect((await rejection(checkTarget("ftp://8.8.8.8/"))).message).to.match(/scheme/);
      expect((await rejection(checkTarget("https://x/", { resolve: async () => [{ address: "10.0.0.1", family: 4 }] }))).message).to.match(/private/);
    } finally {
      await rx.close();
    }
  });
});
