// Reads a JSON request body with a hard size cap. The cap is enforced while
// streaming (and up front from Content-Length), so an oversized upload is
// refused without ever being held in memory. A refused upload is still
// drained (discarded, bounded in bytes and time) so the client, which is
// usually still sending, can read the error instead of a reset connection.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Context } from "koa";
import { HttpError } from "./errors.js";

export const DEFAULT_MAX_BODY_BYTES = 10 * 1024 * 1024;
/** Deepest nesting of arrays and objects a body may have; checked on the bytes before JSON.parse. */
export const MAX_JSON_DEPTH = 64;
/** How long a refused upload is drained before its connection is cut. */
export const DRAIN_MS = 10_000;

function tooLarge(max: number): HttpError {
  return new HttpError(413, `Request body is larger than ${max} bytes`);
}

function isJsonType(ctx: Context, acceptText: boolean): boolean {
  const type = ctx.request.type; // media type without parameters, lower-cased
  return type === "application/json" || /^application\/[a-z0-9.+-]+\+json$/.test(type) || (acceptText && type === "text/plain");
}

const pendingContinue = new WeakMap<IncomingMessage, ServerResponse>();

/** Marks a request whose "100 Continue" is owed: sent by readJsonBody, never if the request is refused first. */
export function deferContinue(req: IncomingMessage, res: ServerResponse): IncomingMessage {
  pendingContinue.set(req, res);
  return req;
}

/** Sends the "100 Continue" a request may be owed: when its body is about to be read. */
export function sendContinue(req: IncomingMessage): void {
  const owed = pendingContinue.get(req);
  if (owed) {
    pendingContinue.delete(req);
    owed.writeContinue();
  }
}

/**
 * Connections whose upload may outlast the server's requestTimeout (a bulk
 * import reading its body as it goes, with an idle timeout of its own).
 */
export const longUploads = new WeakSet<object>();

/** True when the request announced a body (length or chunked). */
export function hasBody(req: IncomingMessage): boolean {
  const len = req.headers["content-length"];
  return (len !== undefined && len !== "0") || req.headers["transfer-encoding"] !== undefined;
}

/**
 * Discards what is left of a request body that will not be used, so the
 * response goes out on a connection the client can still read. At most
 * maxBytes more are accepted within DRAIN_MS; past either bound the socket
 * is closed (the answer has long been written by then).
 */
export function drainBody(req: IncomingMessage, maxBytes: number, maxMs = DRAIN_MS): void {
  if (req.complete || req.destroyed || !hasBody(req)) return;
  const owed = pendingContinue.get(req);
  if (owed) {
    // Refused before "100 Continue": the client may still send the body or
    // not, so this connection cannot be reused; it closes after the answer.
    pendingContinue.delete(req);
    if (!owed.headersSent) owed.setHeader("Connection", "close");
  }
  const cut = () => {
    clearTimeout(timer);
    req.off("data", onData);
    req.socket?.destroy();
  };
  let drained = 0;
  const onData = (chunk: Buffer) => {
    drained += chunk.length;
    if (drained > maxBytes) cut();
  };
  const timer = setTimeout(cut, maxMs);
  timer.unref();
  req.once("close", () => clearTimeout(timer));
  // Lingering close: when this answer ends the connection (the client sent
  // "Connection: close"), Node would close the socket right after the answer
  // and the client's next write would meet a reset, losing the answer. The
  // socket only half-closes then, and closes for good once the body is in.
  const socket = req.socket;
  socket.destroySoon = () => {
    socket.end();
  };
  req.once("end", () => {
    clearTimeout(timer);
    Reflect.deleteProperty(socket, "destroySoon"); // back to Node's own for later requests
    if (socket.writableEnded) socket.destroy();
  });
  req.on("data", onData);
  req.resume();
}

function readRaw(req: IncomingMessage, max: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    const cleanup = () => {
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("error", onError);
      req.off("aborted", onAborted);
    };
    const onData = (chunk: Buffer) => {
      total += chunk.length;
      if (total > max) {
        cleanup();
        // Stop buffering; the error path drains the rest without keeping it.
        req.pause();
        chunks.length = 0;
        reject(tooLarge(max));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve(Buffer.concat(chunks, total));
    };
    const onError = () => {
      cleanup();
      reject(new HttpError(400, "Request body could not be read"));
    };
    const onAborted = onError;
    req.on("data", onData);
    req.on("end", onEnd);
    req.on("error", onError);
    req.on("aborted", onAborted);
  });
}

const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * Largest nesting depth of arrays/objects in JSON text, stopping as soon as
 * `limit` is passed. Works on the raw bytes (the structural characters are
 * ASCII, which never occurs inside a UTF-8 multi-byte sequence), skipping
 * string contents, so JSON.parse never sees a pathological document.
 */
export function jsonDepthExceeds(raw: Uint8Array, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i];
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) {
      inString = true;
    } else if (c === OPEN_BRACKET || c === OPEN_BRACE) {
      if (++depth > limit) return true;
    } else if (c === CLOSE_BRACKET || c === CLOSE_BRACE) {
      depth--;
    }
  }
  return false;
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** Parsed JSON body; HttpError 413/415/400 on oversize, wrong type or encoding, empty, malformed or too deeply nested input. */
export async function readJsonBody(ctx: Context, maxBytes: number, opts: { acceptText?: boolean } = {}): Promise<unknown> {
  const declared = Number(ctx.get("Content-Length") || NaN);
  if (Number.isFinite(declared) && declared > maxBytes) throw tooLarge(maxBytes);
  if (!hasBody(ctx.req)) throw new HttpError(400, "Request body is required: send a JSON object with Content-Type: application/json");
  if (!isJsonType(ctx, opts.acceptText ?? false)) throw new HttpError(415, "Content-Type must be application/json");
  const encoding = ctx.get("Content-Encoding").trim().toLowerCase();
  if (encoding !== "" && encoding !== "identity") {
    throw new HttpError(415, `Content-Encoding '${encoding.slice(0, 40)}' is not supported: send the JSON body uncompressed`, { "Accept-Encoding": "identity" });
  }
  sendContinue(ctx.req);
  const raw = await readRaw(ctx.req, maxBytes);
  if (raw.length === 0) throw new HttpError(400, "Request body is required: send a JSON object");
  let text: string;
  try {
    text = utf8.decode(raw);
  } catch {
    throw new HttpError(400, "Request body is not valid UTF-8");
  }
  if (jsonDepthExceeds(raw, MAX_JSON_DEPTH)) throw new HttpError(400, `Request body is nested more than ${MAX_JSON_DEPTH} levels deep`);
  try {
    return JSON.parse(text);
  } catch {
    throw new HttpError(400, "Request body is not valid JSON");
  }
}
