// Text to Kokoro's input: sentences, their clauses in IPA from eSpeak NG (the native program:
// `espeak-ng -q --ipa`), and the IPA as token ids of the model's vocabulary. The text arrives
// normalised (numbers, abbreviations and symbols already spoken out): Kokoro reads what eSpeak
// transcribes, and a raw "4.2" would be split at its full stop.
import { spawn } from "node:child_process";

/** Longest piece (tokens) per model call, well below the model's 510: quality falls off on longer input. */
export const MAX_TOKENS = 400;

/** The sentences of a chunk of text (whole sentences; a chunk without an end is one sentence). */
export function sentences(text: string): string[] {
  return text
    .split(/(?<=[.!?…]["”’)\]]*)\s+(?=\S)/u)
    .map((s) => s.trim())
    .filter(Boolean);
}

export interface Clause {
  words: string;
  /** The punctuation that ended it ("" when none), which Kokoro reads as phrasing. */
  stop: string;
}

/** A sentence's clauses, split at the punctuation Kokoro has tokens for. */
export function clauses(sentence: string): Clause[] {
  const out: Clause[] = [];
  const re = /([^,;:.!?…—–]+)([,;:.!?…—–]*)/gu;
  for (const m of sentence.matchAll(re)) {
    const words = m[1].trim();
    if (!/[\p{L}\p{N}]/u.test(words)) {
      if (out.length && m[2]) out[out.length - 1].stop ||= stopOf(m[2]);
      continue;
    }
    out.push({ words, stop: stopOf(m[2]) });
  }
  return out;
}

/** One punctuation mark Kokoro knows for a run of them: "?!" asks, "..." trails, dashes pause like a comma. */
function stopOf(marks: string): string {
  if (!marks) return "";
  if (marks.includes("?")) return "?";
  if (marks.includes("!")) return "!";
  if (marks.includes("…") || marks.includes("...")) return "…";
  if (marks.includes(".")) return ".";
  if (/[—–]/u.test(marks)) return ",";
  return marks[0];
}

/** eSpeak's IPA for a clause, on one line (eSpeak breaks lines where it starts a clause of its own). */
export function espeakIpa(espeak: string, voice: string, words: string, signal?: AbortSignal): Promise<string> {
  return new Promise((resolve, reject) => {
    // Detached: out of the terminal's process group, whose Ctrl-C is the service's to handle (host.ts).
    const child = spawn(espeak, ["-q", "--ipa", "-v", voice, "--stdin"], { stdio: ["pipe", "pipe", "pipe"], signal, detached: true });
    const out: Buffer[] = [];
    let err = "";
    child.stdout.on("data", (d: Buffer) => out.push(d));
    child.stderr.on("data", (d: Buffer) => (err = (err + d.toString("utf8")).slice(-300)));
    child.on("error", reject);
    child.stdin.on("error", () => {});
    child.on("close", (code) => {
      if (code !== 0) return reject(new Error(`espeak-ng exited with code ${code}${err ? `: ${err.trim()}` : ""}`));
      resolve(Buffer.concat(out).toString("utf8").replace(/\s+/g, " ").trim());
    });
    // A line break at the end: eSpeak waits for a clause's end before it writes anything.
    child.stdin.end(`${words.replace(/\s+/g, " ")}\n`);
  });
}

/**
 * eSpeak's IPA as Kokoro's symbols: the few eSpeak writes differently (its trill and the odd
 * foreign sound become the nearest English phoneme), the zero-width joiners of its diphthongs go,
 * and what the vocabulary lacks is dropped.
 */
export function toKokoroIpa(ipa: string): string {
  return ipa
    .replace(/\u200d/g, "")
    .replace(/r/g, "ɹ")
    .replace(/x/g, "k")
    .replace(/ʲ/g, "j")
    .replace(/ɬ/g, "l");
}

export type Vocab = ReadonlyMap<string, number>;

/** The model's vocabulary from its config (kokoro-onnx's config.json: { vocab: { symbol: id } }). */
export function vocabOf(config: unknown): Vocab {
  const vocab = (config as { vocab?: Record<string, unknown> } | null)?.vocab;
  if (!vocab || typeof vocab !== "object") throw new Error("Kokoro's config has no vocab");
  const map = new Map<string, number>();
  for (const [symbol, id] of Object.entries(vocab)) if (Number.isInteger(id)) map.set(symbol, id as number);
  if (map.size < 50) throw new Error(`Kokoro's vocab has only ${map.size} symbols`);
  return map;
}

export function tokenize(ipa: string, vocab: Vocab): number[] {
  const ids: number[] = [];
  for (const symbol of ipa) {
    const id = vocab.get(symbol);
    if (id !== undefined) ids.push(id);
  }
  return ids;
}

/**
 * A sentence's clauses (as token ids, each with its stop) packed into pieces of at most `max`
 * tokens: whole clauses where they fit, a clause longer than that cut between words.
 */
export function pack(parts: readonly number[][], space: number, max = MAX_TOKENS): number[][] {
  const pieces: number[][] = [];
  let current: number[] = [];
  const flush = () => {
    while (current.length && current[current.length - 1] === space) current.pop();
    if (current.length) pieces.push(current);
    current = [];
  };
  for (const part of parts) {
    if (current.length && current.length + 1 + part.length > max) flush();
    if (part.length <= max) {
      if (current.length) current.push(space);
      current.push(...part);
      continue;
    }
    // Longer than a piece: cut at the last space before the limit.
    let rest = part;
    while (rest.length > max) {
      let cut = rest.lastIndexOf(space, max);
      if (cut <= 0) cut = max;
      current = rest.slice(0, cut);
      flush();
      rest = rest.slice(rest[cut] === space ? cut + 1 : cut);
    }
    current = [...rest];
  }
  flush();
  return pieces;
}
