// Test doubles for the gateway: an in-memory ArticlesService behind a real
// Connect server (so the gateway's RPC path is exercised end to end) and a
// Map-backed BlobStore.
import { createHash } from "node:crypto";
import { Readable } from "node:stream";
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { Code, ConnectError, type HandlerContext } from "@connectrpc/connect";
import {
  ArticleSchema,
  ArticleStatus,
  ArticlesService,
  type Article,
  type CreateArticleRequest,
  type ListArticlesRequest,
  type UpdateArticleRequest,
} from "../../gen/articles/v1/articles_pb.js";
import { AuthService, Scope } from "../../gen/auth/v1/auth_pb.js";
import type { BlobInfo, BlobStore } from "../../lib/blob/port.js";
import { logger } from "../../lib/log.js";
import { bearerToken } from "../../lib/rpc/caller.js";
import { startRpcServer, type RpcServer } from "../../lib/rpc/server.js";
import type { RunningService } from "../../lib/service.js";
import { startGateway, type GatewayOptions } from "../../gateway/app.js";

export const FULL = { authorization: "Bearer full-token" };
export const READ = { authorization: "Bearer read-token" };
export const OTHER = { authorization: "Bearer other-token" };

const TOKENS: Record<string, { project: string; scope: "full" | "read" }> = {
  "full-token": { project: "p1", scope: "full" },
  "read-token": { project: "p1", scope: "read" },
  "other-token": { project: "p2", scope: "full" },
};

/** Titles that make the fake fail the way a real service might. */
export const FAILING_TITLES: Record<string, Code> = {
  "boom-internal": Code.Internal,
  "boom-exhausted": Code.ResourceExhausted,
  "boom-unavailable": Code.Unavailable,
  "boom-deadline": Code.DeadlineExceeded,
};
export const SECRET_DETAIL = "mongodb://admin:hunter2@db/secret";

export class FakeArticles {
  readonly articles = new Map<string, Article>();
  readonly seenHeaders: Headers[] = [];
  readonly updates: UpdateArticleRequest[] = [];
  readonly lists: ListArticlesRequest[] = [];
  private seq = 0;
  private clock = 1_700_000_000;

  private caller(ctx: HandlerContext, scope: "read" | "full"): string {
    this.seenHeaders.push(ctx.requestHeader);
    const t = TOKENS[bearerToken(ctx.requestHeader)];
    if (!t) throw new ConnectError("Invalid API token", Code.Unauthenticated);
    if (scope === "full" && t.scope !== "full") {
      throw new ConnectError("This token is read-only; creating, updating and deleting articles needs a full token", Code.PermissionDenied);
    }
    return t.project;
  }

  private find(project: string, pick: (a: Article) => boolean): Article {
    for (const a of this.articles.values()) if (a.projectId === project && pick(a)) return a;
    throw new ConnectError("Article not found", Code.NotFound);
  }

  private externalIdTaken(externalId: string | undefined, except?: string): boolean {
    return externalId !== undefined && [...this.articles.values()].some((a) => a.externalId === externalId && a.id !== except);
  }

  /** Puts an article straight into the store (for states only the worker reaches). */
  seed(fields: MessageInitShape<typeof ArticleSchema>): Article {
    const a = create(ArticleSchema, {
      id: `seeded-${++this.seq}`,
      projectId: "p1",
      title: "Seeded",
      text: "Seeded text",
      added: BigInt(++this.clock),
      status: ArticleStatus.WAITING,
      voice: "alloy",
      lang: "en-US",
      revision: 1n,
      ...fields,
    });
    this.articles.set(a.id, a);
    return a;
  }

  /** Sizes of the CreateArticles calls seen (the gateway groups concurrent creates of one token). */
  readonly batches: number[] = [];
  readonly batchedTitles: string[] = [];

