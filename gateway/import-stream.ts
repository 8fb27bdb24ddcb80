// Bulk import (docs/import.md): NDJSON in, one result line per article line
// out, in input order, while the input is still arriving. Shared by the REST
// route (routes/import.ts) and the operator CLI (services/articles/import-cli.ts).
//
// Flow control runs end to end: result lines are written only as fast as the
// reader takes them, batches stay outstanding until their results are
// written, and no more input is read while `maxOutstanding` batches are, so a
// client that stops reading also stops its upload (TCP backpressure), and
// memory stays at a few batches whatever the size of the input.
import type { Client } from "@connectrpc/connect";
import { AudioTiming, type ArticlesService, type CreateArticleRequest } from "../gen/articles/v1/articles_pb.js";
import { REQUEST_ID_HEADER } from "../lib/rpc/request-id.js";
import { jsonDepthExceeds, MAX_JSON_DEPTH } from "./body.js";
import { errorOf } from "./create-batch.js";
import { HttpError, mapError } from "./errors.js";
import { validate, type CreateBody } from "./schemas.js";

/** The articles service takes at most this many creates per CreateArticles call. */
export const IMPORT_BATCH = 64;
/** Batches sent and not yet answered and written; enough to keep the service busy while one is written. */
export const DEFAULT_OUTSTANDING = 4;
/** A batch also closes at this many lines, so a run of bad lines does not pile up behind no create. */
const MAX_BATCH_LINES = 1024;
/**
 * The line loop runs at most this long before it lets the event loop serve
 * everyone else (other requests, probes, timers), whatever the lines are: a
 * megabyte of `x` lines is cheap per line but not in one go.
 */
export const IMPORT_SLICE_MS = 4;
/** Lines handled between two looks at the clock. */
const CLOCK_EVERY = 32;
const UTF8_BOM = [0xef, 0xbb, 0xbf] as const;
/** Lines up to this long are compared with the last failed line, whose answer they then share. */
const REPEAT_CHECK_BYTES = 256;

export type ImportArticle = Omit<CreateArticleRequest, "$typeName">;

/** What became of one create: its id, or why not (and who holds a taken externalId). */
export type CreateOutcome = { id: string; warning?: string } | { status: number; message: string; existingId?: string };

export interface ImportSink {
  /** Writes result text; false: wait for drain() before writing more. */
  write(text: string): boolean;
  drain(): Promise<void>;
}

export interface ImportOptions {
  input: AsyncIterable<Buffer | string>;
  out: ImportSink;
  /** One CreateArticles call; resolves to one outcome per item in order, rejects when the call as a whole failed. */
  send(items: ImportArticle[], lines: number[]): Promise<CreateOutcome[]>;
  /** Status and message for a call that failed as a whole. */
  failureOf(err: unknown): { status: number; message: string };
  /**
   * Waits until the project's import bucket allows this many more lines. Every
   * line counts, blank and invalid ones too: a flood of bad lines is held to the
   * same pace as good ones.
   */
  pace?(count: number): Promise<void>;
  /** Runs one CreateArticles call when the import's fair turn comes (import-lanes.ts); default: at once. */
  schedule?<T>(call: () => Promise<T>): Promise<T>;
  /** The gateway's body limit, per line. */
  maxLineBytes: number;
  audio?: AudioTiming;
  /** Stop reading and sending (the client went away). */
  signal?: AbortSignal;
  /** True when the input ended before the upload did (too slow): an unfinished last line is then dropped, not answered. */
  cutShort?(): boolean;
  maxOutstanding?: number;
  /** Creates per CreateArticles call; default IMPORT_BATCH. */
  batch?: number;
  /** After each batch is written: lines seen so far, imported, failed (progress for the CLI). */
  onProgress?(s: ImportSummary & { lines: number }): void;
}

export interface ImportSummary {
  imported: number;
  failed: number;
  /** Set when the import ended before the end of the upload, saying why. */
  stopped?: string;
}

