import { expect } from "chai";
import { execFile, spawn } from "node:child_process";
import os from "node:os";
import { readFile } from "node:fs/promises";
import { promisify } from "node:util";
import { createLocalEngine, EngineClosedError, SpeechInputError, type SpeechEngine } from "../../services/audio/engine/index.js";
import { expectNoStall, readEvery, timed } from "../support/bystander.js";
import { requireNativeEngine } from "../support/native-engine.js";
import { childrenOf, descendantsOf, processInfo } from "../support/processes.js";
import { renderThroughCtrlC } from "../support/ctrl-c.js";
import { compileWasm } from "../../services/audio/engine/assets.js";
import { SynthPool } from "../../services/audio/engine/pool.js";
import { loadLame, type Lame } from "../../services/audio/engine/wasm-lame.js";
import { espeakVoice } from "../../services/audio/engine/voices.js";
import { joinMp3, mp3Duration, parseFrames } from "../../services/audio/mp3/index.js";
import { VOICES } from "../../lib/voices.js";

const EN =
  "The city council met on Tuesday evening to discuss the new bridge. After a long debate, the members agreed that construction should begin in the spring, " +
  "and that the old ferry will keep running until the work is finished.";
const DE =
  "Der Stadtrat hat am Dienstagabend über die neue Brücke beraten. Nach einer langen Debatte einigten sich die Mitglieder darauf, " +
  "im Frühjahr mit dem Bau zu beginnen und die alte Fähre bis zum Ende der Arbeiten weiter fahren zu lassen.";
// music-metadata may count one frame less or more than our parser; float sums need the epsilon.
const FRAME = 576 / 22050;

async function metadata(buf: Buffer, countFrames = false) {
  // Lazy import: mocha loads tests through require, which breaks this ESM package's CJS deps.
  const { parseBuffer } = await import("music-metadata");
  return (await parseBuffer(buf, { mimeType: "audio/mpeg" }, { duration: countFrames })).format;
}

function longText(chars: number): string {
  let text = "";
  for (let i = 1; text.length < chars; i++) text += `Sentence number ${i} adds a few more words to a text that keeps on going. `;
  return text.slice(0, chars);
}

