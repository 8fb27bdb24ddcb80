import { Readable } from "node:stream";
import { expect } from "chai";
import { Code, ConnectError, createClient, type Client } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { ArticleStatus, ArticlesService } from "../../gen/articles/v1/articles_pb.js";
import { AudioService } from "../../gen/audio/v1/audio_pb.js";
import { AuthService, ReservationOutcome, Scope } from "../../gen/auth/v1/auth_pb.js";
import { assertSafeKey, type BlobStore } from "../../lib/blob/port.js";
import { createMemoryBus } from "../../lib/bus/memory.js";
import type { JobBus } from "../../lib/bus/port.js";
import { logger } from "../../lib/log.js";
import { closeRpcClients, rpcClient } from "../../lib/rpc/client.js";
import { startRpcServer, type RpcServer } from "../../lib/rpc/server.js";
import type { RunningService } from "../../lib/service.js";
import { startAudioService } from "../../services/audio/app.js";
import { createLocalEngine, type SpeechEngine } from "../../services/audio/engine/index.js";
import { mp3Duration } from "../../services/audio/mp3/index.js";

const INTERNAL = "internal-test-token-abcdefghij";
const log = logger("audio-service-test");

function memoryBlobs(): BlobStore & { files: Map<string, Buffer> } {
  const files = new Map<string, Buffer>();
  return {
    files,
    async put(key, data, contentType) {
      assertSafeKey(key);
      files.set(key, data);
      return { size: data.length, etag: `"${data.length}"`, contentType, modified: new Date() };
    },
    async stat() {
      return null;
    },
    async read(key) {
      return Readable.from([files.get(key)!]);
    },
    async deletePrefix() {},
    async close() {},
  };
}

interface Job {
  revision: number;
  text: string;
  status: ArticleStatus;
  duration?: number;
  previewDuration?: number;
  readyAt?: number;
}

/** Auth and articles stand-ins on one listener: tokens "full-token" / "read-token"; one claimable article per id. */
/** What the fake auth service was asked to reserve and refund, and what it answers next. */
const quota = { outcome: ReservationOutcome.RESERVED, reserved: [] as Array<{ projectId: string; chars: number }>, refunded: [] as number[] };

async function startFakes(jobs: Map<string, Job>): Promise<RpcServer> {
  return startRpcServer({
    name: "fakes",
    services: [AuthService.typeName, ArticlesService.typeName],
    log,
    routes(router) {
      router.service(AuthService, {
        authenticate(req) {
          if (req.token === "full-token") return { projectId: "p1", scope: Scope.FULL, tokenId: "t1" };
          if (req.token === "read-token") return { projectId: "p1", scope: Scope.READ, tokenId: "t2" };
          throw new ConnectError("unknown token", Code.Unauthenticated);
        },
        reserveAudification(req, ctx) {
          if (ctx.requestHeader.get("authorization") !== `Bearer ${INTERNAL}`) throw new ConnectError("internal only", Code.PermissionDenied);
          quota.reserved.push({ projectId: req.projectId, chars: Number(req.chars) });
          return { outcome: quota.outcome, creditChars: 1_000n, usedToday: 1n };
        },
        refundAudification(req) {
          quota.refunded.push(Number(req.chars));
          return {};
        },
      });
      router.service(ArticlesService, {
        claimAudioJob(req) {
          const j = jobs.get(req.articleId);
          if (!j || BigInt(j.revision) !== req.revision) return { stale: true };
          j.status = ArticleStatus.PROCESSING;
          return { article: { id: req.articleId, title: "Council approves budget", text: j.text, voice: "alloy", lang: "en-US" } };
        },
        completeAudioJob(req) {
          const j = jobs.get(req.articleId)!;
          j.status = ArticleStatus.READY;
          j.duration = req.audio?.duration;
          j.previewDuration = req.audioPreview?.duration;
          j.readyAt = Date.now();
          return { applied: true };
        },
        reportAudioStatus() {
          return { applied: true };
        },
        failAudioJob(req) {
          jobs.get(req.articleId)!.status = ArticleStatus.ERRORED;
          return { applied: true };
        },
      });
    },
  });
}

const SENTENCES = [
  "The city council approved the new budget on Tuesday after a debate that lasted well into the night.",
  "Dr. Alvarez, who chairs the finance committee, said the plan would cost about 3.5 million dollars over 5 years.",
  "Critics argued that the money should go to schools first, while supporters pointed to the roads.",
];
const articleOf = (chars: number) => {
  let t = "";
  for (let i = 0; t.length < chars; i++) t += SENTENCES[i % 3] + (i % 3 === 2 ? "\n\n" : " ");
  return t.slice(0, chars);
};

