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

export type ImportArticle = Omit<CreateArticleRequest, "$typeName">;

/** What became of one create: its id, or why not (and who holds a taken externalId). */
export type CreateOutcome = { id: string } | { status: number; message: string; existingId?: string };

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
  /** Waits until the project's import bucket allows this many more creates. */
  pace?(count: number): Promise<void>;
  /** The gateway's body limit, per line. */
  maxLineBytes: number;
  audio?: AudioTiming;
  /** Stop reading and sending (the client went away). */
  signal?: AbortSignal;
  maxOutstanding?: number;
  /** After each batch is written: lines seen so far, imported, failed (progress for the CLI). */
  onProgress?(s: ImportSummary & { lines: number }): void;
}

export interface ImportSummary {
  imported: number;
  failed: number;
}

/** The create request of a validated ArticleCreateRequest, as POST /api/articles sends it. */
export function createRequestOf(b: CreateBody, audio: AudioTiming = AudioTiming.UNSPECIFIED): ImportArticle {
  return {
    title: b.title,
    text: b.text,
    url: b.url,
    externalId: b.externalId,
    voice: b.voice,
    lang: b.lang,
    parse: b.parse ?? false,
    isRaw: b.isRaw ?? false,
    prompt: b.prompt,
    labels: b.labels ?? [],
    audio,
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
        if (r.outcome.case === "id") return { id: r.outcome.value };
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

const utf8 = new TextDecoder("utf-8", { fatal: true });

const failLine = (line: number, status: number, message: string, existingId?: string) =>
  `{"line":${line},"result":"fail","status":${status},"message":${JSON.stringify(message)}${existingId ? `,"id":${JSON.stringify(existingId)}` : ""}}\n`;
const okLine = (line: number, id: string) => `{"line":${line},"result":"ok","id":${JSON.stringify(id)}}\n`;

/** One line as the article it asks for, or an HttpError saying why not. */
function articleOf(raw: Buffer, audio: AudioTiming): ImportArticle {
  let text: string;
  try {
    text = utf8.decode(raw);
  } catch {
    throw new HttpError(400, "line is not valid UTF-8");
  }
  if (jsonDepthExceeds(raw, MAX_JSON_DEPTH)) throw new HttpError(400, `line is nested more than ${MAX_JSON_DEPTH} levels deep`);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new HttpError(400, "line is not valid JSON");
  }
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

export async function runImport(opts: ImportOptions): Promise<ImportSummary> {
  const audio = opts.audio ?? AudioTiming.UNSPECIFIED;
  const maxOutstanding = opts.maxOutstanding ?? DEFAULT_OUTSTANDING;
  const summary: ImportSummary = { imported: 0, failed: 0 };
  let lineNo = 0;
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
        text += okLine(line, o.id);
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
      b.results = opts.send(b.items, b.lines).catch((err: unknown) => {
        broken ??= opts.failureOf(err);
        return b.items.map(() => broken!);
      });
    }
    outstanding.push(b);
    // Written strictly in order: each batch after the one before it.
    writing = writing.then(() => writeBatch(b));
  }

  /** Sends the batch being filled; first waits while too many are outstanding and for the import bucket. */
  async function flush(): Promise<void> {
    if (current.order.length === 0) return;
    while (outstanding.length >= maxOutstanding && !aborted()) {
      await new Promise<void>((resolve) => (wakeReader = resolve));
      wakeReader = undefined;
    }
    if (current.items.length > 0) {
      if (broken) {
        // Not sent: the items become fail lines of their own.
        const { status, message } = broken;
        current.order = current.order.map((e) => (typeof e === "number" ? failLine(current.lines[e], status, `not imported: ${message}`) : e));
        current.items = [];
      } else if (opts.pace) {
        await opts.pace(current.items.length);
      }
    }
    if (aborted()) return;
    dispatch();
  }

  function onLine(raw: Buffer | null): void {
    const line = ++lineNo;
    if (raw === null) {
      current.order.push(failLine(line, 413, `line is longer than ${opts.maxLineBytes} bytes (the body limit applies to each line)`));
      return;
    }
    if (isBlank(raw)) return;
    try {
      const article = articleOf(raw, audio);
      current.order.push(current.items.length);
      current.items.push(article);
      current.lines.push(line);
    } catch (e) {
      if (!(e instanceof HttpError)) throw e;
      current.order.push(failLine(line, e.status, e.message));
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

  for await (const chunk of opts.input) {
    if (aborted()) break;
    const buf = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
    let start = 0;
    for (let nl = buf.indexOf(0x0a, start); nl !== -1; nl = buf.indexOf(0x0a, start)) {
      endLine(buf.subarray(start, nl));
      start = nl + 1;
      if (current.items.length >= IMPORT_BATCH || current.order.length >= MAX_BATCH_LINES) await flush();
    }
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
    // What is there goes now when the service has room, so results follow a slow upload closely.
    if (outstanding.length < maxOutstanding) await flush();
  }
  if (!aborted() && (partBytes > 0 || overlong)) endLine(Buffer.alloc(0));
  if (!aborted()) await flush();
  await writing;
  return summary;
}

/** The summary line that ends the answer. */
export const summaryLine = (s: ImportSummary) => `{"result":"ok","imported":${s.imported},"failed":${s.failed}}\n`;