// Every behaviour on both engines: WASM (a fresh machine) and native (the container image).
for (const kind of ["wasm", "native"] as const) describe(`local speech engine (${kind === "wasm" ? "WASM" : "native espeak-ng + lame"}): shared behaviour`, function () {
  // The engines render below the test's priority: beside busy programs a test here took over a minute.
  this.timeout(600_000);
  let engine: SpeechEngine;

  before(async function () {
    if (kind === "native") await requireNativeEngine(this);
    engine = await createLocalEngine({ native: kind === "wasm" ? "never" : "always", threads: 2 });
  });
  after(async () => {
    await engine?.close();
  });

  it("is the chosen engine producing 22.05 kHz mono 48 kbps, the format both engines share", () => {
    expect(engine.name).to.equal(`local-${kind}`);
    expect(engine.format).to.deep.equal({ sampleRate: 22050, channels: 1, bitrate: 48 });
  });

  for (const [lang, voice, text] of [
    ["en-US", "alloy", EN],
    ["de-DE", "de-DE-KatjaNeural", DE],
  ] as const) {
    it(`speaks a ${lang} paragraph as a valid MP3 in the announced format`, async () => {
      const mp3 = await engine.synthesize({ text, voice, lang });
      const frames = parseFrames(mp3);
      expect(frames.length).to.be.greaterThan(100);
      expect(frames.every((f) => f.sampleRate === 22050 && f.channels === 1 && f.bitrate === 48)).to.equal(true);
      const mm = await metadata(mp3, true);
      expect(mm.codec).to.equal("MPEG 2 Layer 3");
      expect(mm.sampleRate).to.equal(22050);
      expect(mm.numberOfChannels).to.equal(1);
      expect(mm.duration).to.be.closeTo(mp3Duration(mp3), FRAME + 1e-9);
      // A paragraph of ~200 characters is spoken in roughly 8–20 s.
      expect(mp3Duration(mp3)).to.be.within(6, 25);
    });
  }

  it("takes longer to say a longer text", async () => {
    const short = await engine.synthesize({ text: "The bridge opens in spring.", voice: "echo", lang: "en-US" });
    const long = await engine.synthesize({ text: EN, voice: "echo", lang: "en-US" });
    expect(mp3Duration(long)).to.be.greaterThan(mp3Duration(short) * 3);
  });

  it("gives each voice its own sound", async () => {
    const sentence = "Every voice should sound a little different, and this sentence is long enough to tell them apart by their pace.";
    const say = (voice: string, lang: "en-US" | "de-DE", text = sentence) => engine.synthesize({ text, voice, lang });
    // The spec's voices; Kokoro's own names, read by eSpeak when Kokoro is not loaded, borrow their profiles.
    const english = VOICES.filter((v) => v.langs.includes("en-US") && v.provider !== "local").map((v) => v.name);
    const takes = await Promise.all(english.map((voice) => say(voice, "en-US")));
    // eSpeak adds random noise, so bytes always differ; timing is deterministic per voice, so
    // distinct lengths show the voices really differ while the same voice repeats its length.
    const lengths = takes.map((t) => parseFrames(t).length);
    expect(new Set(lengths).size, lengths.join(",")).to.equal(english.length);
    expect(parseFrames(await say(english[0], "en-US")).length).to.equal(lengths[0]);
    const german = await Promise.all(["de-DE-ConradNeural", "de-DE-KatjaNeural"].map((voice) => say(voice, "de-DE", DE)));
    expect(parseFrames(german[0]).length).to.not.equal(parseFrames(german[1]).length);
  });

  it("maps all eight voices to distinct eSpeak settings, German voices to German", () => {
    const settings = VOICES.filter((v) => v.provider !== "local").map((v) => espeakVoice(v.name, v.langs.includes("en-US") ? "en-US" : "de-DE"));
    expect(new Set(settings.map((s) => JSON.stringify(s))).size).to.equal(8);
    // A Kokoro voice without Kokoro: the spec voice it stands for, else one of its sex.
    expect(espeakVoice("af_alloy", "en-US")).to.deep.equal(espeakVoice("alloy", "en-US"));
    expect(espeakVoice("bm_george", "en-US")).to.deep.equal(espeakVoice("echo", "en-US"));
    expect(espeakVoice("de-DE-ConradNeural", "de-DE").name).to.match(/^de\+/);
    expect(espeakVoice("nova", "de-DE").name).to.match(/^de\+/);
    expect(espeakVoice("nova", "en-US").name).to.match(/^en-us\+/);
  });

  it("reads markup-like characters as text instead of obeying them", async () => {
    const say = async (text: string) => mp3Duration(await engine.synthesize({ text, voice: "alloy", lang: "en-US" }));
    const plain = await say("Say hello there friend now.");
    // SSML tags and eSpeak phoneme brackets would otherwise be silently consumed.
    expect(await say("Say <emphasis>hello there friend</emphasis> now.")).to.be.greaterThan(plain * 1.5);
    expect(await say("Say [[h@loU]] now.")).to.be.greaterThan((await say("Say now.")) * 2);
  });

  it("rejects empty or whitespace-only text, unknown voices and wrong languages with SpeechInputError", async () => {
    for (const req of [
      { text: "", voice: "alloy", lang: "en-US" },
      { text: "  \n\t ", voice: "alloy", lang: "en-US" },
      { text: "Hello", voice: "nobody", lang: "en-US" },
      { text: "Hello", voice: "de-DE-KatjaNeural", lang: "en-US" },
      { text: "Hello", voice: "alloy", lang: "fr-FR" },
      { text: 42, voice: "alloy", lang: "en-US" },
    ]) {
      const err = await engine.synthesize(req as never).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err, JSON.stringify(req)).to.be.instanceOf(SpeechInputError);
    }
    // The engine is still usable afterwards.
    expect(parseFrames(await engine.synthesize({ text: "Still here.", voice: "alloy", lang: "en-US" })).length).to.be.greaterThan(10);
  });

  it("produces silence in the same format, joinable with speech", async () => {
    const pause = await engine.silence(600);
    expect(mp3Duration(pause)).to.be.closeTo(0.6, FRAME / 2);
    const speech = await engine.synthesize({ text: "Before and after.", voice: "nova", lang: "en-US" });
    const joined = joinMp3([speech, pause, speech]);
    expect((await metadata(joined)).duration).to.be.closeTo(2 * mp3Duration(speech) + mp3Duration(pause), 1e-6);
    await engine.silence(-1).then(
      () => expect.fail("negative silence accepted"),
      (e: unknown) => expect(e).to.be.instanceOf(RangeError),
    );
  });

  it("keeps the event loop free while synthesizing", async () => {
    // The loop's own turn, idle, against its turn while 8,000 characters are synthesized: over a
    // second of work, which on the main thread would be one stall (a relative measure: a loaded
    // machine stretches both).
    const turn = () => new Promise<void>((resolve) => setImmediate(resolve));
    const alone = await readEvery(turn, 5).stop(500);
    const bystander = readEvery(turn, 5);
    await engine.synthesize({ text: longText(8000), voice: "alloy", lang: "en-US" });
    const busy = await bystander.stop();
    expectNoStall("event loop while synthesizing", busy.max, alone.max, { factor: 10, slackMs: 250 });
  });

  it("stops a synthesis when its signal aborts", async () => {
    // The same text spoken to the end is the reference: an abort that only stopped the caller
    // waiting, not the work, would take about as long (a loaded machine stretches both).
    const whole = await timed(() => engine.synthesize({ text: longText(8000), voice: "alloy", lang: "en-US" }));
    const controller = new AbortController();
    const started = performance.now();
    const pending = engine.synthesize({ text: longText(8000), voice: "alloy", lang: "en-US" }, controller.signal);
    setTimeout(() => controller.abort(), 100);
    const err = await pending.then(
      () => null,
      (e: unknown) => e,
    );
    expect((err as Error)?.name).to.equal("AbortError");
    expect(performance.now() - started, `aborted after 100 ms; the whole text took ${whole.toFixed(0)} ms`).to.be.lessThan(Math.max(whole * 0.6, 100 + whole * 0.3));
    const already = new AbortController();
    already.abort();
    expect(await engine.synthesize({ text: "x", voice: "alloy", lang: "en-US" }, already.signal).catch((e: Error) => e.name)).to.equal("AbortError");
  });

  it("defaults the pool to one thread per core", async () => {
    const engineDefault = await createLocalEngine({ native: kind === "wasm" ? "never" : "always" });
    try {
      const mp3 = await engineDefault.synthesize({ text: "Default pool.", voice: "onyx", lang: "en-US" });
      expect(mp3Duration(mp3)).to.be.greaterThan(0.5);
    } finally {
      await engineDefault.close();
    }
    await createLocalEngine({ threads: 0 }).then(
      () => expect.fail("threads: 0 accepted"),
      (e: unknown) => expect(e).to.be.instanceOf(RangeError),
    );
    expect(os.availableParallelism()).to.be.at.least(1);
  });
});

