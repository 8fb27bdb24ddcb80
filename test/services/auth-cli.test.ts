import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { Code, ConnectError } from "@connectrpc/connect";
import { AuthService, Scope } from "../../gen/auth/v1/auth_pb.js";
import { closeRpcClients, rpcClient } from "../../lib/rpc/client.js";
import { runCli } from "../../services/auth/cli.js";
import { ADMIN, rejection, startAuthFixture, type AuthFixture } from "./auth-fixture.js";

async function cli(argv: string[], env: Record<string, string | undefined>) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(argv, env, { out: (s) => out.push(s), err: (s) => err.push(s) });
  return { code, out: out.join("\n"), err: err.join("\n") };
}

describe("auth admin CLI", () => {
  let f: AuthFixture;
  let env: Record<string, string>;
  before(async () => {
    f = await startAuthFixture({ adminToken: ADMIN });
    env = { AUTH_URL: f.svc.url, ADMIN_TOKEN: ADMIN };
  });
  after(async () => {
    await f.stop();
    closeRpcClients();
  });

  it("creates a project, issues, lists and revokes a token", async () => {
    const created = await cli(["projects:create", "news", "News Site"], env);
    expect(created).to.include({ code: 0, err: "" });
    expect(created.out).to.include("news");
    expect((await cli(["projects:list"], env)).out).to.match(/news\s+News Site/);

    const issued = await cli(["tokens:issue", "news", "read"], env);
    expect(issued.code).to.equal(0);
    const token = /\b(aa_[A-Za-z0-9_-]{43})\b/.exec(issued.out)?.[1] as string;
    expect(token, issued.out).to.be.a("string");
    const who = await f.internal.authenticate({ token });
    expect(who).to.include({ projectId: "news", scope: Scope.READ });

    const listed = await cli(["tokens:list", "news"], env);
    expect(listed.out).to.include(who.tokenId).and.include(token.slice(0, 8)).and.not.include(token);

    expect((await cli(["tokens:revoke", who.tokenId], env)).code).to.equal(0);
    const e = ConnectError.from(await rejection(() => f.internal.authenticate({ token })));
    expect(e.code).to.equal(Code.Unauthenticated);
    const json = JSON.parse((await cli(["tokens:list", "news", "--json"], env)).out);
    expect(json).to.have.length(1);
    expect(json[0]).to.include({ id: who.tokenId, project: "news", scope: "read" });
    expect(json[0].revoked).to.match(/^\d{4}-\d\d-\d\dT/);
  });

  it("shows and changes a project's player key and feed settings", async () => {
    await cli(["projects:create", "pods", "Pod Site"], env);
    const shown = JSON.parse((await cli(["player:get", "pods", "--json"], env)).out);
    expect(shown.publicKey).to.match(/^pk_/);
    expect(shown.settings.feed).to.include({ enabled: true, category: "News" });
    const changed = await cli(["player:set", "pods", "feed.title=Pod Site audio", "feed.explicit=true", 'oembed.hosts=["pods.example"]', "--json"], env);
    expect(changed.code, changed.err).to.equal(0);
    const after = JSON.parse(changed.out);
    expect(after.publicKey).to.equal(shown.publicKey);
    expect(after.settings.feed).to.include({ title: "Pod Site audio", explicit: true });
    expect(after.settings.oembed.hosts).to.deep.equal(["pods.example"]);
    const bad = await cli(["player:set", "pods", "feed.imageUrl=not-a-url"], env);
    expect(bad.code).to.equal(1);
    expect(bad.err).to.include("feed.imageUrl");
  });

  it("exits 2 with usage text on bad usage, before calling anything", async () => {
    for (const argv of [[], ["frobnicate"], ["tokens:issue", "news"], ["tokens:issue", "news", "admin"], ["projects:list", "extra"]]) {
      const r = await cli(argv, env);
      expect(r.code, argv.join(" ")).to.equal(2);
      expect(r.err).to.include("Usage: npm run admin");
    }
    expect(await cli(["projects:list"], { ADMIN_TOKEN: ADMIN, AUTH_URL: "localhost:7001" })).to.include({ code: 2 });
    expect((await cli(["projects:list"], { AUTH_URL: f.svc.url })).err).to.include("set ADMIN_TOKEN");
    expect((await f.store.listTokens("news")).length).to.be.lessThan(2);
  });

  it("exits 1 with the service's reason when refused or unreachable", async () => {
    const wrong = await cli(["projects:list"], { ...env, ADMIN_TOKEN: "not-the-admin-token" });
    expect(wrong.code).to.equal(1);
    expect(wrong.err).to.match(/Unauthenticated: invalid admin token/);
    expect(wrong.err).to.not.include("not-the-admin-token");

    const missing = await cli(["tokens:list", "nobody"], env);
    expect(missing).to.include({ code: 1 });
    expect(missing.err).to.include("NotFound: project 'nobody' not found");

    const down = await cli(["projects:list"], { ...env, AUTH_URL: "http://127.0.0.1:9" });
    expect(down.code).to.equal(1);
    expect(down.err).to.include("is the auth service running");
  });
});

