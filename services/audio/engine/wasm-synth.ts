import { Leveler } from "../loudness/limiter.js";
import { EdgeShaper } from "./pcm.js";
import type { WasmModules } from "./protocol.js";
import { ESPEAK_RATE, LOCAL_FORMAT } from "./types.js";
import type { EspeakVoice } from "./voices.js";
import { loadEspeak } from "./wasm-espeak.js";
import { loadLame } from "./wasm-lame.js";

export interface WasmSynth {
  /**
   * MP3 frames for the text, or null when `aborted` turned true midway. The bytes own their
   * ArrayBuffer, so a worker can transfer it instead of copying.
   */
  synthesize(voice: EspeakVoice, text: string, aborted: () => boolean): Uint8Array<ArrayBuffer> | null;
}

// LAME's quality setting, as the native pipe's `lame -q 7`: the same encoder at the same speed.
const LAME_QUALITY = 7;

/**
 * Loads eSpeak NG and LAME (both WASM) once; the returned synth is reused for every request.
 * Samples stream from eSpeak through the edge shaping straight into LAME, so a text of any length
 * needs only a few blocks of PCM in memory, like the `espeak-ng | lame` pipe.
 */
export async function loadWasmSynth(assetsDir: string, modules: WasmModules): Promise<WasmSynth> {
  const espeak = await loadEspeak(assetsDir, modules.espeak);
  const lame = loadLame(modules.lame);
  if (espeak.sampleRate !== ESPEAK_RATE) throw new Error(`eSpeak runs at ${espeak.sampleRate} Hz, expected ${ESPEAK_RATE}`);

  return {
    synthesize(voice, text, aborted) {
      const mp3 = lame.open(LOCAL_FORMAT.sampleRate, LOCAL_FORMAT.bitrate, LAME_QUALITY);
      try {
        // Leveled first, so the edges are found on the audio as it will sound.
        const shaper = new EdgeShaper(ESPEAK_RATE, (samples) => mp3.write(samples));
        const leveler = voice.ceiling > 0 ? new Leveler(ESPEAK_RATE, voice.gain, voice.ceiling, (samples) => shaper.push(samples)) : undefined;
        const finished = espeak.speak(voice, text, (block) => {
          if (aborted()) return false;
          if (leveler) leveler.push(block);
          else shaper.push(block);
          return true;
        });
        if (!finished || aborted()) return null;
        leveler?.finish();
        shaper.finish();
        return mp3.end();
      } finally {
        mp3.close();
      }
    },
  };
}
