// Packs sentences into chunks small enough for one synthesis request, and plans an article's
// requests: a small opening so the preview can end at a sentence near 30 s, then chunks packed
// up to the provider's limit. A chunk never crosses a paragraph, so the pipeline can put pauses
// between them.
import { createHash } from "node:crypto";
import { splitSentences } from "./sentences.js";

/** A sentence, or the part of an overlong one, that a chunk speaks: what the timed segments are built from. */
export interface ChunkPiece {
  paragraph: number;
  /** Index of its sentence in the paragraph. */
  sentence: number;
  /** Spoken characters (text/index.ts's spoken form): where in the chunk's audio it lies, roughly. */
  chars: number;
  /** The first piece of its sentence. */
  start: boolean;
  /** The last piece of its sentence. */
  end: boolean;
}

/** A paragraph as text (split into sentences here), or already split (text/index.ts prepareSentences). */
export type ParagraphInput = string | readonly string[];

export interface TextChunk {
  text: string;
  /** What it speaks, in order (a chunk of packed paragraphs holds several paragraphs' sentences). */
  pieces: ChunkPiece[];
  /** Index of the paragraph it came from (0 is the title). */
  paragraph: number;
  /** Last chunk of its paragraph: a paragraph pause follows. */
  paragraphEnd: boolean;
  /** False when the chunk stops inside a sentence (an overlong sentence split after a clause); a preview never ends there. */
  sentenceEnd?: boolean;
}

// Where a long sentence may be split without a listener noticing: after a clause mark.
const CLAUSE_END = /[,;:]\s+|\s+[–—]\s+/g;

/** Splits an overlong sentence after clauses where it can, else at word boundaries; a single word longer than maxChars is cut. */
function splitLong(sentence: string, maxChars: number): string[] {
  const clauses: string[] = [];
  let from = 0;
  for (const m of sentence.matchAll(CLAUSE_END)) {
    const end = m.index + m[0].trimEnd().length;
    clauses.push(sentence.slice(from, end).trim());
    from = m.index + m[0].length;
  }
  clauses.push(sentence.slice(from).trim());
  const parts: string[] = [];
  let cur = "";
  for (const clause of clauses.filter(Boolean)) {
    if (cur && cur.length + 1 + clause.length <= maxChars) {
      cur = `${cur} ${clause}`;
      continue;
    }
    if (cur) parts.push(cur);
    cur = "";
    if (clause.length <= maxChars) cur = clause;
    else parts.push(...splitWords(clause, maxChars));
  }
  if (cur) parts.push(cur);
  return parts;
}

