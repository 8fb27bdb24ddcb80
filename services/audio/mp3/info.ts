import { encodeHeader, frameLength, layer3Bitrates, type FrameHeader } from "./header.js";

// "Info"/"Xing" + flags + frame count + byte count + 100-entry seek table.
const TAG_BYTES = 4 + 4 + 4 + 4 + 100;
const FLAG_FRAMES = 1;
const FLAG_BYTES = 2;
const FLAG_TOC = 4;

/**
 * A silent Layer III frame carrying an Info (CBR) or Xing (VBR) tag that describes `frames`.
 * Players read the frame count for an exact duration and the TOC for seeking; the frame itself
 * decodes to silence in players that do not know the tag, and is never counted as audio.
 */
/** The frames an Info header describes; one stream, so every frame has the same duration. */
export interface FrameSummary {
  count: number;
  lengths: Int32Array;
  samples: number;
  sampleRate: number;
}

export function buildInfoFrame(template: FrameHeader, modeByte: number, frames: FrameSummary, vbr: boolean): Buffer {
  const offset = 4 + template.sideInfoSize;
  // The tag frame keeps the stream's bitrate when it fits (so CBR stays uniform); at very low
  // bitrates a larger frame is needed to hold the seek table.
  const bitrate = layer3Bitrates(template.sampleRate).find(
    (kbps) => kbps >= template.bitrate && frameLength(template.version, 3, kbps, template.sampleRate, 0) >= offset + TAG_BYTES,
  );
  if (bitrate === undefined) throw new RangeError("No frame size at this sample rate can hold an Info header");
  const length = frameLength(template.version, 3, bitrate, template.sampleRate, 0);
  const frame = Buffer.alloc(length);
  encodeHeader(template.sampleRate, template.channels, bitrate, modeByte).copy(frame, 0);

  let audioBytes = 0;
  for (const n of frames.lengths) audioBytes += n;
  const totalBytes = length + audioBytes;
  frame.write(vbr ? "Xing" : "Info", offset, "latin1");
  frame.writeUInt32BE(FLAG_FRAMES | FLAG_BYTES | FLAG_TOC, offset + 4);
  frame.writeUInt32BE(frames.count, offset + 8);
  frame.writeUInt32BE(totalBytes, offset + 12);
  writeToc(frame, offset + 16, frames, length, totalBytes);
  return frame;
}

/** TOC entry i: where (as a fraction of 256 of the file) playback at i% of the duration starts. */
function writeToc(out: Buffer, at: number, frames: FrameSummary, headerLength: number, totalBytes: number): void {
  let bytes = headerLength;
  let index = 0;
  for (let i = 0; i < 100; i++) {
    // Frames wholly before i% of the duration (all frames last equally long).
    const before = Math.floor((frames.count * i) / 100 + 1e-9);
    while (index < before) bytes += frames.lengths[index++];
    out[at + i] = frames.count > 0 ? Math.min(255, Math.floor((bytes * 256) / totalBytes)) : 0;
  }
}
