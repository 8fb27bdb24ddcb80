// The Kokoro speech host: a child process that holds the model (one ONNX Runtime session, loaded
// once and kept) and renders texts one at a time for the service that started it
// (kokoro/index.ts): sentences -> eSpeak's IPA -> Kokoro -> 24 kHz PCM -> leveled -> LAME. It
// runs below the service's priority, so inference never takes the CPU from the requests the
// service answers, and it leaves when its parent does.
//   argv: KOKORO_DIR, espeak-ng's path, lame.wasm's path, onnxruntime-node's entry, intra-op threads
import { readFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { ENCODER_PEAK_MARGIN_DB, Leveler } from "../../loudness/limiter.js";
import { measure } from "../../loudness/meter.js";
import { isKokoroVoice, kokoroAccent } from "../catalog.js";
import { SPEECH_NICENESS } from "../native.js";
import { runBelowService } from "../priority.js";
import type { HostReply, HostStartTiming, KokoroHostRequest, KokoroJob, RenderTiming } from "../native-host-protocol.js";
import { EdgeShaper } from "../pcm.js";
import { KOKORO_FORMAT, KOKORO_RATE } from "../types.js";
import { loadLame } from "../wasm-lame.js";
import { exitWithParent } from "../orphan-watch.js";
import { kokoroFiles } from "./files.js";
import { clauses, espeakIpa, pack, sentences, tokenize, toKokoroIpa, vocabOf } from "./phonemes.js";

exitWithParent();

// Niced, not at the idle policy: an idle-policy host runs only when nothing else in its group
// wants the CPU, so any busy program in the service's session (a test run beside two `yes`
// processes) starved its renders completely. Nice values still let a woken service thread in
// first, and leave the host a share when the machine is busy.
runBelowService(SPEECH_NICENESS);
// In the service's process group (index.ts): the terminal's Ctrl-C is the service's to handle (a
// graceful stop that lets the renders in flight finish, then closes this host), not this host's.
process.on("SIGINT", () => {});

const [dir, espeak, lameWasm, ortEntry, threadsArg] = process.argv.slice(2);
const send = (reply: HostReply) => process.send?.(reply);

// One row of a voice's style per input length (the model's own limit is 510 tokens).
const STYLE_DIM = 256;
// Pauses between the model's calls: after a sentence, as between sentences in speech; inside one
// (a long sentence in pieces), shorter, as after a comma.
const SENTENCE_GAP_S = 0.3;
const PIECE_GAP_S = 0.15;
// Below this (full scale 1) a sample counts as silence at a piece's edges; a little of it stays.
const EDGE_FLOOR = 0.004;
const EDGE_KEEP_S = 0.04;
// Kokoro's raw speech is around -23 LUFS: the gain for text too short to be measured.
const UNMEASURED_LUFS = -23;
const LAME_QUALITY = 7;

interface OrtTensor {
  data: Float32Array;
}
interface OrtSession {
  run(feeds: Record<string, unknown>): Promise<Record<string, OrtTensor>>;
  inputNames: readonly string[];
}
interface Ort {
  InferenceSession: { create(file: string, options: object): Promise<OrtSession> };
  Tensor: new (type: string, data: unknown, dims: number[]) => unknown;
}

async function load() {
  const files = kokoroFiles(dir);
  const mod = (await import(pathToFileURL(ortEntry).href)) as Ort & { default?: Ort };
  const ort = mod.default ?? mod;
  const threads = Math.max(1, Number(threadsArg) || 1);
  const session = await ort.InferenceSession.create(files.model, {
    intraOpNumThreads: threads,
    interOpNumThreads: 1,
    executionMode: "sequential",
    graphOptimizationLevel: "all",
    // Spinning threads wait for work by burning CPU: on a shared 2-core machine that costs more than it saves.
    extra: { session: { intra_op: { allow_spinning: "0" }, inter_op: { allow_spinning: "0" } } },
  });
  for (const name of ["tokens", "style", "speed"]) if (!session.inputNames.includes(name)) throw new Error(`Kokoro's model has no input '${name}'`);
  const vocab = vocabOf(JSON.parse(readFileSync(files.config, "utf8")));
  const space = vocab.get(" ");
  if (space === undefined) throw new Error("Kokoro's vocab has no space");
  const lame = loadLame(new WebAssembly.Module(readFileSync(lameWasm)));
  return { ort, session, vocab, space, lame, files };
}

const loadStarted = performance.now();
const engine = await load().catch((err: unknown) => {
  send({ type: "init-failed", message: err instanceof Error ? err.message : String(err) });
  process.exit(1);
});
const { ort, session, vocab, space, lame, files } = engine;
const loadMs = performance.now() - loadStarted;

const styles = new Map<string, Float32Array>();
function styleOf(voice: string): Float32Array {
  let style = styles.get(voice);
  if (!style) {
    const bytes = readFileSync(path.join(files.voices, `${voice}.bin`));
    style = new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
    styles.set(voice, style);
  }
  return style;
}

/** CPU ms of this process (the ONNX Runtime threads included) since `from`. */
function cpuMsSince(from: NodeJS.CpuUsage): number {
  const d = process.cpuUsage(from);
  return (d.user + d.system) / 1000;
}

async function infer(tokens: number[], style: Float32Array): Promise<Float32Array> {
  const n = Math.min(tokens.length, style.length / STYLE_DIM - 1);
  const ids = BigInt64Array.from([0, ...tokens.slice(0, n), 0], (t) => BigInt(t));
  const out = await session.run({
    tokens: new ort.Tensor("int64", ids, [1, ids.length]),
    style: new ort.Tensor("float32", style.slice(n * STYLE_DIM, (n + 1) * STYLE_DIM), [1, STYLE_DIM]),
    speed: new ort.Tensor("float32", Float32Array.of(1), [1]),
  });
  const audio = Object.values(out)[0]?.data;
  if (!(audio instanceof Float32Array)) throw new Error("Kokoro gave no audio");
  return audio;
}

/** The piece without the silence at its edges, but for a little of it. */
function trimEdges(audio: Float32Array): Float32Array {
  let start = 0;
  let end = audio.length;
  while (start < end && Math.abs(audio[start]) < EDGE_FLOOR) start++;
  while (end > start && Math.abs(audio[end - 1]) < EDGE_FLOOR) end--;
  const keep = Math.round(EDGE_KEEP_S * KOKORO_RATE);
  return audio.subarray(Math.max(0, start - keep), Math.min(audio.length, end + keep));
}

/**
 * The job's speech as 24 kHz samples: a step per model call (a sentence, or a piece of a long
 * one), then the whole. The turn is given up between calls, never after the last: a text whose
 * last call is done is finished at once, not after another text's call.
 */
async function* speak(job: KokoroJob, timing: RenderTiming): AsyncGenerator<void, Float32Array, void> {
  if (!isKokoroVoice(job.voice)) throw new Error(`Kokoro has no voice '${job.voice}'`);
  const style = styleOf(job.voice);
  const espeakVoice = kokoroAccent(job.voice) === "en-GB" ? "en-gb" : "en-us";
  const parts: Float32Array[] = [];
  let total = 0;
  const add = (a: Float32Array) => {
    parts.push(a);
    total += a.length;
  };
  // A sentence's tokens, asked of eSpeak while the model speaks the one before.
  const tokensOf = async (sentence: string) => {
    const cls = clauses(sentence);
    const ipa = await Promise.all(cls.map((c) => espeakIpa(espeak, espeakVoice, c.words)));
    return ipa.map((p, i) => tokenize(toKokoroIpa(p) + cls[i].stop, vocab)).filter((t) => t.length > 0);
  };
  const list = sentences(job.text);
  let next = list.length > 0 ? tokensOf(list[0]) : undefined;
  // Not left unhandled while the generator waits for its turn: awaited below, or dropped with a cancelled text.
  next?.catch(() => undefined);
  for (let s = 0; s < list.length; s++) {
    const waited = performance.now();
    const tokens = await next!;
    timing.phonemesMs += performance.now() - waited;
    next = s + 1 < list.length ? tokensOf(list[s + 1]) : undefined;
    next?.catch(() => undefined);
    for (const [i, piece] of pack(tokens, space).entries()) {
      if (timing.steps > 0) yield;
      if (total > 0) add(new Float32Array(Math.round((i === 0 ? SENTENCE_GAP_S : PIECE_GAP_S) * KOKORO_RATE)));
      const started = performance.now();
      const cpu = process.cpuUsage();
      add(trimEdges(await infer(piece, style)));
      timing.inferMs += performance.now() - started;
      timing.inferCpuMs += cpuMsSince(cpu);
      timing.steps++;
    }
  }
  // Text with nothing to pronounce (a row of dashes) is a short pause, as eSpeak makes of it.
  if (total === 0) add(new Float32Array(Math.round(SENTENCE_GAP_S * KOKORO_RATE)));
  const pcm = new Float32Array(total);
  let at = 0;
  for (const p of parts) {
    pcm.set(p, at);
    at += p.length;
  }
  timing.audioS = total / KOKORO_RATE;
  return pcm;
}

/** MP3 frames of the samples, leveled to the job's target (its integrated loudness measured first). */
function encode(pcm: Float32Array, level: KokoroJob["level"]): Uint8Array<ArrayBuffer> {
  const mp3 = lame.open(KOKORO_FORMAT.sampleRate, KOKORO_FORMAT.bitrate, LAME_QUALITY);
  try {
    const shaper = new EdgeShaper(KOKORO_RATE, (samples) => mp3.write(samples));
    let leveler: Leveler | undefined;
    if (level) {
      const measured = measure(pcm, KOKORO_RATE).lufs;
      const gain = Math.pow(10, (level.lufs - (Number.isFinite(measured) ? measured : UNMEASURED_LUFS)) / 20);
      leveler = new Leveler(KOKORO_RATE, gain, Math.pow(10, (level.truePeak - ENCODER_PEAK_MARGIN_DB) / 20), (samples) => shaper.push(samples));
    }
    const BLOCK = 8192;
    const block = new Int16Array(BLOCK);
    for (let at = 0; at < pcm.length; at += BLOCK) {
      const n = Math.min(BLOCK, pcm.length - at);
      for (let i = 0; i < n; i++) block[i] = Math.max(-32768, Math.min(32767, Math.round(pcm[at + i] * 32767)));
      const view = block.subarray(0, n);
      if (leveler) leveler.push(view);
      else shaper.push(view);
    }
    leveler?.finish();
    shaper.finish();
    return mp3.end();
  } finally {
    mp3.close();
  }
}

// One model call at a time (the session's threads are the engine's whole share of the CPU), taken
// in turn from every text in hand: a long chunk of one article delays another's first audio by one
// sentence's render, not by the whole chunk.
type Job = Extract<KokoroHostRequest, { type: "synthesize" }>;
interface Turn {
  id: number;
  level: Job["level"];
  steps: AsyncGenerator<void, Float32Array, void>;
  timing: RenderTiming;
  arrived: number;
  /** performance.now() at its first step, and the wall time of its own steps. */
  firstStep?: number;
  ownMs: number;
}
const active: Turn[] = [];
const cancelled = new Set<number>();
let busy = false;
/** The text whose step is running. */
let current: number | undefined;

async function drain(): Promise<void> {
  if (busy) return;
  busy = true;
  try {
    for (let turn = active.shift(); turn; turn = active.shift()) {
      const { id } = turn;
      try {
        if (cancelled.delete(id)) {
          await turn.steps.return(new Float32Array(0));
          continue;
        }
        current = id;
        const stepStarted = performance.now();
        turn.firstStep ??= stepStarted;
        const step = await turn.steps.next();
        const stepEnded = performance.now();
        turn.ownMs += stepEnded - stepStarted;
        current = undefined;
        if (cancelled.delete(id)) continue;
        if (!step.done) {
          active.push(turn);
          continue;
        }
        const mp3 = encode(step.value, turn.level);
        const t = turn.timing;
        t.encodeMs = performance.now() - stepEnded;
        t.queuedMs = turn.firstStep - turn.arrived;
        t.othersMs = Math.max(0, stepEnded - turn.firstStep - turn.ownMs);
        t.totalMs = performance.now() - turn.arrived;
        send({ type: "done", id, mp3, timing: t });
      } catch (err) {
        current = undefined;
        if (!cancelled.delete(id)) send({ type: "failed", id, message: err instanceof Error ? err.message : String(err) });
      }
    }
  } finally {
    busy = false;
  }
}

process.on("message", (msg: KokoroHostRequest) => {
  if (msg.type === "cancel") {
    if (msg.id === current || active.some((t) => t.id === msg.id)) cancelled.add(msg.id);
    return;
  }
  const timing: RenderTiming = { queuedMs: 0, phonemesMs: 0, inferMs: 0, inferCpuMs: 0, encodeMs: 0, othersMs: 0, totalMs: 0, steps: 0, audioS: 0 };
  active.push({ id: msg.id, level: msg.level, steps: speak(msg, timing), timing, arrived: performance.now(), ownMs: 0 });
  void drain();
});

// The parent is gone (stopped, or killed): so is the work it asked for.
process.on("disconnect", () => process.exit(0));

/**
 * One short sentence through every stage before the host says it is ready: ONNX Runtime's first
 * call on a new session costs several later calls (its arenas and kernels are set up then), and
 * eSpeak's data, the leveler and LAME are loaded by their first use. Without this the first
 * listener after a start would pay for it before the first sound.
 */
async function warmUp(): Promise<Omit<HostStartTiming, "loadMs">> {
  const started = performance.now();
  const cpu = process.cpuUsage();
  const voice = files.voiceNames.find(isKokoroVoice);
  if (voice) {
    const timing: RenderTiming = { queuedMs: 0, phonemesMs: 0, inferMs: 0, inferCpuMs: 0, encodeMs: 0, othersMs: 0, totalMs: 0, steps: 0, audioS: 0 };
    const steps = speak({ text: "Good morning, and welcome.", voice, level: null }, timing);
    let step = await steps.next();
    while (!step.done) step = await steps.next();
    encode(step.value, { lufs: -19, truePeak: -1 });
  }
  return { warmupMs: performance.now() - started, warmupCpuMs: cpuMsSince(cpu) };
}

const warm = await warmUp().catch((err: unknown) => {
  send({ type: "init-failed", message: `Kokoro's first call failed: ${err instanceof Error ? err.message : String(err)}` });
  process.exit(1);
});
send({ type: "ready", timing: { loadMs, ...warm } });