  private createOne(project: string, req: CreateArticleRequest): string {
    const failing = FAILING_TITLES[req.title];
    if (failing !== undefined) throw new ConnectError(`upstream trouble at ${SECRET_DETAIL}`, failing);
    if (this.externalIdTaken(req.externalId)) throw new ConnectError(`externalId '${req.externalId}' is already used`, Code.AlreadyExists);
    const a = this.seed({
      id: `${req.title.toLowerCase().replace(/[^a-z0-9]+/g, "-").slice(0, 40)}-${this.seq + 1}`,
      projectId: project,
      title: req.title,
      text: req.text,
      url: req.url,
      externalId: req.externalId,
      voice: req.voice ?? "alloy",
      lang: req.lang ?? "en-US",
      isRaw: req.isRaw,
      parse: req.parse,
      prompt: req.prompt,
      labels: req.labels,
    });
    return a.id;
  }

  /** Authenticate calls seen (the gateway's check before it reads a write's body). */
  authCalls = 0;

  registerAuth(router: Parameters<Parameters<typeof startRpcServer>[0]["routes"]>[0]): void {
    router.service(AuthService, {
      authenticate: (req) => {
        this.authCalls++;
        const t = TOKENS[req.token];
        if (!t) throw new ConnectError("unknown API token", Code.Unauthenticated);
        return { projectId: t.project, scope: t.scope === "full" ? Scope.FULL : Scope.READ, tokenId: req.token };
      },
    });
  }

  register(router: Parameters<Parameters<typeof startRpcServer>[0]["routes"]>[0]): void {
    router.service(ArticlesService, {
      createArticle: (req, ctx) => {
        const project = this.caller(ctx, "full");
        return { id: this.createOne(project, req) };
      },
      createArticles: (req, ctx) => {
        const project = this.caller(ctx, "full");
        this.batches.push(req.items.length);
        this.batchedTitles.push(...req.items.map((i) => i.article?.title ?? ""));
        return {
          results: req.items.map((item) => {
            try {
              return { outcome: { case: "id" as const, value: this.createOne(project, item.article!) } };
            } catch (e) {
              const err = ConnectError.from(e);
              return { outcome: { case: "error" as const, value: { code: err.code, message: err.rawMessage } } };
            }
          }),
        };
      },
      getArticle: (req, ctx) => ({ article: this.find(this.caller(ctx, "read"), (a) => a.id === req.id) }),
      getArticleByExternalId: (req, ctx) => ({ article: this.find(this.caller(ctx, "read"), (a) => a.externalId === req.externalId) }),
      getArticleByUrl: (req, ctx) => ({ article: this.find(this.caller(ctx, "read"), (a) => a.url === req.url) }),
      listArticles: (req, ctx) => {
        const project = this.caller(ctx, "read");
        this.lists.push(req);
        const live = [...this.articles.values()]
          .filter((a) => a.projectId === project && a.status !== ArticleStatus.DELETED)
          .filter((a) => (req.status === undefined || a.status === req.status) && (req.label === undefined || a.labels.includes(req.label)))
          .sort((x, y) => Number(y.added - x.added) || x.id.localeCompare(y.id));
        const limit = req.limit || 10;
        return { count: BigInt(live.length), articles: live.slice(req.offset, req.offset + limit) };
      },
      updateArticle: (req, ctx) => {
        const project = this.caller(ctx, "full");
        this.updates.push(req);
        const a = this.find(project, (x) => (req.target.case === "id" ? x.id === req.target.value : x.externalId === req.target.value));
        if (a.status === ArticleStatus.DELETED) throw new ConnectError("Article is deleted and cannot be updated", Code.InvalidArgument);
        if (this.externalIdTaken(req.newExternalId, a.id)) throw new ConnectError(`externalId '${req.newExternalId}' is already used`, Code.AlreadyExists);
        a.title = req.title;
        a.text = req.text;
        if (req.url !== undefined) a.url = req.url;
        if (req.newExternalId !== undefined) a.externalId = req.newExternalId;
        if (req.prompt) a.prompt = req.prompt.clear ? undefined : req.prompt.value;
        if (req.labels) a.labels = [...req.labels.values];
        a.status = ArticleStatus.WAITING;
        a.revision += 1n;
        return { id: a.id };
      },
      deleteArticle: (req, ctx) => {
        const a = this.find(this.caller(ctx, "full"), (x) => x.id === req.id);
        a.status = ArticleStatus.DELETED;
        return {};
      },
    });
  }
}

