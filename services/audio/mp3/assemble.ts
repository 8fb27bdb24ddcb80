import { describe, sameStream, type FrameHeader } from "./header.js";
import { mainDataBegin, mainDataSize, scanFrames, type Mp3Frame } from "./frames.js";
import { buildInfoFrame } from "./info.js";

export function mp3Duration(buf: Buffer): number {
  return duration(scanFrames(buf).frames);
}

/**
 * Frame-level concatenation without re-encoding, behind one fresh Info/Xing header.
 *
 * Gaplessness: every part keeps its own encoder delay and padding (LAME: ~1105 leading and up to
 * one frame of trailing samples of silence, ~50–70 ms per part at 24 kHz). They are not trimmed:
 * the MP3 frame is the smallest unit we can cut without re-encoding, and the engine fades each
 * part in and out, so the extra silence sits between sentences where it is heard as part of the
 * pause rather than as a click. No LAME gapless fields are written, so players do not trim either,
 * and the duration players show equals the sum of the parts' frame durations.
 *
 * The bit reservoir never crosses a join: a part's opening frames whose data would start before
 * the part (only possible for cuts from the middle of a stream) are turned into silent frames,
 * as a decoder would otherwise read the previous part's bytes as their audio data.
 */
export function joinMp3(parts: Buffer[]): Buffer {
  const picked: Picked[] = [];
  let reference: FrameHeader | undefined;
  let referenceIndex = 0;
  parts.forEach((part, index) => {
    if (!((part as unknown) instanceof Uint8Array)) throw new TypeError(`joinMp3: part ${index} is not a Buffer`);
    const scan = scanFrames(part);
    if (scan.frames.length === 0) {
      // Empty input or an Info-only file (a zero-length slice) is a legitimately empty part.
      if (part.length === 0 || scan.infoFrames > 0) return;
      throw new Error(`joinMp3: part ${index} contains no MPEG audio frames`);
    }
    const head = scan.headers[0];
    if (!reference) {
      reference = head;
      referenceIndex = index;
    } else if (!sameStream(reference, head)) {
      throw new Error(`joinMp3: part ${index} is ${describe(head)} but part ${referenceIndex} is ${describe(reference)}`);
    }
    picked.push(...decodableFrames(part, scan.frames, scan.headers));
  });
  if (!reference) throw new Error("joinMp3: no MPEG audio frames in any part");
  return assemble(picked, reference);
}

/** The opening of `buf` up to `maxSeconds`, cut at a frame boundary, with its own Info header. */
export function sliceMp3(buf: Buffer, maxSeconds: number): Buffer {
  if (typeof maxSeconds !== "number" || !(maxSeconds >= 0)) throw new RangeError(`sliceMp3: maxSeconds must be a number >= 0, got ${maxSeconds}`);
  const scan = scanFrames(buf);
  if (scan.frames.length === 0) throw new Error("sliceMp3: no MPEG audio frames in input");
  const picked: Picked[] = [];
  let time = 0;
  for (let i = 0; i < scan.frames.length; i++) {
    const f = scan.frames[i];
    const next = time + f.samples / f.sampleRate;
    // The tolerance absorbs float rounding so that asking for exactly N frames yields N frames.
    if (next > maxSeconds + 1e-9) break;
    time = next;
    picked.push({ buf, frame: f, header: scan.headers[i] });
  }
  return assemble(picked, scan.headers[0]);
}

interface Picked {
  buf: Uint8Array;
  frame: Mp3Frame;
  header: FrameHeader;
  /** Its audio data starts before the part it came from. */
  mute?: boolean;
}

function decodableFrames(buf: Uint8Array, frames: Mp3Frame[], headers: FrameHeader[]): Picked[] {
  let reservoir = 0;
  let started = false;
  return frames.map((frame, i) => {
    const header = headers[i];
    const orphan = !started && mainDataBegin(buf, frame, header) > reservoir;
    started ||= !orphan;
    reservoir += mainDataSize(header);
    return { buf, frame, header, mute: orphan };
  });
}

/**
 * A copy of the frame with zeroed side information: it decodes to silence, while its payload
 * bytes stay in the stream for the reservoir of the frames that follow.
 */
function muted(p: Picked): Uint8Array {
  const copy = Buffer.from(p.buf.subarray(p.frame.offset, p.frame.offset + p.frame.length));
  copy.fill(0, 4 + (p.header.crc ? 2 : 0), 4 + (p.header.crc ? 2 : 0) + p.header.sideInfoSize);
  return copy;
}

function assemble(picked: Picked[], template: FrameHeader): Buffer {
  const frames = picked.map((p) => p.frame);
  const vbr = frames.some((f) => f.bitrate !== frames[0].bitrate);
  const first = picked[0];
  const modeByte = first ? first.buf[first.frame.offset + 3] : template.channels === 1 ? 0xc0 : 0;
  const info = buildInfoFrame(first?.header ?? template, modeByte, frames, vbr);
  return Buffer.concat([info, ...picked.map((p) => (p.mute ? muted(p) : p.buf.subarray(p.frame.offset, p.frame.offset + p.frame.length)))]);
}

function duration(frames: readonly Mp3Frame[]): number {
  return frames.reduce((t, f) => t + f.samples / f.sampleRate, 0);
}