/** The create request of a validated ArticleCreateRequest, as POST /api/articles sends it. */
export function createRequestOf(b: CreateBody, audio: AudioTiming = AudioTiming.UNSPECIFIED): ImportArticle {
  return {
    title: b.title ?? "",
    text: b.text ?? "",
    url: b.url,
    externalId: b.externalId,
    voice: b.voice,
    lang: b.lang,
    parse: b.parse ?? false,
    isRaw: b.isRaw ?? false,
    prompt: b.prompt,
    labels: b.labels ?? [],
    audio,
    fetch: b.fetch ?? false,
    published: b.published,
  };
}

const MAX_REQUEST_ID = 128;

/**
 * CreateArticles for the lines of one import. `authorization` is the
 * publisher's header, or the internal token's with `projectId` (operator
 * imports). Each create carries the import's request id and its line.
 */
export function articlesSender(client: Client<typeof ArticlesService>, call: { authorization: string; requestId: string; projectId?: string }): Pick<ImportOptions, "send" | "failureOf"> {
  const headers = { authorization: call.authorization, [REQUEST_ID_HEADER]: call.requestId };
  return {
    async send(items, lines) {
      const res = await client.createArticles(
        {
          projectId: call.projectId ?? "",
          items: items.map((article, i) => {
            const perLine = `${call.requestId}:${lines[i]}`;
            return { article, requestId: perLine.length <= MAX_REQUEST_ID ? perLine : call.requestId };
          }),
        },
        { headers },
      );
      return res.results.map((r): CreateOutcome => {
        if (r.outcome.case === "id") return r.warning ? { id: r.outcome.value, warning: r.warning } : { id: r.outcome.value };
        if (r.outcome.case !== "error") return { status: 500, message: `the articles service answered a create without an outcome (request id ${call.requestId})` };
        const { status, message } = mapError(errorOf(r.outcome.value), call.requestId);
        return { status, message, existingId: r.outcome.value.existingId || undefined };
      });
    },
    failureOf: (err) => mapError(err, call.requestId),
  };
}

const AUDIO_PARAM: Record<string, AudioTiming> = { immediate: AudioTiming.IMMEDIATE, onDemand: AudioTiming.ON_DEMAND };

/** `?audio=`: absent = the project's setting; 400 naming the parameter otherwise. */
export function audioTimingOf(value: unknown): AudioTiming {
  if (value === undefined) return AudioTiming.UNSPECIFIED;
  if (Array.isArray(value)) throw new HttpError(400, "audio: must be given once");
  validate.importAudio(value);
  return AUDIO_PARAM[value as string];
}

// ignoreBOM: a BOM is taken only at the very start of the body (runImport strips it there); on any other line it is an error.
const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

const failLine = (line: number, status: number, message: string, existingId?: string) =>
  `{"line":${line},"result":"fail","status":${status},"message":${JSON.stringify(message)}${existingId ? `,"id":${JSON.stringify(existingId)}` : ""}}\n`;
const okLine = (line: number, id: string, warning?: string) => `{"line":${line},"result":"ok","id":${JSON.stringify(id)}${warning ? `,"warning":${JSON.stringify(warning)}` : ""}}\n`;

/** A line with a url and no text (`{"url": …}`) asks for the article on that page: fetch is implied (docs/import.md). */
function fromUrlLine(body: unknown): void {
  if (body === null || typeof body !== "object" || Array.isArray(body)) return;
  const b = body as Record<string, unknown>;
  if (b.fetch === undefined && (b.text === undefined || b.text === null) && typeof b.url === "string") b.fetch = true;
}

/** One line as the article it asks for, or an HttpError saying why not. */
function articleOf(raw: Buffer, audio: AudioTiming): ImportArticle {
  let text: string;
  try {
    text = utf8.decode(raw);
  } catch {
    throw new HttpError(400, "line is not valid UTF-8");
  }
  if (text.charCodeAt(0) === 0xfeff) throw new HttpError(400, "line starts with a byte order mark (U+FEFF): only the start of the body may have one");
  if (jsonDepthExceeds(raw, MAX_JSON_DEPTH)) throw new HttpError(400, `line is nested more than ${MAX_JSON_DEPTH} levels deep`);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new HttpError(400, "line is not valid JSON");
  }
  fromUrlLine(body);
  validate.createBody(body);
  return createRequestOf(body as CreateBody, audio);
}