describe("speech worker pool", function () {
  this.timeout(600_000);
  let pool: SynthPool | undefined;
  afterEach(async () => {
    await pool?.close();
    pool = undefined;
  });

  it("runs one job per thread at the same time and queues the rest", async () => {
    pool = await SynthPool.start(2);
    const voice = espeakVoice("alloy", "en-US");
    const jobs = [0, 1, 2, 3].map((i) => pool!.run(`Job number ${i} is being spoken now.`, voice));
    expect(pool.running).to.equal(2);
    expect(pool.queued).to.equal(2);
    const results = await Promise.all(jobs);
    expect(results.every((r) => parseFrames(r).length > 20)).to.equal(true);
    expect(pool.running).to.equal(0);
  });

  it("frees an aborted job's thread quickly for the next one", async () => {
    pool = await SynthPool.start(1);
    const voice = espeakVoice("alloy", "en-US");
    // A tenth of the long job, spoken whole on the same thread: the scale of this machine right now.
    const tenth = await timed(() => pool!.run(longText(2000), voice));
    const controller = new AbortController();
    const long = pool.run(longText(20000), voice, controller.signal).catch((e: Error) => e);
    await new Promise((r) => setTimeout(r, 100));
    controller.abort();
    const started = performance.now();
    // On the single thread this waits for the aborted job to wind down (about ten tenths if it did not).
    await pool.run("Next one.", voice);
    expect(performance.now() - started, `a tenth of the job took ${tenth.toFixed(0)} ms`).to.be.lessThan(Math.max(3000, tenth * 4));
    expect(((await long) as Error).name).to.equal("AbortError");
  });

  it("rejects queued and new jobs after close()", async () => {
    pool = await SynthPool.start(1);
    const voice = espeakVoice("alloy", "en-US");
    const running = pool.run(longText(3000), voice).catch((e: unknown) => e);
    const queued = pool.run("Queued.", voice).catch((e: unknown) => e);
    await pool.close();
    expect(await running).to.be.instanceOf(EngineClosedError);
    expect(await queued).to.be.instanceOf(EngineClosedError);
    expect(await pool.run("After.", voice).catch((e: unknown) => e)).to.be.instanceOf(EngineClosedError);
  });

  it("lets the process exit by itself after close()", async () => {
    const script = [
      `import { createLocalEngine } from ${JSON.stringify(new URL("../../services/audio/engine/index.ts", import.meta.url).href)};`,
      `const engine = await createLocalEngine({ native: "never", threads: 2 });`,
      `const mp3 = await engine.synthesize({ text: "Goodbye.", voice: "alloy", lang: "en-US" });`,
      `await engine.close();`,
      `console.log("bytes", mp3.length);`,
    ].join("\n");
    const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (out += d.toString()));
    const code = await new Promise<number | null>((resolve) => {
      const timer = setTimeout(() => {
        child.kill("SIGKILL");
        resolve(null);
      }, 30000);
      child.on("exit", (c) => {
        clearTimeout(timer);
        resolve(c);
      });
    });
    expect(code, out).to.equal(0);
    expect(out).to.match(/bytes \d{3,}/);
  });
});

