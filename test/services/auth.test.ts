import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { expect } from "chai";
import { Code, ConnectError } from "@connectrpc/connect";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { Scope } from "../../gen/auth/v1/auth_pb.js";
import { ConfigError } from "../../lib/config.js";
import { closeRpcClients } from "../../lib/rpc/client.js";
import { applySeedTokens, ensureDemoProject } from "../../services/auth/seed.js";
import { openEmbeddedAuthStore } from "../../services/auth/store/open.js";
import { ADMIN, INTERNAL, rejection, startAuthFixture, type AuthFixture } from "./auth-fixture.js";

const SEED_FULL = "seed-full-token-acme-0001";
const SEED_READ = "seed-read-token-acme-0002";
const SEED = JSON.stringify([
  { token: SEED_FULL, project: "acme", scope: "full" },
  { token: SEED_READ, project: "acme", scope: "read" },
]);

async function connectError(fn: () => Promise<unknown>): Promise<ConnectError> {
  return ConnectError.from(await rejection(fn));
}

describe("auth service", () => {
  let f: AuthFixture;
  beforeEach(async () => {
    f = await startAuthFixture({ adminToken: ADMIN });
    await applySeedTokens(f.store, SEED);
  });
  afterEach(async () => {
    await f.stop();
  });
  after(() => closeRpcClients());

  describe("Authenticate", () => {
    it("resolves full and read tokens to their project and scope", async () => {
      const full = await f.internal.authenticate({ token: SEED_FULL });
      const read = await f.internal.authenticate({ token: SEED_READ });
      expect([full.projectId, full.scope]).to.deep.equal(["acme", Scope.FULL]);
      expect([read.projectId, read.scope]).to.deep.equal(["acme", Scope.READ]);
      expect(full.tokenId).to.match(/^tok_/);
      expect(full.tokenId).to.not.equal(read.tokenId);
    });

    it("answers only the internal credential: anyone else learns nothing about a token", async () => {
      for (const client of [f.client, f.clientWith(SEED_FULL), f.clientWith(ADMIN), f.clientWith("not-the-internal-token-at-all")]) {
        for (const token of [SEED_FULL, "unknown-token-guess"]) {
          const e = await connectError(() => client.authenticate({ token }));
          expect(e.code, token).to.equal(Code.PermissionDenied);
          expect(e.rawMessage).to.match(/reserved for internal services/);
        }
      }
    });

    it("rejects an unknown token without echoing it", async () => {
      const guess = SEED_FULL.slice(0, -1) + "X";
      const e = await connectError(() => f.internal.authenticate({ token: guess }));
      expect(e.code).to.equal(Code.Unauthenticated);
      expect(e.rawMessage).to.match(/unknown API token/);
      expect(e.message).to.not.include(guess);
    });

    it("rejects an empty token with a hint", async () => {
      const e = await connectError(() => f.internal.authenticate({ token: "" }));
      expect(e.code).to.equal(Code.Unauthenticated);
      expect(e.rawMessage).to.match(/missing API token.*Bearer/);
    });

    it("rejects a revoked token, saying it was revoked", async () => {
      const { tokenId } = await f.internal.authenticate({ token: SEED_READ });
      await f.clientWith(ADMIN).revokeToken({ tokenId });
      const e = await connectError(() => f.internal.authenticate({ token: SEED_READ }));
      expect(e.code).to.equal(Code.Unauthenticated);
      expect(e.rawMessage).to.match(/revoked/);
      expect(e.message).to.not.include(SEED_READ);
      // The other token of the project is unaffected.
      expect((await f.internal.authenticate({ token: SEED_FULL })).projectId).to.equal("acme");
    });
  });

  describe("admin RPCs", () => {
    it("need the admin token: none → Unauthenticated, wrong → Unauthenticated, publisher → PermissionDenied", async () => {
      const none = await connectError(() => f.client.createProject({ id: "x1" }));
      expect(none.code).to.equal(Code.Unauthenticated);
      expect(none.rawMessage).to.include("Bearer <ADMIN_TOKEN>");

      const wrong = await connectError(() => f.clientWith(ADMIN + "x").listProjects({}));
      expect(wrong.code).to.equal(Code.Unauthenticated);
      expect(wrong.message).to.not.include(ADMIN);

      const publisher = await connectError(() => f.clientWith(SEED_FULL).issueToken({ projectId: "acme", scope: Scope.FULL }));
      expect(publisher.code).to.equal(Code.PermissionDenied);
      expect(publisher.message).to.not.include(SEED_FULL);

      // Nothing was created by the refused calls.
      const { projects } = await f.clientWith(ADMIN).listProjects({});
      expect(projects.map((p) => p.id)).to.deep.equal(["acme"]);
      expect(await f.store.listTokens("acme")).to.have.length(2);
    });

    it("work with the admin token", async () => {
      const admin = f.clientWith(ADMIN);
      const { project } = await admin.createProject({ id: "news_1", name: "News One" });
      expect(project?.id).to.equal("news_1");
      expect(project?.name).to.equal("News One");
      expect(Number(project?.created)).to.be.closeTo(Date.now() / 1000, 60);
      const { projects } = await admin.listProjects({});
      expect(projects.map((p) => p.id)).to.deep.equal(["acme", "news_1"]);
    });

    it("are disabled when no ADMIN_TOKEN is configured, whatever is sent", async () => {
      const g = await startAuthFixture();
      try {
        for (const c of [g.client, g.clientWith(ADMIN), g.clientWith("anything-else")]) {
          const e = await connectError(() => c.listProjects({}));
          expect(e.code).to.equal(Code.PermissionDenied);
          expect(e.rawMessage).to.equal("admin API disabled: set ADMIN_TOKEN");
        }
      } finally {
        await g.stop();
      }
    });

    it("issue → authenticate → revoke → Unauthenticated", async () => {
      const admin = f.clientWith(ADMIN);
      const issued = await admin.issueToken({ projectId: "acme", scope: Scope.READ });
      expect(issued.token).to.match(/^aa_[A-Za-z0-9_-]{43}$/);
      expect(issued.info?.prefix).to.equal(issued.token.slice(0, 8));
      expect(issued.info?.revoked).to.equal(0n);

      const who = await f.internal.authenticate({ token: issued.token });
      expect(who).to.include({ projectId: "acme", scope: Scope.READ, tokenId: issued.info?.id });

      await admin.revokeToken({ tokenId: issued.info!.id });
      const e = await connectError(() => f.internal.authenticate({ token: issued.token }));
      expect(e.code).to.equal(Code.Unauthenticated);

      const { tokens } = await admin.listTokens({ projectId: "acme" });
      const listed = tokens.find((t) => t.id === issued.info?.id);
      expect(Number(listed?.revoked)).to.be.greaterThan(0);
      expect(JSON.stringify(tokens, (_k, v) => (typeof v === "bigint" ? String(v) : v))).to.not.include(issued.token);
    });

    it("issues distinct tokens every time", async () => {
      const admin = f.clientWith(ADMIN);
      const a = await admin.issueToken({ projectId: "acme", scope: Scope.FULL });
      const b = await admin.issueToken({ projectId: "acme", scope: Scope.FULL });
      expect(a.token).to.not.equal(b.token);
      expect(a.info?.id).to.not.equal(b.info?.id);
    });

    it("validate input, naming the field, and change nothing on error", async () => {
      const admin = f.clientWith(ADMIN);
      const cases: Array<[() => Promise<unknown>, Code, RegExp]> = [
        [() => admin.issueToken({ projectId: "bad id!", scope: Scope.FULL }), Code.InvalidArgument, /^project_id:/],
        [() => admin.issueToken({ projectId: "acme", scope: Scope.UNSPECIFIED }), Code.InvalidArgument, /^scope:/],
        [() => admin.issueToken({ projectId: "nobody", scope: Scope.FULL }), Code.NotFound, /project 'nobody' not found/],
        [() => admin.listTokens({ projectId: "" }), Code.InvalidArgument, /^project_id:/],
        [() => admin.listTokens({ projectId: "nobody" }), Code.NotFound, /nobody/],
        [() => admin.createProject({ id: "x".repeat(65) }), Code.InvalidArgument, /^id:/],
        [() => admin.createProject({ id: "ok", name: "n".repeat(201) }), Code.InvalidArgument, /^name:/],
        [() => admin.createProject({ id: "acme" }), Code.AlreadyExists, /already exists/],
        [() => admin.revokeToken({ tokenId: "" }), Code.InvalidArgument, /^token_id:/],
        [() => admin.revokeToken({ tokenId: SEED_FULL + " " }), Code.InvalidArgument, /^token_id:/],
        [() => admin.revokeToken({ tokenId: "tok_doesnotexist" }), Code.NotFound, /not found/],
      ];
      for (const [call, code, message] of cases) {
        const e = await connectError(call);
        expect([Code[e.code], e.rawMessage]).to.satisfy(([c, m]: [string, string]) => c === Code[code] && message.test(m), `${Code[e.code]}: ${e.rawMessage}`);
        expect(e.message).to.not.include(SEED_FULL);
      }
      expect((await f.store.listProjects()).map((p) => p.id)).to.deep.equal(["acme"]);
      expect(await f.store.findActiveTokenByHash((await f.store.listTokens("acme"))[0].hash)).to.not.equal(null);
      expect(await f.store.listTokens("acme")).to.have.length(2);
    });

    it("picks a random project id when none is given", async () => {
      const admin = f.clientWith(ADMIN);
      const a = await admin.createProject({ name: "Unnamed A" });
      const b = await admin.createProject({});
      expect(a.project?.id).to.match(/^[A-Za-z0-9_-]{1,64}$/);
      expect(a.project?.id).to.not.equal(b.project?.id);
      expect(b.project?.name).to.equal(b.project?.id);
    });
  });

  it("keeps only hashes of tokens at rest", async () => {
    const issued = await f.clientWith(ADMIN).issueToken({ projectId: "acme", scope: Scope.FULL });
    const stored = await f.store.listTokens("acme");
    await f.store.close(); // checkpoints the write-ahead log into the database file
    const all = await readFile(join(f.dir, "auth", "auth.sqlite"), "latin1");
    expect(stored).to.have.length(3);
    for (const t of stored) expect(all).to.include(t.hash);
    for (const plain of [issued.token, SEED_FULL, SEED_READ]) expect(all).to.not.include(plain);
  });

  describe("seeding", () => {
    it("is idempotent, across restarts too", async () => {
      const again = await applySeedTokens(f.store, SEED);
      expect(again).to.deep.equal({ projectsCreated: 0, tokensCreated: 0, unchanged: 2, revoked: [] });
      await f.store.close();
      const reopened = await openEmbeddedAuthStore(f.dir);
      const third = await applySeedTokens(reopened, SEED);
      expect(third.tokensCreated).to.equal(0);
      expect(await reopened.listTokens("acme")).to.have.length(2);
      expect(await reopened.countProjects()).to.equal(1);
    });

    it("adds new items next to existing ones and reports revoked seeds without restoring them", async () => {
      const { tokenId } = await f.internal.authenticate({ token: SEED_READ });
      await f.store.revokeToken(tokenId);
      const more = JSON.stringify([...JSON.parse(SEED), { token: "seed-other-project-0003", project: "beta", scope: "read" }]);
      const r = await applySeedTokens(f.store, more);
      expect(r).to.deep.equal({ projectsCreated: 1, tokensCreated: 1, unchanged: 1, revoked: [1] });
      expect((await f.internal.authenticate({ token: "seed-other-project-0003" })).projectId).to.equal("beta");
      expect((await connectError(() => f.internal.authenticate({ token: SEED_READ }))).code).to.equal(Code.Unauthenticated);
    });

    it("refuses the same token for a different project, changing nothing", async () => {
      const bad = JSON.stringify([
        { token: "brand-new-token-0004", project: "gamma", scope: "full" },
        { token: SEED_FULL, project: "other", scope: "full" },
      ]);
      const e = await rejection(() => applySeedTokens(f.store, bad));
      expect(e).to.be.instanceOf(ConfigError);
      expect(e.message).to.match(/SEED_TOKENS\[1\]\.token: already registered for project 'acme'/);
      expect(e.message).to.not.include(SEED_FULL);
      expect(await f.store.getProject("gamma")).to.equal(null);
      expect(await f.store.getProject("other")).to.equal(null);
    });

    it("names SEED_TOKENS and the offending item and field in validation errors", async () => {
      const cases: Array<[string, RegExp]> = [
        ["{not json", /SEED_TOKENS is not valid JSON/],
        [`{"token":"x"}`, /SEED_TOKENS: must be array/],
        [JSON.stringify([{ token: "good-token-0001", project: "p", scope: "full" }, { token: "good-token-0002", project: "p" }]), /SEED_TOKENS\[1\]\.scope: is required/],
        [JSON.stringify([{ token: "good-token-0001", project: "p", scope: "admin" }]), /SEED_TOKENS\[0\]\.scope: must be "full" or "read"/],
        [JSON.stringify([{ token: "good-token-0001", project: "bad project", scope: "read" }]), /SEED_TOKENS\[0\]\.project: must be 1-64/],
        [JSON.stringify([{ token: "has a space inside", project: "p", scope: "read" }]), /SEED_TOKENS\[0\]\.token: must not contain whitespace/],
        [JSON.stringify([{ token: "short", project: "p", scope: "read" }]), /SEED_TOKENS\[0\]\.token: must NOT have fewer than 8 characters/],
        [JSON.stringify([{ token: "good-token-0001", project: "p", scope: "read", extra: 1 }]), /SEED_TOKENS\[0\]: unknown field 'extra'/],
        [
          JSON.stringify([
            { token: "good-token-0001", project: "p", scope: "read" },
            { token: "good-token-0001", project: "q", scope: "read" },
          ]),
          /SEED_TOKENS\[1\]\.token: same token as SEED_TOKENS\[0\]/,
        ],
      ];
      for (const [json, message] of cases) {
        const e = await rejection(() => applySeedTokens(f.store, json));
        expect(e, json).to.be.instanceOf(ConfigError);
        expect(e.message, json).to.match(message);
        expect(e.message).to.not.include("good-token-0001");
        expect(e.message).to.not.include("has a space inside");
      }
      expect((await f.store.listProjects()).map((p) => p.id)).to.deep.equal(["acme"]);
    });
  });

  describe("demo project", () => {
    it("is created only on an empty store, with working full and read tokens", async () => {
      expect(await ensureDemoProject(f.store)).to.equal(null); // "acme" exists

      const g = await startAuthFixture();
      try {
        const demo = await ensureDemoProject(g.store);
        expect(demo?.projectId).to.equal("demo");
        const full = await g.internal.authenticate({ token: demo!.fullToken });
        const read = await g.internal.authenticate({ token: demo!.readToken });
        expect([full.projectId, full.scope, read.projectId, read.scope]).to.deep.equal(["demo", Scope.FULL, "demo", Scope.READ]);
        expect(await ensureDemoProject(g.store)).to.equal(null);
        expect(await g.store.listTokens("demo")).to.have.length(2);
      } finally {
        await g.stop();
      }
    });
  });

  describe("interop with a plain @grpc/grpc-js client", () => {
    const load = (file: string) =>
      grpc.loadPackageDefinition(protoLoader.loadSync(join(process.cwd(), file), { keepCase: false, enums: String, longs: String, defaults: true }));
    const clients: grpc.Client[] = [];
    after(() => clients.forEach((c) => c.close()));

    function call<T>(client: grpc.Client, method: string, req: object): Promise<T> {
      return new Promise((resolve, reject) => {
        const md = new grpc.Metadata();
        md.set("authorization", `Bearer ${INTERNAL}`);
        (client as unknown as Record<string, Function>)[method](req, md, (err: grpc.ServiceError | null, res: T) => (err ? reject(err) : resolve(res)));
      });
    }

    it("authenticates over gRPC and reports SERVING on grpc.health.v1", async () => {
      const target = f.svc.url.replace(/^http:\/\//, "");
      const auth = load("proto/auth/v1/auth.proto") as any;
      const health = load("proto/grpc/health/v1/health.proto") as any;
      const authClient: grpc.Client = new auth.auth.v1.AuthService(target, grpc.credentials.createInsecure());
      const healthClient: grpc.Client = new health.grpc.health.v1.Health(target, grpc.credentials.createInsecure());
      clients.push(authClient, healthClient);

      const ok = await call<{ projectId: string; scope: string; tokenId: string }>(authClient, "Authenticate", { token: SEED_READ });
      expect(ok).to.include({ projectId: "acme", scope: "SCOPE_READ" });
      expect(ok.tokenId).to.match(/^tok_/);

      const err = (await rejection(() => call(authClient, "Authenticate", { token: "nope-not-a-token" }))) as grpc.ServiceError;
      expect(err.code).to.equal(grpc.status.UNAUTHENTICATED);

      expect(await call(healthClient, "Check", { service: "" })).to.deep.equal({ status: "SERVING" });
      expect(await call(healthClient, "Check", { service: "auth.v1.AuthService" })).to.deep.equal({ status: "SERVING" });
      expect(await call(healthClient, "Check", { service: "nope.v1.Nope" })).to.deep.equal({ status: "SERVICE_UNKNOWN" });
    });
  });
});