export class MemoryBlobs implements BlobStore {
  readonly files = new Map<string, { data: Buffer; info: BlobInfo }>();
  readonly reads: { key: string; range?: { start: number; end: number } }[] = [];
  /** Pause between streamed chunks, to keep a download in flight. */
  chunkDelayMs = 0;

  async put(key: string, data: Buffer, contentType: string): Promise<BlobInfo> {
    const info: BlobInfo = { size: data.length, etag: createHash("sha256").update(data).digest("hex").slice(0, 32), contentType, modified: new Date() };
    this.files.set(key, { data, info });
    return info;
  }
  async stat(key: string): Promise<BlobInfo | null> {
    return this.files.get(key)?.info ?? null;
  }
  async read(key: string, range?: { start: number; end: number }): Promise<Readable> {
    const f = this.files.get(key);
    // As both real stores say it (lib/blob/port.ts).
    if (!f) throw Object.assign(new Error(`no such blob ${key}`), { code: "ENOENT" });
    this.reads.push({ key, range });
    const slice = range ? f.data.subarray(range.start, range.end + 1) : f.data;
    // Several chunks, as a real store would stream them.
    const chunks: Buffer[] = [];
    for (let i = 0; i < slice.length; i += 1024) chunks.push(slice.subarray(i, i + 1024));
    const delay = this.chunkDelayMs;
    if (!delay) return Readable.from(chunks);
    return Readable.from(
      (async function* () {
        for (const c of chunks) {
          await new Promise((r) => setTimeout(r, delay));
          yield c;
        }
      })(),
    );
  }
  async deletePrefix(prefix: string): Promise<void> {
    for (const k of this.files.keys()) if (k.startsWith(prefix)) this.files.delete(k);
  }
  async list(prefix: string): Promise<string[]> {
    return [...this.files.keys()].filter((k) => k.startsWith(prefix));
  }
  async close(): Promise<void> {}
}

export interface Harness {
  gateway: RunningService;
  upstream: RpcServer;
  fake: FakeArticles;
  blobs: MemoryBlobs;
  url: (path: string) => string;
  close(): Promise<void>;
}

export async function startHarness(overrides: Partial<GatewayOptions> = {}): Promise<Harness> {
  const log = logger("gateway-test");
  const fake = new FakeArticles();
  const upstream = await startRpcServer({
    name: "fake-articles",
    services: [ArticlesService.typeName, AuthService.typeName],
    routes: (r) => {
      fake.register(r);
      fake.registerAuth(r);
    },
    host: "127.0.0.1",
    port: 0,
    log,
  });
  const blobs = new MemoryBlobs();
  const gateway = await startGateway({
    articlesUrl: upstream.url,
    healthTargets: [{ name: "articles", url: upstream.url }],
    authUrl: upstream.url,
    blobs,
    log,
    host: "127.0.0.1",
    port: 0,
    drainMs: 1_000,
    ...overrides,
  });
  return {
    gateway,
    upstream,
    fake,
    blobs,
    url: (path) => `${gateway.url}${path}`,
    async close() {
      await gateway.close();
      await upstream.close();
    },
  };
}

/** JSON request helper: returns status, headers and the parsed body. */
export async function call(
  h: Harness,
  method: string,
  path: string,
  opts: { headers?: Record<string, string>; json?: unknown; body?: string | Buffer } = {},
): Promise<{ status: number; headers: Headers; body: any; text: string }> {
  const headers: Record<string, string> = { ...(opts.headers ?? {}) };
  let body: string | Buffer | undefined = opts.body;
  if (opts.json !== undefined) {
    body = JSON.stringify(opts.json);
    headers["content-type"] ??= "application/json";
  }
  const res = await fetch(h.url(path), { method, headers, body: typeof body === "string" || body === undefined ? body : new Uint8Array(body), redirect: "manual" });
  const text = await res.text();
  let parsed: unknown = undefined;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: res.status, headers: res.headers, body: parsed, text };
}
