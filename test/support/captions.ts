// Strict readers of the caption files we publish. Browsers' WebVTT parsers
// skip what they cannot read without a word (a cue with a bad timestamp just
// vanishes), so a test that only loads the file in a <track> proves little.
// These follow the W3C WebVTT parsing rules (file signature, blocks, the
// timestamp and timings grammar, cue text escapes) and the file's validity
// rules (cue starts never go back, ends after starts), and throw on the first
// deviation; SRT gets the same treatment after its de-facto grammar.

export interface ParsedCue {
  id?: string;
  /** Seconds. */
  start: number;
  end: number;
  /** Cue text with character references decoded. */
  text: string;
}

// [hours ":"] minutes ":" seconds "." milliseconds; hours have two or more digits when given.
const VTT_TIMESTAMP = /^(?:(\d{2,}):)?([0-5]\d):([0-5]\d)\.(\d{3})$/;
const SRT_TIMESTAMP = /^(\d{2,}):([0-5]\d):([0-5]\d),(\d{3})$/;
// The character references WebVTT names, plus numeric ones; anything else after "&" is not valid cue text.
const REFERENCES: Record<string, string> = { amp: "&", lt: "<", gt: ">", lrm: "\u200e", rlm: "\u200f", nbsp: "\u00a0" };

function seconds(m: RegExpExecArray): number {
  return Number(m[1] ?? 0) * 3600 + Number(m[2]) * 60 + Number(m[3]) + Number(m[4]) / 1000;
}

function vttTimestamp(s: string, where: string): number {
  const m = VTT_TIMESTAMP.exec(s);
  if (!m) throw new Error(`${where}: "${s}" is not a WebVTT timestamp`);
  return seconds(m);
}

/** Cue text: no line may be empty or hold "-->"; "&" only as a character reference; no markup (we never write tags). */
function vttCueText(lines: string[], where: string): string {
  if (lines.length === 0) throw new Error(`${where}: cue without text`);
  return lines
    .map((line, i) => {
      if (line.includes("-->")) throw new Error(`${where}: cue text line ${i + 1} holds "-->"`);
      if (line.includes("<")) throw new Error(`${where}: cue text line ${i + 1} holds markup or an unescaped "<"`);
      return line.replace(/&([^;\s&<]*);?/g, (whole, name: string) => {
        const numeric = /^#(?:x([0-9a-fA-F]+)|(\d+))$/.exec(name);
        if (whole.endsWith(";") && numeric) return String.fromCodePoint(numeric[1] ? parseInt(numeric[1], 16) : Number(numeric[2]));
        if (whole.endsWith(";") && name in REFERENCES) return REFERENCES[name];
        throw new Error(`${where}: "${whole}" is an unescaped "&" (cue text line ${i + 1})`);
      });
    })
    .join("\n");
}

const linesOf = (text: string) => text.replace(/\r\n?/g, "\n").split("\n");

/** Blocks of non-empty lines, however many blank lines part them. */
function blocksOf(lines: string[]): string[][] {
  const blocks: string[][] = [];
  let cur: string[] = [];
  for (const line of lines) {
    if (line === "") {
      if (cur.length) blocks.push(cur);
      cur = [];
    } else cur.push(line);
  }
  if (cur.length) blocks.push(cur);
  return blocks;
}

