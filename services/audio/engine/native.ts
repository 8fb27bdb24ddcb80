import { spawn } from "node:child_process";
import { access, constants } from "node:fs/promises";
import path from "node:path";
import { shapeEdges, toInt16 } from "./pcm.js";
import { LOCAL_FORMAT } from "./types.js";
import type { EspeakVoice } from "./voices.js";

/** Absolute path of an executable on PATH, or null. */
export async function findProgram(name: string): Promise<string | null> {
  for (const dir of (process.env.PATH ?? "").split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    try {
      await access(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not in this directory
    }
  }
  return null;
}

export interface NativePrograms {
  espeak: string;
  lame: string;
}

export async function findNativePrograms(): Promise<NativePrograms | null> {
  const [espeak, lame] = await Promise.all([findProgram("espeak-ng"), findProgram("lame")]);
  return espeak && lame ? { espeak, lame } : null;
}

/**
 * espeak-ng → WAV on stdout → (edges trimmed and faded, as in the WASM path) → raw PCM into lame → MP3 frames.
 * The PCM passes through us rather than a shell pipe so both engines shape audio identically.
 */
export async function nativeSynthesize(programs: NativePrograms, voice: EspeakVoice, text: string, signal?: AbortSignal): Promise<Buffer> {
  const wav = await run(programs.espeak, ["-v", voice.name, "-p", String(voice.pitch), "-s", String(voice.rate), "--stdin", "--stdout"], Buffer.from(text, "utf8"), signal);
  const { sampleRate, samples } = readWav(wav);
  const shaped = shapeEdges(samples, sampleRate);
  const lameArgs = [
    "-r", "-s", String(sampleRate / 1000), "--bitwidth", "16", "--signed", "--little-endian",
    "-m", "m", "-b", String(LOCAL_FORMAT.bitrate), "--cbr", "-q", "7",
    ...(sampleRate === LOCAL_FORMAT.sampleRate ? [] : ["--resample", String(LOCAL_FORMAT.sampleRate / 1000)]),
    "-t", "--silent", "-", "-",
  ];
  return run(programs.lame, lameArgs, toInt16(shaped), signal);
}

function run(program: string, args: string[], input: Buffer, signal?: AbortSignal): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, { stdio: ["pipe", "pipe", "pipe"], signal });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on("data", (d: Buffer) => out.push(d));
    child.stderr.on("data", (d: Buffer) => err.push(d));
    child.on("error", (e) => reject(e.name === "AbortError" ? (signal?.reason ?? e) : e));
    // EPIPE when the program exits early; the exit code then tells the real story.
    child.stdin.on("error", () => {});
    child.on("close", (code) => {
      if (code === 0) resolve(Buffer.concat(out));
      else if (!signal?.aborted) {
        const detail = Buffer.concat(err).toString("utf8").trim().slice(0, 300);
        reject(new Error(`${path.basename(program)} exited with code ${code}${detail ? `: ${detail}` : ""}`));
      }
    });
    child.stdin.end(input);
  });
}

/** 16-bit PCM WAV as float samples; tolerates the unknown sizes espeak-ng writes when streaming. */
export function readWav(wav: Buffer): { sampleRate: number; samples: Float32Array } {
  if (wav.length < 12 || wav.toString("latin1", 0, 4) !== "RIFF" || wav.toString("latin1", 8, 12) !== "WAVE") throw new Error("espeak-ng did not produce a WAV stream");
  let pos = 12;
  let sampleRate = 0;
  while (pos + 8 <= wav.length) {
    const id = wav.toString("latin1", pos, pos + 4);
    const size = wav.readUInt32LE(pos + 4);
    if (id === "fmt ") {
      const channels = wav.readUInt16LE(pos + 10);
      sampleRate = wav.readUInt32LE(pos + 12);
      const bits = wav.readUInt16LE(pos + 22);
      if (channels !== 1 || bits !== 16) throw new Error(`Unexpected WAV from espeak-ng: ${channels} channels, ${bits} bits`);
    } else if (id === "data") {
      if (!sampleRate) break;
      const end = Math.min(wav.length, size > 0 && size !== 0xffffffff ? pos + 8 + size : wav.length);
      const count = Math.floor((end - pos - 8) / 2);
      // A typed view instead of a readInt16LE call per sample: tens of millions for a long article.
      const pcm = new Int16Array(count);
      Buffer.from(pcm.buffer).set(wav.subarray(pos + 8, pos + 8 + count * 2));
      const samples = new Float32Array(count);
      for (let i = 0; i < count; i++) samples[i] = pcm[i] / 32768;
      return { sampleRate, samples };
    }
    pos += 8 + size + (size & 1);
  }
  throw new Error("espeak-ng WAV has no audio data");
}
