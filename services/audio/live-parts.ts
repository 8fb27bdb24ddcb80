// The full file's audio while it is made, for a listener who pressed play on audio made on
// demand: as each chunk of a local engine arrives, the frames the finished file will hold up to
// it (the lead-in or the pause before it, the chunk, and the tail after the last) are handed on
// in playing order. A stream of the parts is the finished file's audio, frame for frame, without
// its ID3 tag and Info header (services/audio/worker.ts stores them; the gateway streams them).
// Cloud audio is normalised after its last chunk, which changes its frames: it is not streamed.
import { joinMp3, silenceFrames } from "./mp3/index.js";
import { scanFrames } from "./mp3/frames.js";
import { sameStreamFormat, streamFormat } from "./providers/reformat.js";
import type { TextChunk } from "./text/chunks.js";
import type { Mp3Format } from "./engine/types.js";

export interface LivePart {
  /** 0, 1, …: the part of chunk `index`. */
  index: number;
  mp3: Buffer;
  /** The article's last part (it ends with the tail). */
  last: boolean;
}

export interface LivePauses {
  leadInMs: number;
  titleMs: number;
  paragraphMs: number;
  tailMs: number;
}

/** The MPEG frames of the parts joined as the finished file joins them, without its Info header. */
export function liveFrames(parts: Buffer[]): Buffer {
  const joined = joinMp3(parts);
  const first = scanFrames(joined).frames[0];
  return first ? joined.subarray(first.offset) : Buffer.alloc(0);
}

export class LiveParts {
  private next = 0;
  private stopped = false;
  /** The plan (provider and voice) being streamed: a fallback's audio would be another stream. */
  private owner: string | undefined;
  private format: Mp3Format | undefined;

  constructor(
    private readonly pauses: LivePauses,
    private readonly emit: (part: LivePart) => void,
  ) {}

  /** After a chunk of plan `id` arrived: hands on every part now complete from the start. */
  offer(id: string, local: boolean, chunks: readonly TextChunk[], audio: readonly (Buffer | undefined)[]): void {
    if (this.stopped) return;
    this.owner ??= id;
    if (this.owner !== id || !local) return this.stop();
    while (this.next < chunks.length && audio[this.next]) {
      const i = this.next;
      const mp3 = audio[i]!;
      const format = streamFormat(mp3);
      this.format ??= format;
      // A chunk in another stream is re-encoded at the end: what was streamed would differ from the file.
      if (!format || !this.format || !sameStreamFormat(format, this.format)) return this.stop();
      const prev = chunks[i - 1];
      const beforeMs = i === 0 ? this.pauses.leadInMs : prev.paragraphEnd ? (prev.paragraph === 0 ? this.pauses.titleMs : this.pauses.paragraphMs) : 0;
      const last = i === chunks.length - 1;
      const parts = [...(beforeMs > 0 || i === 0 ? [silenceFrames(this.format, beforeMs)] : []), mp3, ...(last ? [silenceFrames(this.format, this.pauses.tailMs)] : [])];
      let frames: Buffer;
      try {
        frames = liveFrames(parts);
      } catch {
        return this.stop();
      }
      this.next++;
      this.emit({ index: i, mp3: frames, last });
    }
  }

  private stop(): void {
    this.stopped = true;
  }
}