describe("WASM LAME encoder", function () {
  this.timeout(600_000);
  // Speech-like enough for the encoder: a tone under a slow envelope, different per seed.
  const pcm = (seconds: number, seed: number) =>
    Int16Array.from({ length: seconds * 22050 }, (_, i) => Math.round(12000 * Math.sin(i * 0.03 * seed) * Math.sin(i * 0.0004)));
  const encode = (lame: Lame, samples: Int16Array, kbps: number) => {
    const stream = lame.open(22050, kbps, 7);
    for (let at = 0; at < samples.length; at += 2205) stream.write(samples.subarray(at, at + 2205));
    return stream.end();
  };

  it("gives each stream on one instance the bytes a fresh instance gives, whether its output buffer grew, stayed or was let go", () => {
    const shared = loadLame(compileWasm().lame);
    // ~0.6 MB (grows the buffer, which is kept), 5 s, ~2.2 MB at 160 kbps (past what is kept), 5 s again.
    const streams = [[pcm(100, 1), 48], [pcm(5, 2), 48], [pcm(110, 3), 160], [pcm(5, 4), 48]] as const;
    for (const [samples, kbps] of streams) {
      const mp3 = encode(shared, samples, kbps);
      // Every sample is in the frames (plus the encoder's delay and padding, under 0.1 s).
      expect(mp3Duration(Buffer.from(mp3)) - samples.length / 22050).to.be.within(0, 0.1);
      expect(Buffer.from(mp3).equals(Buffer.from(encode(loadLame(compileWasm().lame), samples, kbps)))).to.equal(true);
      // Transferred to the parent thread: the bytes must own their whole ArrayBuffer.
      expect([mp3.byteOffset, mp3.byteLength]).to.deep.equal([0, mp3.buffer.byteLength]);
    }
  });
});