interface Proc {
  stdout: string;
  stderr: string;
  exited: Promise<number | null>;
  kill(signal: NodeJS.Signals): void;
  waitFor(re: RegExp, ms?: number): Promise<RegExpExecArray>;
}

const MAIN_INTERNAL = "internal-token-of-the-auth-main-test";

function startMain(env: Record<string, string>): Proc {
  const base = { ...process.env };
  for (const k of ["MONGODB_URL", "SEED_TOKENS", "ADMIN_TOKEN", "AUTH_PORT", "NODE_ENV"]) delete base[k];
  const child = spawn(process.execPath, ["--import", "tsx", "services/auth/main.ts"], {
    env: { ...base, RPC_HOST: "127.0.0.1", AUTH_PORT: "0", LOG_LEVEL: "info", INTERNAL_TOKEN: MAIN_INTERNAL, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const p: Proc = {
    stdout: "",
    stderr: "",
    exited: new Promise((resolve) => child.once("exit", (code) => resolve(code))),
    kill: (signal) => child.kill(signal),
    waitFor(re, ms = 20_000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`timed out waiting for ${re}; stdout: ${p.stdout} stderr: ${p.stderr}`)), ms);
        const check = () => {
          const m = re.exec(p.stdout);
          if (m) {
            clearTimeout(timer);
            child.stdout.off("data", check);
            resolve(m);
          }
        };
        child.stdout.on("data", check);
        check();
      });
    },
  };
  child.stdout.on("data", (d) => (p.stdout += d));
  child.stderr.on("data", (d) => (p.stderr += d));
  running.add(child);
  child.once("exit", () => running.delete(child));
  return p;
}
const running = new Set<ReturnType<typeof spawn>>();

describe("auth service process (main.ts)", function () {
  this.timeout(60_000);
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "auth-main-"));
  });
  after(async () => {
    for (const c of running) c.kill("SIGKILL");
    closeRpcClients();
    await rm(dir, { recursive: true, force: true });
  });

  it("prints demo tokens once on a fresh store, never in log lines, and shuts down cleanly", async () => {
    const first = startMain({ DATA_DIR: dir });
    const url = (await first.waitFor(/"url":"(http:\/\/127\.0\.0\.1:\d+)"/))[1];
    const full = /full access : (\S+)/.exec(first.stdout)?.[1] as string;
    const read = /read only   : (\S+)/.exec(first.stdout)?.[1] as string;
    expect(full, first.stdout).to.match(/^aa_/);
    const client = rpcClient(AuthService, url, { token: MAIN_INTERNAL });
    expect(await client.authenticate({ token: full })).to.include({ projectId: "demo", scope: Scope.FULL });
    const logLines = first.stdout.split("\n").filter((l) => l.startsWith("{"));
    expect(logLines.length).to.be.greaterThan(0);
    for (const l of logLines) expect(l).to.not.include(full).and.not.include(read);
    first.kill("SIGTERM");
    expect(await first.exited).to.equal(0);

    const second = startMain({ DATA_DIR: dir });
    const url2 = (await second.waitFor(/"url":"(http:\/\/127\.0\.0\.1:\d+)"/))[1];
    expect(second.stdout).to.not.include("full access");
    expect(await rpcClient(AuthService, url2, { token: MAIN_INTERNAL }).authenticate({ token: read })).to.include({ projectId: "demo", scope: Scope.READ });
    second.kill("SIGTERM");
    expect(await second.exited).to.equal(0);
  });

  it("refuses to start on bad SEED_TOKENS, naming the item and field and not the token", async () => {
    const p = startMain({ DATA_DIR: dir, SEED_TOKENS: JSON.stringify([{ token: "secret-seed-token-1", project: "acme", scope: "owner" }]) });
    expect(await p.exited).to.equal(1);
    expect(p.stdout + p.stderr).to.include("SEED_TOKENS[0].scope").and.not.include("secret-seed-token-1");
  });

  it("refuses a short ADMIN_TOKEN", async () => {
    const p = startMain({ DATA_DIR: dir, ADMIN_TOKEN: "short" });
    expect(await p.exited).to.equal(1);
    expect(p.stdout + p.stderr).to.include("ADMIN_TOKEN must be at least 16 characters").and.not.include('"short"');
  });
});

