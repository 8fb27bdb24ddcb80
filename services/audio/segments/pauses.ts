// Where the speech in a chunk's MP3 pauses, read from the frames' side
// information without decoding: a Layer III granule's global gain is its
// quantizer step (1.5 dB a unit), so a quiet stretch shows as a run of
// granules far below the chunk's speaking level, whatever made the MP3.
import { walkFrames } from "../mp3/frames.js";

export interface Pause {
  /** Seconds from the start of the chunk's audio. */
  start: number;
  end: number;
  /** How quiet, how long: the sum over its granules of their depth below the speaking level. */
  depth: number;
}

export interface Levels {
  /** One value per granule (576 samples): its global gain, 0 for a granule without audio data. */
  gains: Uint8Array;
  /** Seconds per granule. */
  granule: number;
}

// Side information bit offsets of global_gain, per granule and channel, after the header and CRC.
const GAIN_BITS = {
  1: { 1: [39, 98], 2: [41, 100, 159, 218] },
  2: { 1: [30], 2: [31, 94] },
} as const;
// part2_3_length (12 bits) starts 21 bits before each global_gain.
const LENGTH_BEFORE_GAIN = 21;

function bits(buf: Uint8Array, at: number, bit: number, n: number): number {
  let v = 0;
  for (let i = 0; i < n; i++) {
    const b = bit + i;
    v = (v << 1) | ((buf[at + (b >> 3)] >> (7 - (b & 7))) & 1);
  }
  return v;
}

/** The loudest channel's gain of every granule of a Layer III stream; undefined for other layers. */
export function granuleLevels(mp3: Uint8Array): Levels | undefined {
  const gains: number[] = [];
  let granule = 0;
  let layer3 = true;
  walkFrames(mp3, (pos, h) => {
    if (h.layer !== 3) {
      layer3 = false;
      return;
    }
    const offsets = GAIN_BITS[h.version === 1 ? 1 : 2][h.channels];
    const perGranule = h.channels;
    const at = pos + 4 + (h.crc ? 2 : 0);
    granule = 576 / h.sampleRate;
    for (let g = 0; g < offsets.length; g += perGranule) {
      let level = 0;
      for (let c = 0; c < perGranule; c++) {
        const gainAt = offsets[g + c];
        const length = bits(mp3, at, gainAt - LENGTH_BEFORE_GAIN, 12);
        if (length > 0) level = Math.max(level, bits(mp3, at, gainAt, 8));
      }
      gains.push(level);
    }
  });
  if (!layer3 || gains.length === 0) return undefined;
  return { gains: Uint8Array.from(gains), granule };
}

/** Gain units below the speaking level that count as a pause: 30 dB. */
const QUIET_UNITS = 20;
/** A pause is at least this long (shorter gaps are stops inside words). */
const MIN_PAUSE_S = 0.07;

/** The pauses of a chunk, in order; the quiet at its very start and end is not one (it separates nothing). */
export function findPauses(levels: Levels): Pause[] {
  const { gains, granule } = levels;
  const sorted = Array.from(gains).sort((a, b) => a - b);
  const speaking = sorted[Math.floor(sorted.length * 0.9)] ?? 0;
  const quiet = (i: number) => gains[i] <= speaking - QUIET_UNITS;
  const pauses: Pause[] = [];
  let i = 0;
  // Leading quiet is skipped.
  while (i < gains.length && quiet(i)) i++;
  while (i < gains.length) {
    if (!quiet(i)) {
      i++;
      continue;
    }
    const from = i;
    let depth = 0;
    // One louder granule inside a pause (a click, the encoder's noise) does not end it.
    while (i < gains.length && (quiet(i) || (i + 1 < gains.length && quiet(i + 1) && i > from))) {
      depth += Math.max(0, speaking - gains[i]);
      i++;
    }
    if (i >= gains.length) break; // trailing quiet
    if ((i - from) * granule >= MIN_PAUSE_S) pauses.push({ start: from * granule, end: i * granule, depth });
  }
  return pauses;
}