describe("local speech engine (native espeak-ng + lame)", function () {
  this.timeout(600_000);
  let engine: SpeechEngine | undefined;

  before(async function () {
    await requireNativeEngine(this);
    engine = await createLocalEngine({ native: "always", threads: 2 });
  });
  after(async () => {
    await engine?.close();
  });

  it("is chosen by default when the programs are on PATH and speaks both languages in the same format", async () => {
    const auto = await createLocalEngine();
    expect(auto.name).to.equal("local-native");
    await auto.close();
    expect(engine!.name).to.equal("local-native");
    for (const [text, voice, lang] of [
      [EN, "shimmer", "en-US"],
      [DE, "de-DE-ConradNeural", "de-DE"],
    ] as const) {
      const mp3 = await engine!.synthesize({ text, voice, lang });
      const mm = await metadata(mp3, true);
      expect(mm.sampleRate).to.equal(22050);
      expect(mm.numberOfChannels).to.equal(1);
      expect(mm.duration).to.be.closeTo(mp3Duration(mp3), FRAME + 1e-9);
      expect(mp3Duration(mp3)).to.be.within(6, 25);
      expect(parseFrames(mp3).every((f) => f.bitrate === 48)).to.equal(true);
    }
  });

  it("joins with WASM output, and rejects bad input the same way", async () => {
    const wasm = await createLocalEngine({ native: "never", threads: 1 });
    try {
      const a = await wasm.synthesize({ text: "From the WASM engine.", voice: "alloy", lang: "en-US" });
      const b = await engine!.synthesize({ text: "From the native engine.", voice: "alloy", lang: "en-US" });
      expect(mp3Duration(joinMp3([a, b]))).to.be.closeTo(mp3Duration(a) + mp3Duration(b), 1e-9);
    } finally {
      await wasm.close();
    }
    const err = await engine!.synthesize({ text: " ", voice: "alloy", lang: "en-US" }).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(SpeechInputError);
  });

  it("sounds like the WASM build: the same eSpeak NG release and data, so the same timing in both languages", async function () {
    // Other releases time speech differently; the WASM build is 1.51.
    const { stdout } = await promisify(execFile)("espeak-ng", ["--version"]);
    if (!/: 1\.51\b/.test(stdout)) this.skip();
    const wasm = await createLocalEngine({ native: "never", threads: 1 });
    try {
      for (const [text, voice, lang] of [
        [EN, "fable", "en-US"],
        [DE, "de-DE-KatjaNeural", "de-DE"],
      ] as const) {
        const a = mp3Duration(await wasm.synthesize({ text, voice, lang }));
        const b = mp3Duration(await engine!.synthesize({ text, voice, lang }));
        expect(a, lang).to.be.closeTo(b, 0.1);
      }
    } finally {
      await wasm.close();
    }
  });

  it("kills the programs when aborted", async () => {
    // A tenth of the text spoken whole: what the machine needs for a tenth of the work right now.
    const tenth = await timed(() => engine!.synthesize({ text: longText(3000), voice: "alloy", lang: "en-US" }));
    const controller = new AbortController();
    const pending = engine!.synthesize({ text: longText(30000), voice: "alloy", lang: "en-US" }, controller.signal).catch((e: Error) => e);
    setTimeout(() => controller.abort(), 50);
    const started = performance.now();
    expect(((await pending) as Error).name).to.equal("AbortError");
    expect(performance.now() - started, `a tenth of the text took ${tenth.toFixed(0)} ms`).to.be.lessThan(Math.max(2000, tenth * 4));
    // The programs are children of this process, and gone.
    expect(await speechChildren()).to.deep.equal([]);
  });

  it("runs the programs below the service's priority, and stops them when closed", async function () {
    if (process.platform !== "linux") this.skip();
    // The host starts below the test's priority: beside busy programs it may take a minute to start them.
    this.timeout(180_000);
    const others = new Set((await speechHosts()).map((h) => h.pid));
    const own = await createLocalEngine({ native: "always", threads: 1 });
    const pending = own.synthesize({ text: longText(30000), voice: "alloy", lang: "en-US" }).catch((e: Error) => e);
    // This engine's own host and its programs: a program of an earlier test may still be leaving.
    let hosts: Array<{ pid: number; nice: number }> = [];
    let running: Array<{ comm: string; nice: number }> = [];
    const both = () => ["espeak-ng", "lame"].every((comm) => running.some((c) => c.comm === comm));
    for (const until = Date.now() + 150_000; Date.now() < until && !both(); ) {
      await new Promise((r) => setTimeout(r, 20));
      hosts = (await speechHosts()).filter((h) => !others.has(h.pid));
      running = hosts.flatMap((h) => descendantsOf(h.pid)).filter((p) => p.comm === "espeak-ng" || p.comm === "lame").map(({ comm, nice }) => ({ comm, nice }));
    }
    expect(running.map((c) => c.comm).sort()).to.deep.equal(["espeak-ng", "lame"]);
    for (const c of running) expect(c.nice, c.comm).to.equal(10);
    // They run in the native speech host, a child process below the service's priority too.
    expect(hosts.length, "speech hosts").to.equal(1);
    for (const h of hosts) expect(h.nice, "host").to.equal(10);
    await own.close();
    expect(await pending).to.be.instanceOf(EngineClosedError);
    expect(await speechChildren()).to.deep.equal([]);
    for (const h of hosts) expect(await processGone(h.pid), `host ${h.pid} still running`).to.equal(true);
  });

  it("finishes a render in flight when the terminal's Ctrl-C reaches the service's process group", async function () {
    if (process.platform !== "linux") this.skip();
    // The programs run below the test's priority: on a busy machine they get a tenth of a core or
    // less, so the text is long enough to be in flight at the signal, and no longer.
    this.timeout(180_000);
    // The service as its own process group leader, handling SIGINT as the services do (a graceful stop).
    const out = await renderThroughCtrlC({
      engine: `import { createLocalEngine } from ${JSON.stringify(new URL("../../services/audio/engine/index.ts", import.meta.url).href)};\nconst engine = await createLocalEngine({ native: "always", threads: 1 });`,
      request: { text: longText(5000), voice: "alloy", lang: "en-US" },
      // Once eSpeak runs below it, the whole group gets the terminal's SIGINT.
      before: async (pid) => {
        for (let i = 0; i < 300; i++) {
          if (descendantsOf(pid).some((p) => p.comm === "espeak-ng")) break;
          await new Promise((r) => setTimeout(r, 20));
        }
      },
    });
    expect(out).to.include("SIGINT");
    expect(out, out).to.match(/BYTES \d{5,}/);
    expect(out.indexOf("SIGINT"), "the signal came while the render was in flight").to.be.below(out.indexOf("BYTES"));
  });

  it("closes even when its host cannot leave by itself: a host that does not exit is killed", async function () {
    if (process.platform !== "linux") this.skip();
    const own = await createLocalEngine({ native: "always", threads: 1 });
    const before = new Set((await speechHosts()).map((h) => h.pid));
    await own.synthesize({ text: "Hello.", voice: "alloy", lang: "en-US" });
    const host = (await speechHosts()).find((h) => !before.has(h.pid))?.pid;
    expect(host, "the engine's host").to.be.a("number");
    // Stopped, it can neither see its channel close nor exit: as a host starved of the CPU.
    process.kill(host!, "SIGSTOP");
    try {
      await own.close();
      expect(processInfo(host!), "the stopped host after close()").to.equal(undefined);
    } finally {
      // Left stopped, it would hold the test run's output pipe open.
      if (processInfo(host!)) process.kill(host!, "SIGKILL");
    }
  });

  it("fails the renders of a host that died, and starts a new one for the next render", async function () {
    if (process.platform !== "linux") this.skip();
    const own = await createLocalEngine({ native: "always", threads: 2 });
    try {
      const before = new Set((await speechHosts()).map((h) => h.pid));
      const pending = own.synthesize({ text: longText(30000), voice: "alloy", lang: "en-US" }).catch((e: Error) => e);
      let host: number | undefined;
      // Killed mid-render: once its programs run.
      for (let i = 0; i < 500 && host === undefined; i++) {
        await new Promise((r) => setTimeout(r, 20));
        host = (await speechHosts()).find((h) => !before.has(h.pid) && childrenOf(h.pid).some((p) => processInfo(p)?.comm === "espeak-ng"))?.pid;
      }
      expect(host, "a host rendering").to.be.a("number");
      process.kill(host!, "SIGKILL");
      const err = (await pending) as Error;
      expect(err).to.be.instanceOf(Error);
      expect(err.message).to.match(/native speech host exited \(SIGKILL\)/);
      const mp3 = await own.synthesize({ text: "Hello again.", voice: "alloy", lang: "en-US" });
      expect(mp3Duration(mp3)).to.be.greaterThan(0.3);
    } finally {
      await own.close();
    }
  });
});