describe("auth admin CLI without AUTH_URL: the embedded default's DATA_DIR", function () {
  this.timeout(60_000);
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "auth-direct-"));
  });
  after(async () => {
    for (const c of running) c.kill("SIGKILL");
    closeRpcClients();
    await rm(dir, { recursive: true, force: true });
  });

  const tokenIn = (s: string) => /\b(aa_[A-Za-z0-9_-]{43})\b/.exec(s)?.[1];
  const tokenCount = async () => {
    const r = await cli(["tokens:list", "demo", "--json"], { DATA_DIR: dir });
    expect(r.code, r.err).to.equal(0);
    return (JSON.parse(r.out) as unknown[]).length;
  };

  it("recovers a lost demo token with one command while the platform is stopped; the next start accepts it", async () => {
    const first = startMain({ DATA_DIR: dir });
    await first.waitFor(/"url":"(http:\/\/127\.0\.0\.1:\d+)"/);
    expect(first.stdout).to.include("full access");
    first.kill("SIGTERM");
    expect(await first.exited).to.equal(0);

    // No ADMIN_TOKEN, no AUTH_URL: what a reader who lost the banner has.
    const issued = await cli(["tokens:issue", "demo", "full"], { DATA_DIR: dir });
    expect(issued.code, issued.err).to.equal(0);
    const token = tokenIn(issued.out) as string;
    expect(token, issued.out).to.be.a("string");
    expect(await tokenCount()).to.equal(3);

    const second = startMain({ DATA_DIR: dir });
    const url = (await second.waitFor(/"url":"(http:\/\/127\.0\.0\.1:\d+)"/))[1];
    expect(await rpcClient(AuthService, url, { token: MAIN_INTERNAL }).authenticate({ token })).to.include({ projectId: "demo", scope: Scope.FULL });

    // Written beside the running platform, a token would not be seen by it: refused, nothing written.
    const refused = await cli(["tokens:issue", "demo", "full"], { DATA_DIR: dir });
    expect(refused.code).to.equal(1);
    expect(refused.err).to.include(`DATA_DIR=${dir}`).and.include("is running").and.include("Stop it").and.include("AUTH_URL");
    expect(tokenIn(refused.out + refused.err)).to.equal(undefined);
    second.kill("SIGTERM");
    expect(await second.exited).to.equal(0);
    expect(await tokenCount()).to.equal(3);
  });

  it("names a DATA_DIR without platform data and creates nothing there", async () => {
    const empty = join(dir, "not-started-yet");
    const r = await cli(["tokens:issue", "demo", "full"], { DATA_DIR: empty });
    expect(r.code).to.equal(1);
    expect(r.err).to.include(`DATA_DIR=${empty}`).and.include("npm start");
    expect(existsSync(empty)).to.equal(false);
  });

  it("answers a damaged auth database with a message, not a crash", async () => {
    const damaged = join(dir, "damaged");
    await mkdir(join(damaged, "auth"), { recursive: true });
    await writeFile(join(damaged, "auth", "auth.sqlite"), "not a database");
    const r = await cli(["tokens:list", "demo"], { DATA_DIR: damaged });
    expect(r.code).to.equal(1);
    expect(r.err).to.include("cannot open the auth database under DATA_DIR");
  });

  it("keeps the service's own checks: an unknown project is refused", async () => {
    const r = await cli(["tokens:issue", "nobody", "full"], { DATA_DIR: dir });
    expect(r.code).to.equal(1);
    expect(r.err).to.include("NotFound: project 'nobody' not found");
  });
});
