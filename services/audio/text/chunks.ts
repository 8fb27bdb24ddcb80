// Packs sentences into chunks small enough for one synthesis request. A
// chunk never crosses a paragraph, so the pipeline can put pauses between them.
import { splitSentences } from "./sentences.js";

export interface TextChunk {
  text: string;
  /** Index of the paragraph it came from (0 is the title). */
  paragraph: number;
  /** Last chunk of its paragraph: a paragraph pause follows. */
  paragraphEnd: boolean;
}

/** Splits at word boundaries; a single word longer than maxChars is cut. */
function splitLong(sentence: string, maxChars: number): string[] {
  const parts: string[] = [];
  let cur = "";
  for (const word of sentence.split(/\s+/).filter(Boolean)) {
    for (let w = word; w.length > 0; ) {
      const room = cur ? maxChars - cur.length - 1 : maxChars;
      if (w.length <= room) {
        cur = cur ? `${cur} ${w}` : w;
        w = "";
      } else if (cur) {
        parts.push(cur);
        cur = "";
      } else {
        parts.push(w.slice(0, maxChars));
        w = w.slice(maxChars);
      }
    }
  }
  if (cur) parts.push(cur);
  return parts;
}

export function packChunks(paragraphs: string[], maxChars: number, lang = "en-US"): TextChunk[] {
  if (!Number.isInteger(maxChars) || maxChars < 1) throw new RangeError(`maxChars must be a positive integer (got ${maxChars})`);
  const chunks: TextChunk[] = [];
  paragraphs.forEach((para, paragraph) => {
    const pieces = splitSentences(para, lang).flatMap((s) => (s.length > maxChars ? splitLong(s, maxChars) : [s]));
    let cur = "";
    const startCount = chunks.length;
    for (const piece of pieces) {
      if (cur && cur.length + 1 + piece.length > maxChars) {
        chunks.push({ text: cur, paragraph, paragraphEnd: false });
        cur = "";
      }
      cur = cur ? `${cur} ${piece}` : piece;
    }
    if (cur) chunks.push({ text: cur, paragraph, paragraphEnd: false });
    if (chunks.length > startCount) chunks[chunks.length - 1].paragraphEnd = true;
  });
  return chunks;
}
