// Re-encoding for chunks whose stream differs from the article's (e.g. OpenAI
// at another rate than the first chunk): MP3 frames only join losslessly within
// one stream, so only those chunks are decoded and encoded again.
import { MPEGDecoder } from "mpg123-decoder";
import { createMp3Encoder, type WasmMediaEncoder } from "wasm-media-encoders";
import type { Mp3Format } from "../engine/types.js";
import { fadeEdges } from "../engine/pcm.js";
import { scanFrames } from "../mp3/frames.js";

export function streamFormat(mp3: Buffer): Mp3Format | undefined {
  const h = scanFrames(mp3).headers[0];
  return h && { sampleRate: h.sampleRate, channels: h.channels, bitrate: h.bitrate };
}

/** Frames can be concatenated: same MPEG version, layer, rate and channels (bitrate may vary, the Xing header covers that). */
export function sameStreamFormat(a: Mp3Format, b: Mp3Format): boolean {
  return a.sampleRate === b.sampleRate && a.channels === b.channels;
}

let tools: Promise<{ decoder: MPEGDecoder; encoder: WasmMediaEncoder<"audio/mpeg"> }> | undefined;
// The WASM decoder and encoder hold stream state: one conversion at a time.
let queue: Promise<unknown> = Promise.resolve();

function loadTools() {
  tools ??= (async () => {
    const decoder = new MPEGDecoder();
    const [encoder] = await Promise.all([createMp3Encoder(), decoder.ready]);
    return { decoder, encoder };
  })();
  return tools;
}

function toChannels(data: Float32Array[], channels: 1 | 2): Float32Array[] {
  if (data.length === channels) return data;
  if (channels === 2) return [data[0], data[0]];
  const mono = new Float32Array(data[0].length);
  for (let i = 0; i < mono.length; i++) mono[i] = (data[0][i] + data[1][i]) / 2;
  return [mono];
}

export function reencode(mp3: Buffer, target: Mp3Format): Promise<Buffer> {
  const run = queue.then(async () => {
    const { decoder, encoder } = await loadTools();
    await decoder.reset();
    const decoded = decoder.decode(mp3);
    if (decoded.samplesDecoded === 0) throw new Error("re-encode: the chunk decodes to no audio");
    const channels = toChannels(decoded.channelData, target.channels);
    for (const c of channels) fadeEdges(c, decoded.sampleRate);
    encoder.configure({
      sampleRate: decoded.sampleRate,
      channels: target.channels,
      bitrate: target.bitrate as 48,
      outputSampleRate: target.sampleRate as 24000,
    });
    const out = [Buffer.from(encoder.encode(channels)), Buffer.from(encoder.finalize())];
    return Buffer.concat(out);
  });
  queue = run.catch(() => undefined);
  return run;
}