describe("audio service", () => {
  let fakes: RpcServer;
  let svc: RunningService;
  let engine: SpeechEngine;
  let bus: JobBus;
  let blobs: ReturnType<typeof memoryBlobs>;
  let jobs: Map<string, Job>;
  let audio: Client<typeof AudioService>;
  const as = (token?: string) => (token ? { headers: { authorization: `Bearer ${token}` } } : {});

  before(async function () {
    this.timeout(60_000);
    jobs = new Map();
    fakes = await startFakes(jobs);
    engine = await createLocalEngine({ threads: 2, native: process.env.AUDIO_ENGINE === "wasm" ? "never" : "auto" });
    bus = createMemoryBus();
    blobs = memoryBlobs();
    svc = await startAudioService({
      bus,
      blobs,
      engine,
      log,
      internalToken: INTERNAL,
      articles: rpcClient(ArticlesService, fakes.url, { token: INTERNAL }),
      auth: rpcClient(AuthService, fakes.url),
    });
    audio = createClient(AudioService, createConnectTransport({ baseUrl: svc.url, httpVersion: "1.1" }));
  });
  after(async () => {
    await svc?.close();
    await bus?.close();
    await engine?.close();
    closeRpcClients();
    await fakes?.close();
  });

  const code = (p: Promise<unknown>) => p.then(() => undefined, (e) => ConnectError.from(e));

  it("lists the voice table to any valid token and refuses a missing one", async () => {
    const r = await audio.listVoices({}, as("read-token"));
    expect(r.voices.map((v) => v.name)).to.include.members(["alloy", "de-DE-KatjaNeural"]);
    expect(r.voices.find((v) => v.name === "de-DE-KatjaNeural")?.langs).to.deep.equal(["de-DE"]);
    expect((await code(audio.listVoices({})))?.code).to.equal(Code.Unauthenticated);
    expect((await code(audio.listVoices({}, as("bogus"))))?.code).to.equal(Code.Unauthenticated);
  });

  it("PrepareText returns the paragraphs the engine will read", async () => {
    const r = await audio.prepareText({ title: "Titel", text: "<p>Das gilt z. B. ab 2024.</p><nav>Menü</nav>", lang: "de-DE", parse: true }, as("read-token"));
    expect(r.paragraphs).to.deep.equal(["Titel", "Das gilt zum Beispiel ab zweitausendvierundzwanzig."]);
    const bad = await code(audio.prepareText({ title: "T", text: "x", lang: "fr-FR" }, as("read-token")));
    expect(bad?.code).to.equal(Code.InvalidArgument);
    expect(bad?.rawMessage).to.match(/fr-FR/);
  });

  it("Synthesize stores ad-hoc audio for a full token or the internal token", async function () {
    this.timeout(60_000);
    quota.reserved.length = 0;
    const r = await audio.synthesize({ title: "Hello", text: "This is a short test of the audio service.", voice: "nova", lang: "en-US" }, as("full-token"));
    expect(r.full?.key).to.match(/^adhoc\/\d{10}\/[0-9a-f-]{36}\/full\.mp3$/);
    // Charged like an article: one reservation of title + text characters for the caller's project.
    expect(quota.reserved).to.deep.equal([{ projectId: "p1", chars: "Hello".length + "This is a short test of the audio service.".length }]);
    // Temporary: gone a day (plus the hour folder and one sweep) from now.
    const hoursLeft = (Number(r.expires) * 1000 - Date.now()) / 3_600_000;
    expect(hoursLeft).to.be.within(24, 25.2);
    expect(r.preview?.key).to.equal(r.full!.key.replace("full.mp3", "preview.mp3"));
    const stored = blobs.files.get(r.full!.key)!;
    expect(Number(r.full!.size)).to.equal(stored.length);
    expect(r.full!.duration).to.be.closeTo(mp3Duration(stored), 1e-6).and.greaterThan(1);
    expect(r.provider).to.equal(engine.name);
    const internal = await audio.synthesize({ title: "Hallo", text: "Ein kurzer Test.", voice: "de-DE-ConradNeural", lang: "de-DE" }, as(INTERNAL));
    expect(blobs.files.has(internal.full!.key)).to.equal(true);
    expect(quota.reserved, "internal callers have no project to charge").to.have.length(1);
  });

  it("Synthesize refuses a project at its daily limit or out of credit, before any work and storing nothing", async () => {
    const before = blobs.files.size;
    try {
      for (const [outcome, message] of [
        [ReservationOutcome.LIMIT_REACHED, /daily limit/],
        [ReservationOutcome.NO_MONEY, /Not enough credit: this synthesis needs 47600 characters/],
      ] as const) {
        quota.outcome = outcome;
        const e = await code(audio.synthesize({ title: "", text: "x".repeat(47_600), voice: "alloy", lang: "en-US" }, as("full-token")));
        expect(e?.code).to.equal(Code.ResourceExhausted);
        expect(e?.rawMessage).to.match(message);
      }
    } finally {
      quota.outcome = ReservationOutcome.RESERVED;
    }
    expect(blobs.files.size).to.equal(before);
  });

  it("Synthesize refuses read tokens and bad voice/lang pairs, storing nothing", async () => {
    const before = blobs.files.size;
    expect((await code(audio.synthesize({ title: "T", text: "x", voice: "alloy", lang: "en-US" }, as("read-token"))))?.code).to.equal(Code.PermissionDenied);
    const bad = await code(audio.synthesize({ title: "T", text: "x", voice: "de-DE-KatjaNeural", lang: "en-US" }, as("full-token")));
    expect(bad?.code).to.equal(Code.InvalidArgument);
    expect(bad?.rawMessage).to.equal("Voice 'de-DE-KatjaNeural' does not speak 'en-US'; allowed: de-DE");
    expect((await code(audio.synthesize({ title: "T", text: "x", voice: "robot", lang: "en-US" }, as("full-token"))))?.code).to.equal(Code.InvalidArgument);
    expect((await code(audio.synthesize({ title: "", text: "  ", voice: "alloy", lang: "en-US" }, as("full-token"))))?.code).to.equal(Code.InvalidArgument);
    expect(blobs.files.size).to.equal(before);
  });

  it("Synthesize speaks the pronunciations sent with it as an article's rules are spoken", async function () {
    this.timeout(60_000);
    const say = (text: string, pronunciations: Array<Record<string, unknown>> = [], lang = "en-US") =>
      audio.synthesize({ title: "", text, voice: "alloy", lang, pronunciations }, as("full-token"));
    // What a listener hears, as far as the engine reproduces it: the native engine's bytes; the WASM
    // build's encoder output differs from run to run, so there its length and duration.
    const heard = (r: { full?: { key: string } }) => {
      const mp3 = blobs.files.get(r.full!.key)!;
      return engine.name === "local-native" ? mp3.toString("base64") : `${mp3.length} bytes, ${mp3Duration(mp3)} s`;
    };
    const withRule = await say("Our reporter Nguyen was there.", [{ match: "Nguyen", say: "Win" }]);
    const substituted = await say("Our reporter Win was there.");
    const plain = await say("Our reporter Nguyen was there.");
    // A `say` rule sounds exactly like the respelling written into the text, and not like the word.
    expect(heard(withRule)).to.equal(heard(substituted));
    expect(heard(withRule)).not.to.equal(heard(plain));
    // A rule of another language is not applied, as on an article in this language.
    const german = await say("Our reporter Nguyen was there.", [{ match: "Nguyen", say: "Win", lang: "de" }]);
    expect(heard(german)).to.equal(heard(plain));
    // An IPA rule: its phonemes where the engine reads them, else its say fallback.
    const ipa = await say("Our reporter Nguyen was there.", [{ match: "Nguyen", ipa: "ŋwiən", say: "Win" }]);
    expect(mp3Duration(blobs.files.get(ipa.full!.key)!)).to.be.greaterThan(0.5);
    expect(heard(ipa) === heard(substituted), `engine ${engine.name}`).to.equal(engine.name !== "local-native");
  });

  it("Synthesize refuses a bad pronunciation rule as SetPronunciations does, before charging", async () => {
    quota.reserved.length = 0;
    const before = blobs.files.size;
    const e = await code(audio.synthesize({ title: "", text: "Hello Nguyen.", voice: "alloy", lang: "en-US", pronunciations: [{ match: "Nguyen", say: "Win", spell: true }] }, as("full-token")));
    expect(e?.code).to.equal(Code.InvalidArgument);
    expect(e?.rawMessage).to.match(/^pronunciations\[0\]\.spell: only one of say, spell or ipa/);
    const ipa = await code(audio.synthesize({ title: "", text: "Hello Nguyen.", voice: "alloy", lang: "en-US", pronunciations: [{ match: "Nguyen", ipa: "/ŋwiən/" }] }, as("full-token")));
    expect(ipa?.rawMessage).to.match(/^pronunciations\[0\]\.ipa: /);
    expect(quota.reserved).to.deep.equal([]);
    expect(blobs.files.size).to.equal(before);
  });

  it("renders a published 2,000 character article until it is ready", async function () {
    this.timeout(120_000);
    jobs.set("a2000", { revision: 1, text: articleOf(2000), status: ArticleStatus.WAITING });
    const started = Date.now();
    await bus.publish({ articleId: "a2000", projectId: "p1", revision: 1 });
    while (jobs.get("a2000")!.status !== ArticleStatus.READY && Date.now() - started < 100_000) await new Promise((r) => setTimeout(r, 20));
    const j = jobs.get("a2000")!;
    expect(j.status).to.equal(ArticleStatus.READY);
    expect(blobs.files.has("a2000/1/full.mp3")).to.equal(true);
    expect(j.duration).to.be.greaterThan(60);
    expect(j.previewDuration).to.be.at.most(30);
    if (process.env.AUDIO_TIMING) console.log(`      2,000 chars: ready after ${j.readyAt! - started} ms, ${j.duration!.toFixed(1)} s of audio (${engine.name})`);
  });
});
