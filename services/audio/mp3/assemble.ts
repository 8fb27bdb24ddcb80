import { describe, sameStream, type FrameHeader } from "./header.js";
import { mainDataBegin, mainDataSize, scanFrames, type Mp3Frame } from "./frames.js";
import { buildInfoFrame } from "./info.js";
import { finish, finishInSlices, type Steps } from "../../../lib/slices.js";

export function mp3Duration(buf: Buffer): number {
  return duration(scanFrames(buf).frames);
}

/**
 * Frame-level concatenation without re-encoding, behind one fresh Info/Xing header.
 *
 * Gaplessness: every part keeps its own encoder delay and padding (LAME: ~1105 leading and up to
 * one frame of trailing samples of silence, ~50–70 ms per part at 22–24 kHz). They are not
 * trimmed: the MP3 frame is the smallest unit we can cut without re-encoding, and the engine gives
 * each part fixed, faded silent edges sized with this in mind, so the extra silence is heard as
 * part of the pause between two sentences rather than as a click or a gap. No LAME gapless fields are written, so players do not trim either,
 * and the duration players show equals the sum of the parts' frame durations.
 *
 * The bit reservoir never crosses a join: a part's opening frames whose data would start before
 * the part (only possible for cuts from the middle of a stream) are turned into silent frames,
 * as a decoder would otherwise read the previous part's bytes as their audio data.
 */
export function joinMp3(parts: Buffer[], prefix?: Buffer): Buffer {
  return finish(joinSteps(parts, prefix));
}

/** joinMp3 in slices of a few milliseconds: hours of audio are joined without holding up the event loop. */
export function joinMp3InSlices(parts: Buffer[], prefix?: Buffer): Promise<Buffer> {
  return finishInSlices(joinSteps(parts, prefix));
}

/** mp3Duration, a step per part: the parts of a long article are measured between other work. */
export function* durationSteps(parts: readonly Buffer[]): Steps<number[]> {
  const seconds: number[] = [];
  for (const part of parts) {
    seconds.push(mp3Duration(part));
    yield;
  }
  return seconds;
}

function* joinSteps(parts: Buffer[], prefix?: Buffer): Steps<Buffer> {
  const picked: PartFrames[] = [];
  let reference: FrameHeader | undefined;
  let referenceIndex = 0;
  for (const [index, part] of parts.entries()) {
    if (!((part as unknown) instanceof Uint8Array)) throw new TypeError(`joinMp3: part ${index} is not a Buffer`);
    const scan = scanFrames(part);
    if (scan.frames.length === 0) {
      // Empty input or an Info-only file (a zero-length slice) is a legitimately empty part.
      if (part.length === 0 || scan.infoFrames > 0) continue;
      throw new Error(`joinMp3: part ${index} contains no MPEG audio frames`);
    }
    const head = scan.headers[0];
    if (!reference) {
      reference = head;
      referenceIndex = index;
    } else if (!sameStream(reference, head)) {
      throw new Error(`joinMp3: part ${index} is ${describe(head)} but part ${referenceIndex} is ${describe(reference)}`);
    }
    // Only offsets, lengths and the mute flags are kept: a long article has hundreds of
    // thousands of frames, and an object per frame for all of them cost more than the audio.
    picked.push(decodableFrames(part, scan.frames, scan.headers));
    yield;
  }
  if (!reference) throw new Error("joinMp3: no MPEG audio frames in any part");
  return yield* assemble(picked, reference, prefix);
}

/** The opening of `buf` up to `maxSeconds`, cut at a frame boundary, with its own Info header. */
export function sliceMp3(buf: Buffer, maxSeconds: number): Buffer {
  if (typeof maxSeconds !== "number" || !(maxSeconds >= 0)) throw new RangeError(`sliceMp3: maxSeconds must be a number >= 0, got ${maxSeconds}`);
  const scan = scanFrames(buf);
  if (scan.frames.length === 0) throw new Error("sliceMp3: no MPEG audio frames in input");
  let time = 0;
  let count = 0;
  for (const f of scan.frames) {
    const next = time + f.samples / f.sampleRate;
    // The tolerance absorbs float rounding so that asking for exactly N frames yields N frames.
    if (next > maxSeconds + 1e-9) break;
    time = next;
    count++;
  }
  const frames = scan.frames.slice(0, count);
  return finish(assemble([partFrames(buf, frames, scan.headers[0], new Uint8Array(count))], scan.headers[0]));
}

