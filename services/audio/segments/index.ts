// The timed segments of a rendered article (lib/segments.ts): every chunk's
// place in the full audio is exact, from its frames; inside a chunk the
// sentences it speaks are placed at the pauses between them (align.ts,
// pauses.ts). The text is the article's own (text/index.ts keeps it beside
// what the engine read), so normalised readings never show.
import type { TimedSegment, TimedSentence } from "../../../lib/segments.js";
import { timeSlicer } from "../../../lib/slices.js";
import type { TextChunk } from "../text/chunks.js";
import type { PreparedParagraph } from "../text/index.js";
import { alignPieces, type PieceTime } from "./align.js";
import { findPauses, granuleLevels } from "./pauses.js";

export interface ChunkPlacement {
  /** Seconds in the full audio where the chunk's audio starts, and how long it is. */
  start: number;
  duration: number;
}

const ms = (seconds: number) => Math.round(seconds * 1000) / 1000;

/**
 * Where each piece a chunk speaks lies in the chunk's audio (seconds from its start). Needs only
 * that chunk: the provider path does it as each answer arrives, while the others are awaited.
 */
export function alignChunk(chunk: TextChunk, audio: Uint8Array): PieceTime[] {
  const levels = chunk.pieces.length > 1 ? granuleLevels(audio) : undefined;
  const duration = levels ? levels.gains.length * levels.granule : 0;
  return alignPieces(chunk.pieces.map((p) => p.chars), duration, levels ? findPauses(levels) : []);
}

/**
 * Segments of every paragraph spoken; works a chunk at a time between turns of the event loop (a
 * long article has thousands of sentences). `aligned[i]`: chunk i's alignChunk, when done already.
 */
export async function timedSegments(
  paragraphs: readonly PreparedParagraph[],
  chunks: readonly TextChunk[],
  audio: readonly Uint8Array[],
  placed: readonly ChunkPlacement[],
  aligned: readonly (PieceTime[] | undefined)[] = [],
): Promise<TimedSegment[]> {
  const times = paragraphs.map((p) => p.shown.map(() => ({ start: NaN, end: NaN })));
  const turn = timeSlicer();
  for (let i = 0; i < chunks.length; i++) {
    await turn();
    const { pieces } = chunks[i];
    const { start, duration } = placed[i];
    // A single piece spans its chunk, whose duration the timeline knows from the frames.
    const within = pieces.length === 1 ? [{ start: 0, end: duration }] : (aligned[i] ?? alignChunk(chunks[i], audio[i]));
    pieces.forEach((piece, j) => {
      const t = times[piece.paragraph]?.[piece.sentence];
      if (!t) return;
      if (piece.start) t.start = start + within[j].start;
      if (piece.end) t.end = start + within[j].end;
    });
  }
  const segments: TimedSegment[] = [];
  paragraphs.forEach((p, index) => {
    const sentences: TimedSentence[] = [];
    p.shown.forEach((text, s) => {
      const { start, end } = times[index][s];
      if (Number.isFinite(start) && Number.isFinite(end)) sentences.push({ text, start: ms(start), end: ms(Math.max(start, end)) });
    });
    if (sentences.length === 0) return;
    const segment: TimedSegment = {
      kind: p.title ? "title" : p.heading ? "heading" : "paragraph",
      text: sentences.map((s) => s.text).join(" "),
      start: sentences[0].start,
      end: sentences[sentences.length - 1].end,
      sentences,
    };
    if (p.heading) segment.heading = p.heading;
    segments.push(segment);
  });
  return segments;
}
