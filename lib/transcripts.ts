// Timed segments → the files published beside a revision's MP3s: WebVTT and
// SRT captions (one cue per sentence) and, for articles with headings,
// Podcasting 2.0 JSON chapters. Pure functions: the audio worker writes their
// output once per revision and nobody parses it back.
import { publicSegments, type TimedSegment } from "./segments.js";

interface Cue {
  startMs: number;
  endMs: number;
  text: string;
}

// Controls other than TAB, LF and CR, which no caption format can show (and NUL, which WebVTT turns into U+FFFD).
const CONTROLS = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/g;

/**
 * One line: a line break inside a cue would end it (SRT) or be shown as one (WebVTT), and a blank
 * line always ends it. NEL (U+0085), which some readers break lines at, goes with the whitespace
 * (`\s` holds U+2028 and U+2029 already).
 */
const oneLine = (s: string) => s.replace(CONTROLS, "").replace(/[\s\u0085]+/g, " ").trim();

const ms = (seconds: number) => Math.round(seconds * 1000);

/**
 * Every sentence of every segment (the title's too) in time order. Players and the
 * WebVTT rules want cue starts that never go back and ends after starts: a sentence the
 * recorder gave no time (rounding, a zero-length word) still gets one millisecond rather
 * than being dropped, since its words belong to the transcript.
 */
function cuesOf(segments: readonly TimedSegment[]): Cue[] {
  const cues: Cue[] = [];
  for (const seg of segments) {
    for (const s of seg.sentences) {
      const text = oneLine(s.text);
      if (!text || !Number.isFinite(s.start) || !Number.isFinite(s.end)) continue;
      const startMs = Math.max(0, ms(s.start));
      cues.push({ startMs, endMs: Math.max(startMs + 1, ms(s.end)), text });
    }
  }
  // Stable: sentences that start together keep their reading order.
  return cues.sort((a, b) => a.startMs - b.startMs);
}

/** hh:mm:ss + separator + ttt; hours grow past two digits for (improbably) long audio, as both formats allow. */
function timestamp(totalMs: number, separator: "." | ","): string {
  const h = Math.floor(totalMs / 3_600_000);
  const m = Math.floor((totalMs % 3_600_000) / 60_000);
  const s = Math.floor((totalMs % 60_000) / 1000);
  const t = totalMs % 1000;
  const pad = (n: number, w = 2) => String(n).padStart(w, "0");
  return `${pad(h)}:${pad(m)}:${pad(s)}${separator}${pad(t, 3)}`;
}

const VTT_ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;" };

/**
 * Players built on ffmpeg or libass (mpv, VLC) read `{\…}` as a style override in either format, and
 * neither format can escape a brace: the article's braces are written as their fullwidth forms.
 */
const BRACES: Record<string, string> = { "{": "\uFF5B", "}": "\uFF5D" };
const plainBraces = (s: string) => s.replace(/[{}]/g, (c) => BRACES[c]);

/** WebVTT cue text: `&`, `<` and `>` start entities and tags, so the article's own are escaped (this also defuses a "-->" in the text). */
const vttText = (s: string) => plainBraces(s).replace(/[&<>]/g, (c) => VTT_ESCAPES[c]);

/**
 * SRT cue text. SRT has no escapes, and players read `<b>`, `<font …>` and `{\an8}` as markup and
 * some decode `&amp;`; a reader that finds a line shaped like a timing line starts a cue there. So
 * the characters that make markup, entities or an arrow are written as look-alikes that no player
 * reads as anything but text: `<` `>` `{` `}` as their fullwidth forms, and `&` as a fullwidth
 * ampersand only where it would start a character reference (`AT&T` stays as it is). With no `>`
 * left, no cue line can be a timing line (`-->`), whatever digits it holds.
 */
const SRT_LOOKALIKES: Record<string, string> = { "<": "\uFF1C", ">": "\uFF1E" };
const srtText = (s: string) =>
  plainBraces(s)
    .replace(/[<>]/g, (c) => SRT_LOOKALIKES[c])
    .replace(/&(?=#?[0-9A-Za-z]+;)/g, "\uFF06");

/** WebVTT (W3C), one cue per sentence, without cue identifiers. */
export function toWebVtt(segments: readonly TimedSegment[]): string {
  const blocks = cuesOf(segments).map((c) => `${timestamp(c.startMs, ".")} --> ${timestamp(c.endMs, ".")}\n${vttText(c.text)}`);
  return ["WEBVTT", ...blocks].join("\n\n") + "\n";
}

/** SubRip: the same cues, numbered from 1, each text on one line with look-alikes for markup (srtText). */
export function toSrt(segments: readonly TimedSegment[]): string {
  return cuesOf(segments)
    .map((c, i) => `${i + 1}\n${timestamp(c.startMs, ",")} --> ${timestamp(c.endMs, ",")}\n${srtText(c.text)}\n`)
    .join("\n");
}

export interface JsonChapters {
  version: "1.2.0";
  chapters: Array<{ startTime: number; title: string }>;
}

/**
 * Podcasting 2.0 JSON chapters: the article's title at 0, then one chapter per heading at the
 * start of its paragraph. Undefined when the article has no headings: one chapter is no chapters.
 */
export function toChapters(segments: readonly TimedSegment[]): JsonChapters | undefined {
  const headings = segments.filter((s) => s.heading !== undefined && oneLine(s.text) && Number.isFinite(s.start));
  if (headings.length === 0) return undefined;
  const title = oneLine(segments.find((s) => s.kind === "title")?.text ?? "");
  const chapters: JsonChapters["chapters"] = [{ startTime: 0, title }];
  for (const h of headings) {
    const startTime = Math.max(0, ms(h.start)) / 1000;
    // Apps order chapters by start and show one per start: a heading heard at once shares nothing with the title chapter.
    if (startTime <= chapters[chapters.length - 1].startTime) continue;
    chapters.push({ startTime, title: oneLine(h.text) });
  }
  return { version: "1.2.0", chapters };
}

/** Every file's text for one revision: the segments as served, the captions and the chapters (undefined without headings). */
export interface TranscriptTexts {
  segments: string;
  vtt: string;
  srt: string;
  chapters?: string;
}

export function transcriptTexts(segments: readonly TimedSegment[]): TranscriptTexts {
  const chapters = toChapters(segments);
  const texts: TranscriptTexts = { segments: JSON.stringify(publicSegments(segments)), vtt: toWebVtt(segments), srt: toSrt(segments) };
  if (chapters) texts.chapters = JSON.stringify(chapters);
  return texts;
}
