import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { access, constants } from "node:fs/promises";
import path from "node:path";
import { Leveler } from "../loudness/limiter.js";
import { EdgeShaper } from "./pcm.js";
import { LOCAL_FORMAT } from "./types.js";
import type { EspeakVoice } from "./voices.js";

// eSpeak and LAME are batch work: at a lower priority than the service that
// spawned them, a many-hour render never takes the CPU from the requests it
// serves (on a 2-core machine two of them made other projects' reads wait).
// The native speech host takes this niceness, and the programs it spawns inherit it.
export const SPEECH_NICENESS = 10;

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
 * espeak-ng → WAV on stdout → edges trimmed and faded (as in the WASM path) → raw PCM into lame →
 * MP3 frames. Both programs run at once and the PCM streams through us, with backpressure, as
 * through the shell pipe `espeak-ng | lame`; passing through us lets both engines shape audio
 * identically.
 */
export function nativeSynthesize(programs: NativePrograms, voice: EspeakVoice, text: string, signal?: AbortSignal): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    let settled = false;
    const children: ChildProcessWithoutNullStreams[] = [];
    const fail = (err: unknown) => {
      if (settled) return;
      settled = true;
      for (const child of children) child.kill("SIGKILL");
      reject(err);
    };
    const start = (program: string, args: string[], onExit: (code: number | null, stderr: string) => void) => {
      const child = spawn(program, args, { stdio: ["pipe", "pipe", "pipe"], signal });
      children.push(child);
      let stderr = "";
      child.stderr.on("data", (d: Buffer) => (stderr = (stderr + d.toString("utf8")).slice(-300)));
      child.on("error", (e) => fail(e.name === "AbortError" ? (signal?.reason ?? e) : e));
      // EPIPE when the program exits early; the exit code then tells the real story.
      child.stdin.on("error", () => {});
      child.on("close", (code) => {
        if (!settled && !signal?.aborted) onExit(code, stderr.trim());
      });
      return child;
    };
    const exitError = (program: string, code: number | null, stderr: string) =>
      new Error(`${path.basename(program)} exited with code ${code}${stderr ? `: ${stderr}` : ""}`);

    const wav = new WavReader();
    let lame: ChildProcessWithoutNullStreams | undefined;
    let shaper: EdgeShaper | undefined;
    let levelerRef: Leveler | undefined;
    const mp3: Buffer[] = [];
    const espeak = start(programs.espeak, ["-v", voice.name, "-p", String(voice.pitch), "-s", String(voice.rate), "--stdin", "--stdout"], (code, stderr) => {
      if (code !== 0) return fail(exitError(programs.espeak, code, stderr));
      if (!shaper || !lame) return fail(new Error("espeak-ng did not produce a WAV stream"));
      levelerRef?.finish();
      shaper.finish();
      lame.stdin.end();
    });
    espeak.stdout.on("data", (bytes: Buffer) => {
      if (settled) return;
      let samples: Int16Array | null;
      try {
        samples = wav.push(bytes);
      } catch (err) {
        return fail(err);
      }
      if (!samples) return;
      if (!shaper) {
        const encoder = startLame(wav.sampleRate);
        lame = encoder;
        const write = (pcm: Int16Array) => {
          // Copied: the shaper and leveler reuse their buffers. When lame lags, espeak waits (the pipe's backpressure).
          if (!encoder.stdin.write(Buffer.from(pcm.slice().buffer))) espeak.stdout.pause();
        };
        // Leveled first, so the edges are found on the audio as it will sound.
        const edges = new EdgeShaper(wav.sampleRate, write);
        shaper = edges;
        levelerRef = voice.ceiling > 0 ? new Leveler(wav.sampleRate, voice.gain, voice.ceiling, (leveled) => edges.push(leveled)) : undefined;
        encoder.stdin.on("drain", () => espeak.stdout.resume());
      }
      if (levelerRef) levelerRef.push(samples);
      else shaper.push(samples);
    });
    espeak.stdin.end(Buffer.from(text, "utf8"));

    function startLame(sampleRate: number): ChildProcessWithoutNullStreams {
      const args = [
        "-r", "-s", String(sampleRate / 1000), "--bitwidth", "16", "--signed", "--little-endian",
        "-m", "m", "-b", String(LOCAL_FORMAT.bitrate), "--cbr", "-q", "7",
        ...(sampleRate === LOCAL_FORMAT.sampleRate ? [] : ["--resample", String(LOCAL_FORMAT.sampleRate / 1000)]),
        "-t", "--silent", "-", "-",
      ];
      const child = start(programs.lame, args, (code, stderr) => {
        if (code !== 0) return fail(exitError(programs.lame, code, stderr));
        settled = true;
        resolve(Buffer.concat(mp3));
      });
      child.stdout.on("data", (d: Buffer) => mp3.push(d));
      return child;
    }
  });
}

/**
 * 16-bit mono PCM from a WAV byte stream, block by block; tolerates the unknown sizes espeak-ng
 * writes when streaming (the data chunk runs to the end of the stream).
 */
export class WavReader {
  sampleRate = 0;
  private header: Buffer | null = Buffer.alloc(0);
  private carry: Buffer | null = null;

  /** Samples in `bytes`, or null while the header is still incomplete. */
  push(bytes: Buffer): Int16Array | null {
    if (this.header) {
      const all = Buffer.concat([this.header, bytes]);
      const start = this.dataStart(all);
      if (start < 0) {
        this.header = all;
        return null;
      }
      this.header = null;
      bytes = all.subarray(start);
    }
    if (this.carry) {
      bytes = Buffer.concat([this.carry, bytes]);
      this.carry = null;
    }
    const count = bytes.length >> 1;
    if (bytes.length & 1) this.carry = Buffer.from(bytes.subarray(bytes.length - 1));
    const samples = new Int16Array(count);
    // A typed copy instead of a readInt16LE call per sample (little-endian, as every platform Node runs on).
    Buffer.from(samples.buffer).set(bytes.subarray(0, count * 2));
    return samples;
  }

  /** Offset of the PCM data, or -1 when more header bytes are needed. */
  private dataStart(wav: Buffer): number {
    if (wav.length < 12) return -1;
    if (wav.toString("latin1", 0, 4) !== "RIFF" || wav.toString("latin1", 8, 12) !== "WAVE") throw new Error("espeak-ng did not produce a WAV stream");
    let pos = 12;
    while (pos + 8 <= wav.length) {
      const id = wav.toString("latin1", pos, pos + 4);
      const size = wav.readUInt32LE(pos + 4);
      if (id === "data") {
        if (!this.sampleRate) throw new Error("espeak-ng's WAV has no format chunk before its data");
        return pos + 8;
      }
      if (id === "fmt ") {
        if (pos + 8 + 16 > wav.length) return -1;
        const channels = wav.readUInt16LE(pos + 10);
        const bits = wav.readUInt16LE(pos + 22);
        if (channels !== 1 || bits !== 16) throw new Error(`Unexpected WAV from espeak-ng: ${channels} channels, ${bits} bits`);
        this.sampleRate = wav.readUInt32LE(pos + 12);
      }
      pos += 8 + size + (size & 1);
    }
    return -1;
  }
}
