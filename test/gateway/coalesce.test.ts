import { expect } from "chai";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, type HandlerContext } from "@connectrpc/connect";
import { ArticleSchema, ArticleStatus, ArticlesService } from "../../gen/articles/v1/articles_pb.js";
import { logger } from "../../lib/log.js";
import { bearerToken } from "../../lib/rpc/caller.js";
import { startRpcServer, type RpcServer } from "../../lib/rpc/server.js";
import type { RunningService } from "../../lib/service.js";
import { startGateway } from "../../gateway/app.js";
import { createCoalescer } from "../../gateway/coalesce.js";
import { MemoryBlobs } from "./support.js";

/** An upstream whose reads wait at a gate, so the test decides what is in flight. */
class GatedArticles {
  readonly tokens = new Map<string, string>([
    ["token-a", "p1"],
    ["token-b", "p2"],
  ]);
  title = "First title";
  calls: string[] = [];
  private gate: Promise<void> = Promise.resolve();
  private open: () => void = () => {};

  hold(): void {
    this.gate = new Promise((r) => (this.open = r));
  }
  release(): void {
    this.open();
    this.gate = Promise.resolve();
  }

  private project(ctx: HandlerContext): string {
    const p = this.tokens.get(bearerToken(ctx.requestHeader));
    if (!p) throw new ConnectError("Invalid API token", Code.Unauthenticated);
    return p;
  }

  register(router: Parameters<Parameters<typeof startRpcServer>[0]["routes"]>[0]): void {
    router.service(ArticlesService, {
      getArticle: async (req, ctx) => {
        const project = this.project(ctx);
        this.calls.push(`get ${project} ${req.id}`);
        await this.gate;
        if (project !== "p1" || req.id !== "a1") throw new ConnectError("Article not found", Code.NotFound);
        return { article: create(ArticleSchema, { id: "a1", projectId: "p1", title: this.title, text: "t", added: 1n, status: ArticleStatus.WAITING, voice: "alloy", lang: "en-US" }) };
      },
      listArticles: async (req, ctx) => {
        const project = this.project(ctx);
        this.calls.push(`list ${project} ${req.limit}`);
        await this.gate;
        return { count: 0n, articles: [] };
      },
    });
  }
}

const get = (url: string, token: string) => fetch(url, { headers: { authorization: `Bearer ${token}` } }).then(async (r) => ({ status: r.status, text: await r.text() }));

async function until(what: string, ok: () => boolean, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe("gateway: identical concurrent reads share one upstream call", function () {
  const log = logger("coalesce-test");
  let upstream: RpcServer;
  let gateway: RunningService;
  const fake = new GatedArticles();

  before(async () => {
    upstream = await startRpcServer({ name: "gated-articles", services: [ArticlesService.typeName], routes: (r) => fake.register(r), host: "127.0.0.1", port: 0, log });
    gateway = await startGateway({ articlesUrl: upstream.url, healthTargets: [], blobs: new MemoryBlobs(), log, host: "127.0.0.1", port: 0, drainMs: 500 });
  });
  after(async () => {
    fake.release();
    await gateway?.close();
    await upstream?.close();
  });
  beforeEach(() => {
    fake.calls = [];
    fake.release();
  });

  it("answers ten identical reads in flight with one upstream call and the same bytes", async () => {
    fake.hold();
    const answers = Array.from({ length: 10 }, () => get(`${gateway.url}/api/articles/a1`, "token-a"));
    await until("the upstream call", () => fake.calls.length > 0);
    await new Promise((r) => setTimeout(r, 50));
    fake.release();
    const results = await Promise.all(answers);
    expect(results.map((r) => r.status)).to.deep.equal(Array(10).fill(200));
    expect(new Set(results.map((r) => r.text)).size).to.equal(1);
    expect(JSON.parse(results[0].text).article.title).to.equal("First title");
    expect(fake.calls).to.deep.equal(["get p1 a1"]);
  });

  it("never shares between different tokens, paths or queries", async () => {
    fake.hold();
    const answers = [
      get(`${gateway.url}/api/articles/a1`, "token-a"),
      get(`${gateway.url}/api/articles/a1`, "token-b"),
      get(`${gateway.url}/api/articles?limit=10`, "token-a"),
      get(`${gateway.url}/api/articles?limit=11`, "token-a"),
    ];
    await until("four upstream calls", () => fake.calls.length === 4);
    fake.release();
    const [a, b, l10, l11] = await Promise.all(answers);
    expect(a.status).to.equal(200);
    expect(b.status, "another project's token must not get p1's article").to.equal(404);
    expect([l10.status, l11.status]).to.deep.equal([200, 200]);
    expect(fake.calls.sort()).to.deep.equal(["get p1 a1", "get p2 a1", "list p1 10", "list p1 11"]);
  });

  it("keeps no answer once it is sent: changes and revocations show on the next read", async () => {
    expect((await get(`${gateway.url}/api/articles/a1`, "token-a")).status).to.equal(200);
    fake.title = "Second title";
    expect(JSON.parse((await get(`${gateway.url}/api/articles/a1`, "token-a")).text).article.title).to.equal("Second title");
    fake.tokens.delete("token-a");
    try {
      expect((await get(`${gateway.url}/api/articles/a1`, "token-a")).status).to.equal(401);
    } finally {
      fake.tokens.set("token-a", "p1");
    }
    // The revoked call is refused upstream before it counts as a read.
    expect(fake.calls).to.deep.equal(["get p1 a1", "get p1 a1"]);
  });

  it("shares a failure with the reads waiting for it, then forgets it", async () => {
    fake.hold();
    const answers = [get(`${gateway.url}/api/articles/missing`, "token-a"), get(`${gateway.url}/api/articles/missing`, "token-a")];
    await until("the upstream call", () => fake.calls.length > 0);
    await new Promise((r) => setTimeout(r, 50));
    fake.release();
    expect((await Promise.all(answers)).map((r) => r.status)).to.deep.equal([404, 404]);
    expect(fake.calls).to.have.length(1);
    expect((await get(`${gateway.url}/api/articles/missing`, "token-a")).status).to.equal(404);
    expect(fake.calls).to.have.length(2);
  });
});

describe("gateway: coalescer bounds", () => {
  it("stops sharing beyond maxInFlight distinct keys and drops entries when they settle", async () => {
    const c = createCoalescer<number>(2);
    let runs = 0;
    const opens: Array<() => void> = [];
    const work = () => {
      runs++;
      return new Promise<number>((r) => opens.push(() => r(runs)));
    };
    const p = [c.run("a", work), c.run("a", work), c.run("b", work), c.run("c", work), c.run("c", work)];
    expect(c.size).to.equal(2);
    // Shared calls start one event-loop turn later (requests of the same batch join them).
    expect(runs, "c runs at once, twice: the map is full").to.equal(2);
    await new Promise((r) => setImmediate(r));
    expect(runs, "a once, b once, c twice (not shared: the map is full)").to.equal(4);
    for (const o of opens) o();
    await Promise.all(p);
    expect(c.size).to.equal(0);
    const failing = createCoalescer<number>();
    const boom = failing.run("x", () => Promise.reject(new Error("boom")));
    await boom.catch(() => {});
    expect(failing.size).to.equal(0);
  });
});
