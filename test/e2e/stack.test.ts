// The public API end to end on the full stack: every service its own process
// (launch/stack.ts), MongoDB for stores and GridFS audio, NATS JetStream for
// jobs, two audio worker processes. Exercised only through HTTP, plus the
// workers' own logs to see who rendered what.
import { expect } from "chai";
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { AuthService } from "../../gen/auth/v1/auth_pb.js";
import { startStack } from "../../launch/stack.js";
import { rpcClient } from "../../lib/rpc/client.js";
import { mp3Duration, parseFrames } from "../../services/audio/mp3/index.js";
import { api, waitFor } from "../support/http.js";
import { requireMongo, requireNats } from "../support/servers.js";
import { ADMIN_TOKEN, TOKENS, deleteStream, prose, startTestStack, withMongo, type TestStack } from "./stack-harness.js";

type Call = ReturnType<typeof api>;

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

describe("REST API end to end (full stack: one process per service, MongoDB, NATS, two audio replicas)", function () {
  this.timeout(120_000);
  let t: TestStack;
  let A: Call;
  let AR: Call;
  let B: Call;
  let anon: Call;

  async function ready(call: Call, id: string, timeoutMs = 90_000) {
    return waitFor(`article ${id} ready`, async () => {
      const r = await call("GET", `/api/articles/${id}`);
      if (r.body?.article?.status === "errored") throw new Error(`errored: ${r.body.article.error}`);
      return r.body?.article?.status === "ready" ? r.body.article : undefined;
    }, timeoutMs, 100);
  }

  const local = (u: string) => u.replace("localhost", "127.0.0.1");

  before(async function () {
    const mongoUrl = await requireMongo(this);
    const natsUrl = await requireNats(this);
    t = await startTestStack({ mongoUrl, natsUrl });
    A = api(t.stack.url, TOKENS.aFull);
    AR = api(t.stack.url, TOKENS.aRead);
    B = api(t.stack.url, TOKENS.bFull);
    anon = api(t.stack.url);
  });

  afterEach(function () {
    if (this.currentTest?.state === "failed" && t) console.log(`--- last stack output ---\n${t.logs.tail()}`);
  });

  after(async () => {
    await t?.cleanup();
  });

  it("runs each service as its own process", () => {
    const names = t.stack.processes.map((p) => p.name);
    expect(names).to.deep.equal(["auth", "articles", "audio-1", "audio-2", "gateway"]);
    const pids = t.stack.processes.map((p) => p.pid);
    expect(new Set(pids).size).to.equal(5);
    expect(pids).not.to.include(process.pid);
  });

  it("creates an article that becomes ready, with playable MP3 stored in GridFS and served with ranges", async () => {
    const url = "https://news.example.com/2026/11/stack-budget?ref=home";
    const created = await A("POST", "/api/articles", {
      title: "Council approves library budget",
      text: prose(2_000),
      url,
      externalId: "stack-ext-1",
      labels: ["local", "politics"],
    });
    expect(created.status).to.equal(200);
    expect(created.body.result).to.equal("ok");
    const id = created.body.id as string;

    const art = await ready(A, id);
    expect(art).to.include({ id, externalId: "stack-ext-1", voice: "alloy", lang: "en-US", url });
    expect(art.labels).to.deep.equal(["local", "politics"]);
    expect(art.audio).to.be.a("string");

    const full = await fetch(local(art.audio));
    expect(full.status).to.equal(200);
    expect(full.headers.get("content-type")).to.equal("audio/mpeg");
    const buf = Buffer.from(await full.arrayBuffer());
    expect(parseFrames(buf).length).to.be.greaterThan(100);
    expect(art.audio_duration).to.be.closeTo(mp3Duration(buf), 0.05);
    const preview = Buffer.from(await (await fetch(local(art.audio_preview))).arrayBuffer());
    expect(art.audio_preview_duration).to.be.closeTo(mp3Duration(preview), 0.05);
    expect(art.audio_preview_duration).to.be.lessThan(art.audio_duration);

    // The bytes live in GridFS, not on some process's disk.
    const key = new URL(art.audio).pathname.replace(/^\/audio\//, "");
    const stored = await withMongo(t.mongoUrl, t.db, (c) => c.db(t.db).collection("audio.files").findOne({ filename: key }));
    expect(stored, `GridFS file ${key}`).to.not.equal(null);
    expect(stored!.length).to.equal(buf.length);

    const size = buf.length;
    const part = await fetch(local(art.audio), { headers: { range: "bytes=100-199" } });
    expect(part.status).to.equal(206);
    expect(part.headers.get("content-range")).to.equal(`bytes 100-199/${size}`);
    expect(Buffer.from(await part.arrayBuffer()).equals(buf.subarray(100, 200))).to.equal(true);
    const again = await fetch(local(art.audio), { headers: { "if-none-match": full.headers.get("etag")! } });
    expect(again.status).to.equal(304);
    expect((await fetch(local(art.audio), { headers: { range: `bytes=${size + 10}-` } })).status).to.equal(416);
  });

  it("finds an article by id, external id and original URL, and lists it", async () => {
    const byExt = await AR("GET", "/api/articles_external_id/stack-ext-1");
    expect(byExt.status).to.equal(200);
    const id = byExt.body.article.id;
    const byUrl = await AR("GET", `/api/articles_external_url/${encodeURIComponent(byExt.body.article.url)}`);
    expect(byUrl.status).to.equal(200);
    expect(byUrl.body.article.id).to.equal(id);
    expect((await AR("GET", `/api/articles/${id}`)).body.article.externalId).to.equal("stack-ext-1");

    const list = await AR("GET", "/api/articles");
    expect(list.status).to.equal(200);
    const item = list.body.articles.find((a: { id: string }) => a.id === id);
    expect(item).to.include({ external_id: "stack-ext-1", status: "ready" });
    // The spec's list item carries the article's text.
    expect(item.text).to.equal(byExt.body.article.text);
    expect(item.text).to.not.equal("");
    expect(list.body.count).to.be.at.least(1);
  });

  it("updates by id and by external id, re-generating the audio", async () => {
    const created = await A("POST", "/api/articles", { title: "Weather", text: "Sunny today.", voice: "nova", lang: "en-US", labels: ["a", "b"] });
    const id = created.body.id as string;
    const v1 = await ready(A, id);
    const up = await A("PUT", `/api/articles/${id}`, { title: "Weather update", text: "Rain is expected this afternoon.", labels: ["c"], externalId: "stack-weather" });
    expect(up.body).to.deep.equal({ result: "ok", id });
    const v2 = await ready(A, id);
    expect(v2).to.include({ title: "Weather update", voice: "nova", externalId: "stack-weather" });
    expect(v2.labels).to.deep.equal(["c"]);
    expect(v2.audio).not.to.equal(v1.audio);
    expect((await fetch(local(v2.audio))).status).to.equal(200);

    const byExt = await A("PUT", "/api/articles_external_id/stack-weather", { title: "Weather again", text: "Clear skies tonight." });
    expect(byExt.body).to.deep.equal({ result: "ok", id });
    const v3 = await ready(A, id);
    expect(v3.title).to.equal("Weather again");
    expect(v3.audio).not.to.equal(v2.audio);
  });

  it("deletes: readable as deleted, unlisted, not updatable", async () => {
    const { body } = await A("POST", "/api/articles", { title: "To delete", text: "Bye.", externalId: "stack-del-1" });
    const id = body.id as string;
    expect((await A("DELETE", `/api/articles/${id}`)).body).to.deep.equal({ result: "ok" });
    expect((await A("GET", `/api/articles/${id}`)).body.article.status).to.equal("deleted");
    expect((await A("GET", "/api/articles?limit=100")).body.articles.map((a: { id: string }) => a.id)).not.to.include(id);
    expect((await A("PUT", `/api/articles/${id}`, { title: "back", text: "x" })).status).to.equal(400);
    // A worker may still finish the job; its result must not revive the article.
    await new Promise((r) => setTimeout(r, 1500));
    expect((await A("GET", `/api/articles/${id}`)).body.article.status).to.equal("deleted");
  });

  it("keeps projects apart and enforces token scopes", async () => {
    const { body } = await A("GET", "/api/articles_external_id/stack-ext-1");
    const id = body.article.id;
    expect((await B("GET", `/api/articles/${id}`)).status).to.equal(404);
    expect((await B("GET", "/api/articles_external_id/stack-ext-1")).status).to.equal(404);
    expect((await B("PUT", `/api/articles/${id}`, { title: "hijack", text: "x" })).status).to.equal(404);
    expect((await B("DELETE", `/api/articles/${id}`)).status).to.equal(404);
    expect((await B("GET", "/api/articles")).body.articles.map((a: { id: string }) => a.id)).not.to.include(id);

    const ro = await AR("POST", "/api/articles", { title: "t", text: "x" });
    expect(ro.status).to.equal(403);
    expect(ro.body.result).to.equal("fail");
    expect((await AR("PUT", `/api/articles/${id}`, { title: "t", text: "x" })).status).to.equal(403);
    expect((await AR("DELETE", `/api/articles/${id}`)).status).to.equal(403);
    expect((await anon("GET", "/api/articles")).status).to.equal(401);
    expect((await anon("GET", "/api/articles", undefined, { authorization: "Bearer nope-nope-nope" })).status).to.equal(401);
    expect((await A("GET", `/api/articles/${id}`)).body.article.title).to.equal("Council approves library budget");
  });

  it("lets exactly one of twelve racing creates take an externalId", async () => {
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) => (i % 2 ? A : B)("POST", "/api/articles", { title: `race ${i}`, text: "x", externalId: "stack-race" })),
    );
    expect(results.map((r) => r.status).sort()).to.deep.equal([200, ...Array(11).fill(400)]);
  });

  it("spreads jobs over both audio replicas", async () => {
    const n = 10;
    const ids: string[] = [];
    const created = await Promise.all(
      Array.from({ length: n }, (_, i) => A("POST", "/api/articles", { title: `Spread ${i}`, text: prose(400 + 40 * i) })),
    );
    for (const c of created) {
      expect(c.status).to.equal(200);
      ids.push(c.body.id);
    }
    await Promise.all(ids.map((id) => ready(A, id)));
    // Workers log completion just after the article turns ready.
    await waitFor("every completion to be logged", async () => {
      const done = new Set(t.logs.records({ msg: "audio job completed" }).map((r) => r.articleId));
      return ids.every((id) => done.has(id)) || undefined;
    }, 10_000, 20);

    const byReplica = new Map<string, Set<string>>();
    for (const r of t.logs.records({ msg: "audio job completed" })) {
      if (!ids.includes(r.articleId!)) continue;
      if (!byReplica.has(r.proc)) byReplica.set(r.proc, new Set());
      byReplica.get(r.proc)!.add(r.articleId!);
      // The record comes from the replica's own process.
      expect(r.pid).to.equal(t.stack.process(r.proc).pid);
    }
    expect([...byReplica.keys()].sort()).to.deep.equal(["audio-1", "audio-2"]);
    const union = new Set([...byReplica.values()].flatMap((s) => [...s]));
    expect(union.size).to.equal(n);
    console.log(`      jobs per replica: ${[...byReplica].map(([p, s]) => `${p}=${s.size}`).join(", ")}`);
  });

  it("renders a short and a 2,000-character article in reasonable time", async () => {
    const timings: string[] = [];
    for (const [label, text] of [["short", "Sunny today, with a light breeze."], ["2,000 chars", prose(2_000)]] as const) {
      const started = Date.now();
      const { body } = await A("POST", "/api/articles", { title: "Timing", text });
      const art = await ready(A, body.id, 60_000);
      const ms = Date.now() - started;
      timings.push(`${label}: ${ms} ms (${art.audio_duration.toFixed(1)} s audio)`);
      expect(art.audio_duration).to.be.greaterThan(label === "short" ? 1 : 60);
    }
    console.log(`      create→ready on the full stack: ${timings.join("; ")}`);
  });

  it("answers /healthz with every service SERVING", async () => {
    const h = await anon("GET", "/healthz");
    expect(h.status).to.equal(200);
    expect(h.body.services).to.deep.equal({ auth: "SERVING", articles: "SERVING", audio: "SERVING" });
  });

  // Last: it leaves project beta without write tokens.
  it("counts a project's writes in the shared NATS KV bucket and answers 429 past its own limit", async () => {
    const admin = rpcClient(AuthService, t.stack.process("auth").url, { token: ADMIN_TOKEN });
    await admin.updateProjectSettings({ projectId: "beta", patchJson: JSON.stringify({ rateLimit: { writes: { perSecond: 0.01, burst: 2 } } }) });
    // The gateway keeps a project's limits for up to 30 s; the ROOMY defaults may still apply for that long.
    const rs = await waitFor("beta's own write limit", async () => {
      const r = await B("DELETE", "/api/articles/no-such-article-rl");
      return r.status === 429 ? r : undefined;
    }, 60_000, 500);
    expect(rs.body).to.deep.include({ result: "fail" });
    expect(rs.headers.get("ratelimit-policy")).to.equal('"writes";q=2;w=200');
    expect(Number(rs.headers.get("retry-after"))).to.be.within(1, 100);
    // Another project is not held back.
    expect((await A("DELETE", "/api/articles/no-such-article-rl")).status).to.not.equal(429);
  });
});