export function parseWebVttStrict(text: string): ParsedCue[] {
  if (text.includes("\u0000")) throw new Error("the file holds NUL");
  const body = text.startsWith("\ufeff") ? text.slice(1) : text;
  if (!/^WEBVTT(?:[ \t\n\r]|$)/.test(body)) throw new Error('the file does not start with "WEBVTT"');
  const [header, ...blocks] = blocksOf(linesOf(body));
  if (header.some((l) => l.includes("-->"))) throw new Error("the header runs into a cue: a blank line is missing after WEBVTT");
  const cues: ParsedCue[] = [];
  for (const [b, block] of blocks.entries()) {
    const where = `block ${b + 1}`;
    let i = 0;
    let id: string | undefined;
    if (!block[0].includes("-->")) {
      // Region and style blocks come before the first cue; we never write them, so anything else is wrong.
      id = block[0];
      i = 1;
    }
    const timings = block[i];
    if (timings === undefined || !timings.includes("-->")) throw new Error(`${where}: no cue timings line`);
    const m = /^(\S+)[ \t]+-->[ \t]+(\S+)(?:[ \t]+(.*))?$/.exec(timings);
    if (!m) throw new Error(`${where}: "${timings}" is not a cue timings line`);
    const start = vttTimestamp(m[1], where);
    const end = vttTimestamp(m[2], where);
    if (m[3] !== undefined && m[3].trim() !== "" && !/^(?:\S+:\S+[ \t]*)+$/.test(m[3])) throw new Error(`${where}: bad cue settings "${m[3]}"`);
    if (!(end > start)) throw new Error(`${where}: end ${m[2]} is not after start ${m[1]}`);
    const prev = cues.at(-1);
    if (prev && start < prev.start) throw new Error(`${where}: starts at ${m[1]}, before the cue before it`);
    cues.push({ ...(id === undefined ? {} : { id }), start, end, text: vttCueText(block.slice(i + 1), where) });
  }
  return cues;
}

/**
 * SRT has no escapes, so a cue line is safe only if no player can read anything but text in it:
 * no arrow (a reader resyncing on "-->" starts a cue there), no tag, no ASS override, no
 * character reference (some players decode them).
 */
function srtPlainLine(line: string, where: string): void {
  if (line.includes("-->")) throw new Error(`${where}: holds "-->"`);
  if (/[<>]/.test(line)) throw new Error(`${where}: holds "<" or ">" (markup to SRT players)`);
  if (/[{}]/.test(line)) throw new Error(`${where}: holds a brace (an ASS override to SRT players)`);
  if (/&#?[0-9A-Za-z]+;/.test(line)) throw new Error(`${where}: holds a character reference`);
}

export function parseSrtStrict(text: string): ParsedCue[] {
  const lines = linesOf(text);
  // Blocks are parted by exactly one blank line, and the file ends with the last cue's line break.
  if (lines.at(-1) !== "") throw new Error("the file does not end with a line break");
  const cues: ParsedCue[] = [];
  let i = 0;
  while (i < lines.length - 1) {
    const where = `cue ${cues.length + 1}`;
    if (lines[i] !== String(cues.length + 1)) throw new Error(`${where}: expected the number ${cues.length + 1}, found "${lines[i]}"`);
    const m = /^(\S+) --> (\S+)$/.exec(lines[i + 1] ?? "");
    if (!m) throw new Error(`${where}: "${lines[i + 1]}" is not an SRT timings line`);
    const [s, e] = [SRT_TIMESTAMP.exec(m[1]), SRT_TIMESTAMP.exec(m[2])];
    if (!s || !e) throw new Error(`${where}: "${lines[i + 1]}" has a timestamp that is not hh:mm:ss,ttt`);
    const [start, end] = [seconds(s), seconds(e)];
    if (!(end > start)) throw new Error(`${where}: end is not after start`);
    const prev = cues.at(-1);
    if (prev && start < prev.start) throw new Error(`${where}: starts before the cue before it`);
    i += 2;
    const textLines: string[] = [];
    while (i < lines.length && lines[i] !== "") textLines.push(lines[i++]);
    if (textLines.length === 0) throw new Error(`${where}: no text`);
    textLines.forEach((line, n) => srtPlainLine(line, `${where}, text line ${n + 1}`));
    cues.push({ start, end, text: textLines.join("\n") });
    // The blank line after the cue (the file's last line break leaves one "" at the end).
    i++;
    if (i < lines.length - 1 && lines[i] === "") throw new Error(`${where}: more than one blank line after it`);
  }
  if (cues.length === 0 && text !== "") throw new Error("no cues");
  return cues;
}