/** Spaces, tabs and a CR only: a blank line, skipped without a result (it still counts in the numbering). */
function isBlank(b: Buffer): boolean {
  for (let i = 0; i < b.length; i++) {
    const c = b[i];
    if (c !== 0x20 && c !== 0x09 && c !== 0x0d) return false;
  }
  return true;
}

/**
 * A batch of consecutive lines: the creates it sends and, in line order, what
 * to write for each line (a create's index, or a finished fail line).
 */
interface Batch {
  items: ImportArticle[];
  lines: number[];
  /** number: index into items; string: a result line decided without the service. */
  order: (number | string)[];
  results?: Promise<CreateOutcome[]>;
}

const newBatch = (): Batch => ({ items: [], lines: [], order: [] });

const startsWithBom = (b: Buffer) => b.length >= 3 && b[0] === UTF8_BOM[0] && b[1] === UTF8_BOM[1] && b[2] === UTF8_BOM[2];

/** Lets the event loop run everything that is waiting (I/O included) before the import goes on. */
const yieldToOthers = () => new Promise<void>((resolve) => setImmediate(resolve));

export async function runImport(opts: ImportOptions): Promise<ImportSummary> {
  const audio = opts.audio ?? AudioTiming.UNSPECIFIED;
  const maxOutstanding = opts.maxOutstanding ?? DEFAULT_OUTSTANDING;
  const batchSize = Math.min(opts.batch ?? IMPORT_BATCH, IMPORT_BATCH);
  const summary: ImportSummary = { imported: 0, failed: 0 };
  let lineNo = 0;
  /** Lines read but not yet counted against the import bucket. */
  let unpaced = 0;
  let current = newBatch();
  const outstanding: Batch[] = [];
  /** Set once a whole call failed: later lines are not sent (a service that failed would most likely fail them too). */
  let broken: { status: number; message: string } | undefined;
  let wakeReader: (() => void) | undefined;
  let writing: Promise<void> = Promise.resolve();

  const aborted = () => opts.signal?.aborted === true;

  async function writeBatch(b: Batch): Promise<void> {
    let outcomes: CreateOutcome[] = [];
    if (b.results) outcomes = await b.results;
    let text = "";
    for (const entry of b.order) {
      if (typeof entry === "string") {
        text += entry;
        summary.failed++;
        continue;
      }
      const o = outcomes[entry];
      const line = b.lines[entry];
      if (o && "id" in o) {
        text += okLine(line, o.id, o.warning);
        summary.imported++;
      } else {
        const f = o ?? { status: 500, message: "the articles service answered without this create" };
        text += failLine(line, f.status, f.message, f.existingId);
        summary.failed++;
      }
    }
    if (text && !aborted() && !opts.out.write(text)) await opts.out.drain();
    outstanding.shift();
    opts.onProgress?.({ lines: lineNo, ...summary });
    wakeReader?.();
  }

  function dispatch(): void {
    const b = current;
    current = newBatch();
    if (b.items.length > 0) {
      const call = () => opts.send(b.items, b.lines);
      b.results = (opts.schedule ? opts.schedule(call) : call()).catch((err: unknown) => {
        broken ??= opts.failureOf(err);
        return b.items.map(() => broken!);
      });
    }
    outstanding.push(b);
    // Written strictly in order: each batch after the one before it.
    writing = writing.then(() => writeBatch(b));
  }

  /** Sends the batch being filled; first waits for the import bucket (every line read) and while too many are outstanding. */
  async function flush(): Promise<void> {
    if (unpaced > 0 && opts.pace) {
      const n = unpaced;
      unpaced = 0;
      await opts.pace(n);
    }
    unpaced = 0;
    if (current.order.length === 0 || aborted()) return;
    while (outstanding.length >= maxOutstanding && !aborted()) {
      await new Promise<void>((resolve) => (wakeReader = resolve));
      wakeReader = undefined;
    }
    if (current.items.length > 0 && broken) {
      // Not sent: the items become fail lines of their own.
      const { status, message } = broken;
      current.order = current.order.map((e) => (typeof e === "number" ? failLine(current.lines[e], status, `not imported: ${message}`) : e));
      current.items = [];
    }
    if (aborted()) return;
    dispatch();
  }

  let lastFail: { raw: Buffer; status: number; message: string } | undefined;
  function onLine(raw: Buffer | null): void {
    const line = ++lineNo;
    unpaced++;
    if (line === 1 && raw !== null && startsWithBom(raw)) raw = raw.subarray(3);
    if (raw === null) {
      current.order.push(failLine(line, 413, `line is longer than ${opts.maxLineBytes} bytes (the body limit applies to each line)`));
      return;
    }
    if (isBlank(raw)) return;
    // A line that repeats the one before it (a flood of `x` or `{}`) gets the same answer without being checked again.
    if (lastFail && raw.length <= REPEAT_CHECK_BYTES && raw.equals(lastFail.raw)) {
      current.order.push(failLine(line, lastFail.status, lastFail.message));
      return;
    }
    // A bad line is an answer, not a bug: its errors need no stack trace, which would cost more than the check.
    const stackLimit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    try {
      const article = articleOf(raw, audio);
      current.order.push(current.items.length);
      current.items.push(article);
      current.lines.push(line);
    } catch (e) {
      if (!(e instanceof HttpError)) throw e;
      current.order.push(failLine(line, e.status, e.message));
      lastFail = raw.length <= REPEAT_CHECK_BYTES ? { raw: Buffer.from(raw), status: e.status, message: e.message } : undefined;
    } finally {
      Error.stackTraceLimit = stackLimit;
    }
  }

  // Line splitting over the chunks as they come: the pieces of an unfinished
  // line wait in `parts`; a line past the limit is dropped as it grows.
  const parts: Buffer[] = [];
  let partBytes = 0;
  let overlong = false;
  const endLine = (tail: Buffer) => {
    if (overlong || partBytes + tail.length > opts.maxLineBytes) onLine(null);
    else onLine(parts.length === 0 ? tail : Buffer.concat([...parts, tail], partBytes + tail.length));
    parts.length = 0;
    partBytes = 0;
    overlong = false;
  };

  let sliceStart = performance.now();
  let sinceClock = 0;
  for await (const chunk of opts.input) {
    if (aborted()) break;
    const buf = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
    let start = 0;
    for (let nl = buf.indexOf(0x0a, start); nl !== -1; nl = buf.indexOf(0x0a, start)) {
      endLine(buf.subarray(start, nl));
      start = nl + 1;
      if (current.items.length >= batchSize || unpaced >= MAX_BATCH_LINES) await flush();
      if (aborted()) break;
      if (++sinceClock >= CLOCK_EVERY) {
        sinceClock = 0;
        if (performance.now() - sliceStart >= IMPORT_SLICE_MS) {
          await yieldToOthers();
          sliceStart = performance.now();
        }
      }
    }
    if (aborted()) break;
    if (start < buf.length && !overlong) {
      const rest = buf.subarray(start);
      if (partBytes + rest.length > opts.maxLineBytes) {
        overlong = true;
        parts.length = 0;
        partBytes = 0;
      } else {
        // A copy: the chunk's memory may be reused by the stream.
        parts.push(Buffer.from(rest));
        partBytes += rest.length;
      }
    }
    // What is there goes before more is read (once the service has room), so results follow a slow upload closely.
    await flush();
    // A chunk may have been a few lines of heavy work (each up to the body limit): the others get a turn too.
    if (performance.now() - sliceStart >= IMPORT_SLICE_MS) {
      await yieldToOthers();
      sliceStart = performance.now();
    }
  }
  if (!aborted() && !opts.cutShort?.() && (partBytes > 0 || overlong)) endLine(Buffer.alloc(0));
  if (!aborted()) await flush();
  await writing;
  return summary;
}

/** The summary line that ends the answer. */
export const summaryLine = (s: ImportSummary) => `{"result":"ok","imported":${s.imported},"failed":${s.failed}${s.stopped ? `,"stopped":${JSON.stringify(s.stopped)}` : ""}}\n`;
