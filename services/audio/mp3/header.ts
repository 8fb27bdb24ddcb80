// MPEG audio frame header decoding (ISO 11172-3 / 13818-3, plus the unofficial MPEG 2.5).

export type MpegVersion = 1 | 2 | 25; // 25 = MPEG 2.5
export type MpegLayer = 1 | 2 | 3;

export interface FrameHeader {
  version: MpegVersion;
  layer: MpegLayer;
  bitrate: number; // kbps
  bitrateIndex: number;
  sampleRate: number;
  samples: number; // PCM samples per channel in this frame
  length: number; // bytes, header included
  channels: 1 | 2;
  crc: boolean;
  /** Layer III side information size in bytes (0 for layers I/II). */
  sideInfoSize: number;
}

// [MPEG-1, MPEG-2/2.5][layer - 1]: an array lookup, as this runs for every frame of a file.
const BITRATES: readonly (readonly number[])[][] = [
  [
    [0, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448],
    [0, 32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384],
    [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320],
  ],
  [
    [0, 32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256],
    [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],
    [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],
  ],
];

const SAMPLE_RATES: Record<MpegVersion, readonly number[]> = {
  1: [44100, 48000, 32000],
  2: [22050, 24000, 16000],
  25: [11025, 12000, 8000],
};

function bitrateTable(version: MpegVersion, layer: MpegLayer): readonly number[] {
  return BITRATES[version === 1 ? 0 : 1][layer - 1];
}

export function samplesPerFrame(version: MpegVersion, layer: MpegLayer): number {
  if (layer === 1) return 384;
  if (layer === 2) return 1152;
  return version === 1 ? 1152 : 576;
}

export function sideInfoSize(version: MpegVersion, layer: MpegLayer, channels: 1 | 2): number {
  if (layer !== 3) return 0;
  if (version === 1) return channels === 1 ? 17 : 32;
  return channels === 1 ? 9 : 17;
}

export function frameLength(version: MpegVersion, layer: MpegLayer, bitrate: number, sampleRate: number, padding: number): number {
  if (layer === 1) return (Math.floor((12 * bitrate * 1000) / sampleRate) + padding) * 4;
  const coefficient = layer === 3 && version !== 1 ? 72 : 144;
  return Math.floor((coefficient * bitrate * 1000) / sampleRate) + padding;
}

/** The header at `offset`, or null when those four bytes are not a usable frame header. */
export function readHeader(buf: Uint8Array, offset: number): FrameHeader | null {
  if (offset < 0 || offset + 4 > buf.length) return null;
  const b1 = buf[offset + 1];
  const b2 = buf[offset + 2];
  const b3 = buf[offset + 3];
  if (buf[offset] !== 0xff || (b1 & 0xe0) !== 0xe0) return null;
  const versionBits = (b1 >> 3) & 3;
  const layerBits = (b1 >> 1) & 3;
  if (versionBits === 1 || layerBits === 0) return null;
  const version: MpegVersion = versionBits === 3 ? 1 : versionBits === 2 ? 2 : 25;
  const layer = (4 - layerBits) as MpegLayer;
  const bitrateIndex = b2 >> 4;
  const rateIndex = (b2 >> 2) & 3;
  // Free-format (0) has no computable length and 15 is forbidden; emphasis 2 is reserved.
  // Rejecting them also cuts down false syncs inside garbage.
  if (bitrateIndex === 0 || bitrateIndex === 15 || rateIndex === 3 || (b3 & 3) === 2) return null;
  const bitrate = bitrateTable(version, layer)[bitrateIndex];
  const sampleRate = SAMPLE_RATES[version][rateIndex];
  const channels: 1 | 2 = b3 >> 6 === 3 ? 1 : 2;
  return {
    version,
    layer,
    bitrate,
    bitrateIndex,
    sampleRate,
    samples: samplesPerFrame(version, layer),
    length: frameLength(version, layer, bitrate, sampleRate, (b2 >> 1) & 1),
    channels,
    crc: (b1 & 1) === 0,
    sideInfoSize: sideInfoSize(version, layer, channels),
  };
}

export function sameStream(a: FrameHeader, b: FrameHeader): boolean {
  return a.version === b.version && a.layer === b.layer && a.sampleRate === b.sampleRate && a.channels === b.channels;
}

export function describe(h: Pick<FrameHeader, "version" | "layer" | "sampleRate" | "channels">): string {
  const v = h.version === 25 ? "2.5" : String(h.version);
  return `MPEG-${v} layer ${h.layer}, ${h.sampleRate} Hz, ${h.channels === 1 ? "mono" : "stereo"}`;
}

/**
 * Four header bytes for a Layer III frame in the given format, no CRC, no padding.
 * Throws when the combination is not expressible in MPEG audio.
 */
export function encodeHeader(sampleRate: number, channels: 1 | 2, bitrate: number, modeByte?: number): Buffer {
  const version = versionForRate(sampleRate);
  if (!version) throw new RangeError(`No MPEG audio sample rate ${sampleRate} Hz`);
  const bitrateIndex = bitrateTable(version, 3).indexOf(bitrate);
  if (bitrateIndex <= 0) throw new RangeError(`No layer III bitrate ${bitrate} kbps at ${sampleRate} Hz`);
  const versionBits = version === 1 ? 3 : version === 2 ? 2 : 0;
  const b1 = 0xe0 | (versionBits << 3) | (1 << 1) | 1;
  const b2 = (bitrateIndex << 4) | (SAMPLE_RATES[version].indexOf(sampleRate) << 2);
  const b3 = modeByte ?? (channels === 1 ? 0xc0 : 0x00);
  return Buffer.from([0xff, b1, b2, b3]);
}

/** Layer III bitrates (kbps) available at a sample rate, ascending. */
export function layer3Bitrates(sampleRate: number): number[] {
  const version = versionForRate(sampleRate);
  return version ? bitrateTable(version, 3).slice(1) : [];
}

function versionForRate(sampleRate: number): MpegVersion | undefined {
  return ([1, 2, 25] as MpegVersion[]).find((v) => SAMPLE_RATES[v].includes(sampleRate));
}