describe("npm run stack (launcher process)", function () {
  this.timeout(90_000);
  let env: Record<string, string | undefined>;
  let launcher: ChildProcess | undefined;
  let dataDir: string;

  before(async function () {
    const mongoUrl = await requireMongo(this);
    const natsUrl = await requireNats(this);
    dataDir = await mkdtemp(path.join(tmpdir(), "e2e-stack-cli-"));
    const run = `${Date.now().toString(36)}${process.pid}`;
    env = {
      ...process.env,
      MONGODB_URL: mongoUrl,
      MONGODB_DB: `e2e_stack_cli_${run}`,
      NATS_URL: natsUrl,
      NATS_STREAM: `E2E_CLI_${run}`,
      NATS_SUBJECT: `e2e.cli.${run}.jobs`,
      NATS_DURABLE: `e2e_cli_${run}`,
      DATA_DIR: dataDir,
      HOST: "127.0.0.1",
      PORT: "0",
      AUTH_PORT: "0",
      ARTICLES_PORT: "0",
      AUDIO_PORT: "0",
      AUDIO_THREADS: "1",
      SEED_TOKENS: JSON.stringify([{ token: TOKENS.aFull, project: "alpha", scope: "full" }]),
      LOG_LEVEL: "info",
    };
  });

  afterEach(async () => {
    if (launcher && launcher.exitCode === null && launcher.signalCode === null) {
      try {
        process.kill(-launcher.pid!, "SIGKILL");
      } catch {
        launcher.kill("SIGKILL");
      }
      await once(launcher, "exit");
    }
    launcher = undefined;
  });

  after(async () => {
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
    if (!env) return;
    await withMongo(env.MONGODB_URL!, env.MONGODB_DB!, (c) => c.db(env.MONGODB_DB!).dropDatabase()).catch(() => undefined);
    await deleteStream(env.NATS_URL!, env.NATS_STREAM!).catch(() => undefined);
  });

  /** Starts the launcher as a user would and resolves with its output so far once it says ready. */
  async function launch(how: "node" | "npm" = "node"): Promise<{ out: string[]; pids: Map<string, number> }> {
    // "npm": exactly what a user types, in a process group of its own as in a terminal.
    const child = how === "npm"
      ? spawn("npm", ["run", "-s", "stack"], { cwd: ROOT, env: env as NodeJS.ProcessEnv, stdio: ["ignore", "pipe", "pipe"], detached: true })
      : spawn(process.execPath, ["--import", "tsx", path.join(ROOT, "launch/stack.ts")], {
          cwd: ROOT,
          env: env as NodeJS.ProcessEnv,
          stdio: ["ignore", "pipe", "pipe"],
        });
    launcher = child;
    const out: string[] = [];
    const pids = new Map<string, number>();
    let buf = "";
    const add = (d: Buffer) => {
      buf += d.toString();
      let nl: number;
      while ((nl = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        out.push(line);
        const m = /^(\S+)\s*\| (\{.*\})$/.exec(line);
        if (m) {
          try {
            const pid = (JSON.parse(m[2]) as { pid?: number }).pid;
            if (pid) pids.set(m[1], pid);
          } catch {
            // not a log record
          }
        }
      }
    };
    child.stdout!.on("data", add);
    child.stderr!.on("data", add);
    await waitFor("the stack to be ready", async () => {
      if (child.exitCode !== null) throw new Error(`launcher exited: ${out.slice(-5).join(" / ")}`);
      return out.some((l) => l.includes("article audio stack ready")) || undefined;
    }, 60_000, 50);
    return { out, pids };
  }

  const alive = (pid: number) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };

  it("stops the services in order on Ctrl-C: gateway, audio workers, articles, auth", async () => {
    const { out, pids } = await launch();
    expect([...pids.keys()].sort()).to.deep.equal(["articles", "audio-1", "audio-2", "auth", "gateway"]);
    launcher!.kill("SIGINT");
    const [code] = await once(launcher!, "exit");
    expect(code).to.equal(0);
    // When each began to shut down, by its own clock (pipes may interleave lines).
    const stoppedAt = (name: string) => {
      const line = out.find((l) => l.startsWith(`${name} `) && l.includes("received, shutting down"));
      return line ? Date.parse((JSON.parse(line.slice(line.indexOf("{"))) as { time: string }).time) : -1;
    };
    const order = ["gateway", "audio-1", "audio-2", "articles", "auth"].map(stoppedAt);
    expect(order.every((t) => t > 0), out.slice(-12).join("\n")).to.equal(true);
    expect(order[0]).to.be.lessThan(Math.min(order[1], order[2]));
    expect(Math.max(order[1], order[2])).to.be.lessThan(order[3]);
    expect(order[3]).to.be.lessThan(order[4]);
    for (const pid of pids.values()) expect(alive(pid)).to.equal(false);
  });

  it("shuts every service down gracefully when Ctrl-C reaches the whole process group of npm run stack", async () => {
    const { out, pids } = await launch("npm");
    // What a terminal does on Ctrl-C: SIGINT to every process of the foreground group
    // (npm, the shell, tsx and the launcher), several of which relay it to their child.
    process.kill(-launcher!.pid!, "SIGINT");
    const [code, signal] = await once(launcher!, "exit");
    const log = out.slice(-30).join("\n");
    expect(out.some((l) => l.includes("killing every process now")), log).to.equal(false);
    // npm, itself interrupted, ends by the same signal once its script has exited.
    expect([0, "SIGINT"], log).to.include(code ?? signal);
    for (const name of ["gateway", "audio-1", "audio-2", "articles", "auth"]) {
      expect(out.some((l) => l.startsWith(`${name} `) && l.includes("received, shutting down")), `${name} began a graceful shutdown\n${log}`).to.equal(true);
      expect(out.some((l) => l.startsWith("stack ") && l.includes(`${name} stopped (code 0)`)), `${name} exited 0\n${log}`).to.equal(true);
    }
    for (const pid of pids.values()) expect(alive(pid)).to.equal(false);
  });

  it("leaves no service behind when the launcher itself is killed", async () => {
    const { pids } = await launch();
    launcher!.kill("SIGKILL");
    await once(launcher!, "exit");
    await waitFor("every service to exit", async () => ([...pids.values()].some(alive) ? undefined : true), 30_000, 100);
  });

  it("refuses to start without MongoDB or NATS and names what is missing", async () => {
    const err = await startStack({ PATH: process.env.PATH }).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(err?.message).to.match(/MONGODB_URL and NATS_URL/);
    const dup = await startStack({ ...env, AUTH_PORT: "7444", ARTICLES_PORT: "7444" }).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(dup?.message).to.match(/port 7444 is assigned twice/);
  });
});