function splitWords(text: string, maxChars: number): string[] {
  const parts: string[] = [];
  let cur = "";
  for (const word of text.split(/\s+/).filter(Boolean)) {
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

interface Piece {
  text: string;
  sentenceEnd: boolean;
  at: ChunkPiece;
}

const sentencesOf = (paragraph: ParagraphInput, lang: string): readonly string[] => (typeof paragraph === "string" ? splitSentences(paragraph, lang) : paragraph);
const paragraphText = (paragraph: ParagraphInput): string => (typeof paragraph === "string" ? paragraph : paragraph.join(" "));

/** Sentences of a paragraph; those longer than hardMax split after clauses (only their last piece ends the sentence). */
function pieces(paragraph: ParagraphInput, index: number, lang: string, hardMax: number): Piece[] {
  return sentencesOf(paragraph, lang).flatMap((s, sentence) => {
    if (s.length <= hardMax) return [{ text: s, sentenceEnd: true, at: { paragraph: index, sentence, chars: s.length, start: true, end: true } }];
    const parts = splitLong(s, hardMax);
    return parts.map((text, i) => ({ text, sentenceEnd: i === parts.length - 1, at: { paragraph: index, sentence, chars: text.length, start: i === 0, end: i === parts.length - 1 } }));
  });
}

/** Greedy packing of pieces into chunks of at most maxChars (a single piece may be longer, up to hardMax). */
function packPieces(list: Piece[], paragraph: number, maxChars: number, out: TextChunk[]): void {
  let cur: Piece[] = [];
  let chars = 0;
  for (const piece of list) {
    if (cur.length && chars + 1 + piece.text.length > maxChars) {
      out.push(chunkOf(cur, paragraph));
      cur = [];
    }
    chars = cur.length ? chars + 1 + piece.text.length : piece.text.length;
    cur.push(piece);
  }
  if (cur.length) out.push(chunkOf(cur, paragraph));
}

/** Pieces of one paragraph spoken in one request. */
function chunkOf(list: Piece[], paragraph: number): TextChunk {
  return { text: list.map((p) => p.text).join(" "), pieces: list.map((p) => p.at), paragraph, paragraphEnd: false, sentenceEnd: list[list.length - 1].sentenceEnd };
}

/**
 * Whole sentences packed into chunks of up to maxChars. A sentence longer than that stays whole
 * up to `hardMax` (default maxChars: the request limit), since any cut gives it a sentence-final
 * fall in pitch; beyond it the sentence is split after a clause.
 */
export function packChunks(paragraphs: readonly ParagraphInput[], maxChars: number, lang = "en-US", hardMax = maxChars, first = 0): TextChunk[] {
  if (!Number.isInteger(maxChars) || maxChars < 1) throw new RangeError(`maxChars must be a positive integer (got ${maxChars})`);
  const chunks: TextChunk[] = [];
  paragraphs.forEach((para, paragraph) => {
    const startCount = chunks.length;
    packPieces(pieces(para, first + paragraph, lang, Math.max(hardMax, maxChars)), first + paragraph, maxChars, chunks);
    if (chunks.length > startCount) chunks[chunks.length - 1].paragraphEnd = true;
  });
  return chunks;
}

// Speech runs at about 13-19 characters a second across our voices; the preview aims at 25-40 s.
/** Opening text after which the preview can end (about 28 s of speech). */
export const PREVIEW_FIRST_CUT_CHARS = 420;
/** Opening text that reaches the preview's upper end at any voice's pace (about 40 s). */
export const OPENING_CHARS = 600;

export interface PlanOptions {
  /**
   * Text of each opening chunk for the local engine (title and first sentences): small, so the
   * preview has many sentence ends to choose from. Cloud providers get two opening chunks instead.
   */
  openingChars?: number;
  /**
   * Cloud providers: put several whole paragraphs into one request after the opening (they read
   * a blank line as a paragraph break), and keep the opening to two requests, so that an article
   * costs few requests against the provider's per-minute limits.
   */
  packParagraphs?: boolean;
  /** Longest sentence sent whole (default maxChars). */
  hardMax?: number;
}

/**
 * Chunks for a provider: the title, then the opening (about the preview's length, cut at
 * sentence ends only) in small chunks so the preview can end at a sentence near 30 s, then the
 * rest up to the provider's limit. The opening is counted in characters, not paragraphs, so a
 * long paragraph (a CMS that sends an article as one block) is packed full after its opening.
 */
export function planChunks(paragraphs: readonly ParagraphInput[], lang: string, maxChars: number, opts: PlanOptions | number = {}): TextChunk[] {
  const { openingChars = 300, packParagraphs = false, hardMax = maxChars } = typeof opts === "number" ? { openingChars: opts } : opts;
  if (!Number.isInteger(maxChars) || maxChars < 1) throw new RangeError(`maxChars must be a positive integer (got ${maxChars})`);
  const out: TextChunk[] = [];
  if (paragraphs.length === 0) return out;
  out.push(...packChunks(paragraphs.slice(0, 1), maxChars, lang, hardMax));
  // The cloud opening: a chunk ending after about 28 s and one ending near 40 s.
  const cuts = packParagraphs ? [PREVIEW_FIRST_CUT_CHARS, OPENING_CHARS] : [];
  const small = Math.min(openingChars, maxChars);
  let seen = 0;
  let p = 1;
  for (; p < paragraphs.length && seen < OPENING_CHARS; p++) {
    const list = pieces(paragraphs[p], p, lang, Math.max(hardMax, maxChars));
    let k = 0;
    // Opening chunks of this paragraph.
    while (k < list.length && seen < OPENING_CHARS) {
      const chunk: Piece[] = [];
      let chars = 0;
      const limit = packParagraphs ? maxChars : small;
      while (k < list.length && seen < OPENING_CHARS) {
        const next = list[k];
        if (chunk.length && chars + 1 + next.text.length > limit) break;
        chunk.push(next);
        chars += (chunk.length > 1 ? 1 : 0) + next.text.length;
        seen += next.text.length + 1;
        k++;
        if (packParagraphs && next.sentenceEnd && cuts.some((c) => seen - next.text.length - 1 < c && seen >= c)) break;
      }
      out.push(chunkOf(chunk, p));
    }
    // The rest of the paragraph, packed full.
    packPieces(list.slice(k), p, maxChars, out);
    out[out.length - 1].paragraphEnd = true;
  }
  const rest = packParagraphs ? packWholeParagraphs(paragraphs, p, maxChars, lang, hardMax) : packChunks(paragraphs.slice(p), maxChars, lang, hardMax, p);
  return [...out, ...rest];
}

/** What separates packed paragraphs inside one request. */
export const PARAGRAPH_BREAK = "\n\n";

/**
 * Groups paragraphs from `from` on into requests of at most maxChars. Where a group starts is
 * decided by the content of the paragraph that starts it (its opening words), not by position
 * or running length, so editing a paragraph changes only its own group's text, and inserting or
 * deleting one disturbs only the groups next to it. Groups average about half the limit, which
 * leaves room for paragraphs to grow before the limit forces an extra cut.
 */
function packWholeParagraphs(paragraphs: readonly ParagraphInput[], from: number, maxChars: number, lang: string, hardMax: number): TextChunk[] {
  const body = paragraphs.slice(from).map(paragraphText);
  if (body.length === 0) return [];
  const lengths = body.map((p) => p.length).sort((a, b) => a - b);
  const typical = Math.max(1, lengths[Math.floor(lengths.length / 2)] ?? 1);
  // About one group start per `every` paragraphs; a median barely moves when one paragraph changes.
  const every = Math.max(1, Math.round(maxChars / 2 / (typical + PARAGRAPH_BREAK.length)));
  const out: TextChunk[] = [];
  let group: string[] = [];
  let groupPieces: ChunkPiece[] = [];
  let groupChars = 0;
  const flush = (last: number) => {
    if (group.length) out.push({ text: group.join(PARAGRAPH_BREAK), pieces: groupPieces, paragraph: last, paragraphEnd: true, sentenceEnd: true });
    group = [];
    groupPieces = [];
    groupChars = 0;
  };
  body.forEach((para, k) => {
    const index = from + k;
    if (para.length > maxChars) {
      flush(index - 1);
      out.push(...packChunks([paragraphs[index]], maxChars, lang, hardMax, index));
      return;
    }
    const fits = groupChars + (group.length ? PARAGRAPH_BREAK.length : 0) + para.length <= maxChars;
    if (group.length && (!fits || startsGroup(para, every))) flush(index - 1);
    group.push(para);
    groupPieces.push(...pieces(paragraphs[index], index, lang, Number.MAX_SAFE_INTEGER).map((p) => p.at));
    groupChars += (group.length > 1 ? PARAGRAPH_BREAK.length : 0) + para.length;
  });
  flush(paragraphs.length - 1);
  return out;
}

function startsGroup(paragraph: string, every: number): boolean {
  if (every <= 1) return true;
  const opening = paragraph.slice(0, 40);
  return createHash("sha1").update(opening).digest().readUInt32BE(0) % every === 0;
}
