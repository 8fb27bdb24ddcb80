import { readHeader, sameStream, type FrameHeader } from "./header.js";

export interface Mp3Frame {
  offset: number;
  length: number;
  samples: number;
  sampleRate: number;
  bitrate: number;
  channels: number;
}

/** Internal result: the audio frames plus what was skipped, so callers can tell "empty" from "not MP3". */
export interface ScanResult {
  frames: Mp3Frame[];
  headers: FrameHeader[];
  /** Xing/Info/VBRI frames that were recognised and left out. */
  infoFrames: number;
  /** The first frame header seen, audio or Info, used as a template. */
  first?: FrameHeader;
}

// How far past lost sync we look for the next frame before calling the rest garbage.
// Large enough for junk between concatenated files, small enough to give up quickly on non-MP3 data.
const MAX_RESYNC_BYTES = 64 * 1024;

export function parseFrames(buf: Buffer): Mp3Frame[] {
  return scanFrames(buf).frames;
}

export function scanFrames(buf: Uint8Array): ScanResult {
  const frames: Mp3Frame[] = [];
  const headers: FrameHeader[] = [];
  const { infoFrames, first } = walkFrames(buf, (offset, h) => {
    frames.push({ offset, length: h.length, samples: h.samples, sampleRate: h.sampleRate, bitrate: h.bitrate, channels: h.channels });
    headers.push(h);
  });
  return { frames, headers, infoFrames, first };
}

/**
 * Calls `visit` for every audio frame, in order, without collecting them (a pass over an hour of
 * audio need not hold an object per frame); the frames are scanFrames' frames.
 */
export function walkFrames(buf: Uint8Array, visit: (offset: number, h: FrameHeader) => void): Pick<ScanResult, "infoFrames" | "first"> {
  const result: Pick<ScanResult, "infoFrames" | "first"> = { infoFrames: 0 };
  const end = audioEnd(buf);
  let pos = 0;
  let locked: FrameHeader | undefined;
  while (pos + 4 <= end) {
    const id3 = id3v2Size(buf, pos, end);
    if (id3 > 0) {
      pos += id3;
      continue;
    }
    const h = readHeader(buf, pos);
    if (h && pos + h.length <= end && (locked ? sameStream(locked, h) : confirmed(buf, pos, h, end))) {
      locked ??= h;
      result.first ??= h;
      if (isInfoFrame(buf, pos, h)) result.infoFrames++;
      else visit(pos, h);
      pos += h.length;
      continue;
    }
    const next = resync(buf, pos + 1, end, locked);
    if (next < 0) break;
    pos = next;
  }
  return result;
}

/** A candidate header counts when the next frame follows it (or it ends exactly at the end of the data). */
function confirmed(buf: Uint8Array, pos: number, h: FrameHeader, end: number): boolean {
  const next = pos + h.length;
  if (next === end) return true;
  if (id3v2Size(buf, next, end) > 0) return true;
  const n = readHeader(buf, next);
  return n !== null && sameStream(h, n);
}

function resync(buf: Uint8Array, from: number, end: number, locked: FrameHeader | undefined): number {
  const limit = Math.min(end - 4, from + MAX_RESYNC_BYTES);
  for (let p = from; p <= limit; p++) {
    if (buf[p] === 0x49 && id3v2Size(buf, p, end) > 0) return p;
    if (buf[p] !== 0xff) continue;
    const h = readHeader(buf, p);
    if (!h || p + h.length > end) continue;
    if (locked && !sameStream(locked, h)) continue;
    if (confirmed(buf, p, h, end)) return p;
  }
  return -1;
}

/** Size of an ID3v2 tag starting at pos (header, body and footer), 0 when there is none. */
function id3v2Size(buf: Uint8Array, pos: number, end: number): number {
  if (pos + 10 > end || buf[pos] !== 0x49 || buf[pos + 1] !== 0x44 || buf[pos + 2] !== 0x33) return 0;
  const sizeBytes = buf.subarray(pos + 6, pos + 10);
  if (buf[pos + 3] === 0xff || buf[pos + 4] === 0xff || sizeBytes.some((b) => b & 0x80)) return 0;
  const size = (sizeBytes[0] << 21) | (sizeBytes[1] << 14) | (sizeBytes[2] << 7) | sizeBytes[3];
  const footer = buf[pos + 5] & 0x10 ? 10 : 0;
  return Math.min(10 + size + footer, end - pos);
}

/** End of the audio area: trailing ID3v1 and APEv2 tags are excluded. */
function audioEnd(buf: Uint8Array): number {
  let end = buf.length;
  if (end >= 128 && ascii(buf, end - 128, 3) === "TAG") end -= 128;
  if (end >= 32 && ascii(buf, end - 32, 8) === "APETAGEX") {
    const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
    const size = view.getUint32(end - 32 + 12, true);
    const hasHeader = (view.getUint32(end - 32 + 20, true) & 0x80000000) !== 0;
    const total = size + (hasHeader ? 32 : 0);
    if (total <= end) end -= total;
  }
  return end;
}

/** Xing/Info (LAME, ours) sit right after the side information; VBRI (Fraunhofer) at a fixed 32 bytes. */
export function isInfoFrame(buf: Uint8Array, pos: number, h: FrameHeader): boolean {
  if (h.layer !== 3) return false;
  const at = pos + 4 + (h.crc ? 2 : 0) + h.sideInfoSize;
  return isTag(buf, at, "Xing") || isTag(buf, at, "Info") || isTag(buf, pos + 36, "VBRI");
}

// Compared byte by byte: asked for every frame, where a string per frame made up a third of a scan.
function isTag(buf: Uint8Array, pos: number, tag: string): boolean {
  if (pos < 0 || pos + tag.length > buf.length) return false;
  for (let i = 0; i < tag.length; i++) if (buf[pos + i] !== tag.charCodeAt(i)) return false;
  return true;
}

function ascii(buf: Uint8Array, pos: number, n: number): string {
  if (pos < 0 || pos + n > buf.length) return "";
  return String.fromCharCode(...buf.subarray(pos, pos + n));
}

/**
 * Layer III main_data_begin: how many bytes of this frame's audio data live in earlier frames
 * (the bit reservoir). 0 for other layers.
 */
export function mainDataBegin(buf: Uint8Array, frame: Mp3Frame, h: FrameHeader): number {
  if (h.layer !== 3) return 0;
  const at = frame.offset + 4 + (h.crc ? 2 : 0);
  return h.version === 1 ? (buf[at] << 1) | (buf[at + 1] >> 7) : buf[at];
}

/** Bytes a Layer III frame contributes to the reservoir (everything after header, CRC and side info). */
export function mainDataSize(h: FrameHeader): number {
  return h.length - 4 - (h.crc ? 2 : 0) - h.sideInfoSize;
}