/** The frames taken from one part, in compact form. */
interface PartFrames {
  buf: Uint8Array;
  offsets: Int32Array;
  lengths: Int32Array;
  bitrates: Int32Array;
  /** 1 where the frame's audio data would start before the part. */
  mute: Uint8Array;
  /** Every frame of a stream has the same header layout (CRC, side information size). */
  header: FrameHeader;
}

function partFrames(buf: Uint8Array, frames: readonly Mp3Frame[], header: FrameHeader, mute: Uint8Array): PartFrames {
  return {
    buf,
    offsets: Int32Array.from(frames, (f) => f.offset),
    lengths: Int32Array.from(frames, (f) => f.length),
    bitrates: Int32Array.from(frames, (f) => f.bitrate),
    mute,
    header,
  };
}

function decodableFrames(buf: Uint8Array, frames: Mp3Frame[], headers: FrameHeader[]): PartFrames {
  const mute = new Uint8Array(frames.length);
  let reservoir = 0;
  for (let i = 0; i < frames.length; i++) {
    if (mainDataBegin(buf, frames[i], headers[i]) <= reservoir) break;
    // An orphan at the start of the part: its data lives in a part we do not have.
    mute[i] = 1;
    reservoir += mainDataSize(headers[i]);
  }
  return partFrames(buf, frames, headers[0], mute);
}

// Frames copied between two yields when one part is long (a part is usually a sentence or two).
const COPY_STEP_FRAMES = 2048;

/** `prefix` (an ID3 tag) is written into the same allocation: an hour of audio is not copied again to tag it. */
function* assemble(parts: PartFrames[], template: FrameHeader, prefix?: Buffer): Steps<Buffer> {
  let count = 0;
  let audioBytes = 0;
  for (const p of parts) {
    count += p.lengths.length;
    for (const n of p.lengths) audioBytes += n;
    yield;
  }
  const lengths = new Int32Array(count);
  let vbr = false;
  let firstBitrate = 0;
  let at = 0;
  for (const p of parts) {
    lengths.set(p.lengths, at);
    for (const b of p.bitrates) {
      firstBitrate ||= b;
      if (b !== firstBitrate) vbr = true;
    }
    at += p.lengths.length;
    yield;
  }
  const first = parts.find((p) => p.lengths.length > 0);
  const modeByte = first ? first.buf[first.offsets[0] + 3] : template.channels === 1 ? 0xc0 : 0;
  const info = buildInfoFrame(first?.header ?? template, modeByte, { count, lengths, samples: template.samples, sampleRate: template.sampleRate }, vbr);

  const head = prefix?.length ?? 0;
  const out = Buffer.allocUnsafe(head + info.length + audioBytes);
  if (prefix) prefix.copy(out, 0);
  info.copy(out, head);
  let pos = head + info.length;
  for (const p of parts) {
    const sideInfo = 4 + (p.header.crc ? 2 : 0);
    for (let i = 0; i < p.lengths.length; i++) {
      out.set(p.buf.subarray(p.offsets[i], p.offsets[i] + p.lengths[i]), pos);
      // Zeroed side information decodes to silence, while the payload bytes stay in the
      // stream for the reservoir of the frames that follow.
      if (p.mute[i]) out.fill(0, pos + sideInfo, pos + sideInfo + p.header.sideInfoSize);
      pos += p.lengths[i];
      if (i % COPY_STEP_FRAMES === COPY_STEP_FRAMES - 1) yield;
    }
    yield;
  }
  return out;
}

function duration(frames: readonly Mp3Frame[]): number {
  return frames.reduce((t, f) => t + f.samples / f.sampleRate, 0);
}
