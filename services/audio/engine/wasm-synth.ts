import createESpeak from "@echogarden/espeak-ng-emscripten";
import { createMp3Encoder, type WasmMediaEncoder } from "wasm-media-encoders";
import { toFloat } from "./pcm.js";
import { ESPEAK_RATE, LOCAL_FORMAT } from "./types.js";
import type { EspeakVoice } from "./voices.js";

export interface WasmSynth {
  /**
   * MP3 frames for the text, or null when `aborted` turned true midway. The bytes own their
   * ArrayBuffer, so a worker can transfer it instead of copying.
   */
  synthesize(voice: EspeakVoice, text: string, aborted: () => boolean): Uint8Array<ArrayBuffer> | null;
}

// Encoding in slices keeps peak WASM memory flat for long texts and gives abort a chance to act.
const ENCODE_SLICE = ESPEAK_RATE * 10;

/** Loads eSpeak NG and LAME (both WASM) once; the returned synth is reused for every request. */
export async function loadWasmSynth(): Promise<WasmSynth> {
  const [espeak, encoder] = await Promise.all([createESpeak(), createMp3Encoder()]);
  const worker = new espeak.eSpeakNGWorker();
  if (worker.get_samplerate() !== ESPEAK_RATE) throw new Error(`eSpeak runs at ${worker.get_samplerate()} Hz, expected ${ESPEAK_RATE}`);

  let chunks: Int16Array[] = [];
  let shouldStop: () => boolean = () => false;
  // eSpeak stops synthesis when its callback returns non-zero.
  const callback = espeak.addFunction((samples, count) => {
    if (shouldStop()) return 1;
    if (count > 0) chunks.push(espeak.HEAP16.slice(samples >> 1, (samples >> 1) + count));
    return 0;
  }, "iiii");

  return {
    synthesize(voice, text, aborted) {
      if (worker.set_voice(voice.name) !== 0) throw new Error(`eSpeak has no voice '${voice.name}'`);
      worker.set_rate(voice.rate);
      worker.set_pitch(voice.pitch);
      chunks = [];
      shouldStop = aborted;
      try {
        worker.synth_(text, callback);
      } finally {
        shouldStop = () => false;
      }
      if (aborted()) return null;
      const pcm = toFloat(chunks, ESPEAK_RATE);
      chunks = [];
      return encode(encoder, pcm, aborted);
    },
  };
}

function encode(encoder: WasmMediaEncoder<"audio/mpeg">, pcm: Float32Array, aborted: () => boolean): Uint8Array<ArrayBuffer> | null {
  encoder.configure({
    sampleRate: ESPEAK_RATE,
    channels: 1,
    bitrate: LOCAL_FORMAT.bitrate as 48,
    outputSampleRate: LOCAL_FORMAT.sampleRate as 22050,
  });
  const out: Uint8Array[] = [];
  let bytes = 0;
  const keep = (view: Uint8Array) => {
    // The encoder's output view points into WASM memory and is overwritten by the next call.
    out.push(view.slice());
    bytes += view.length;
  };
  for (let at = 0; at < pcm.length; at += ENCODE_SLICE) {
    if (aborted()) return null;
    keep(encoder.encode([pcm.subarray(at, at + ENCODE_SLICE)]));
  }
  keep(encoder.finalize());
  const mp3 = new Uint8Array(bytes);
  let at = 0;
  for (const piece of out) {
    mp3.set(piece, at);
    at += piece.length;
  }
  return mp3;
}