/** espeak-ng and lame processes descended from this process (through the native speech host), with their nice values (Linux /proc). */
async function speechChildrenNow(): Promise<Array<{ comm: string; nice: number }>> {
  return descendantsOf(process.pid).filter((p) => p.comm === "espeak-ng" || p.comm === "lame").map(({ comm, nice }) => ({ comm, nice }));
}

/** The native speech hosts this process started (the node processes among its children). */
async function speechHosts(): Promise<Array<{ pid: number; nice: number }>> {
  // Known by the module it runs (native-host.js, or its bundle native-host.mjs): the name of a
  // Node process is "node" on Node 20 and "MainThread" on Node 24.
  const hosts: Array<{ pid: number; nice: number }> = [];
  for (const p of childrenOf(process.pid).map(processInfo)) {
    if (!p) continue;
    const cmdline = await readFile(`/proc/${p.pid}/cmdline`, "utf8").catch(() => "");
    if (/native-host\.m?js\0/.test(cmdline)) hosts.push({ pid: p.pid, nice: p.nice });
  }
  return hosts;
}

/** Whether a process has left (up to a second). */
async function processGone(pid: number): Promise<boolean> {
  for (let attempt = 0; attempt < 50; attempt++) {
    if (!processInfo(pid)) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return false;
}

/**
 * The same, once the killed ones are gone. The speech host that kills them runs below the test's
 * priority: beside busy programs it waits its turn, so this gives it up to a minute.
 */
async function speechChildren(): Promise<Array<{ comm: string; nice: number }>> {
  for (let attempt = 0; ; attempt++) {
    const found = await speechChildrenNow();
    if (found.length === 0 || attempt === 3000) return found;
    await new Promise((r) => setTimeout(r, 20));
  }
}
