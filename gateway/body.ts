// Reads a JSON request body with a hard size cap. The cap is enforced while
// streaming (and up front from Content-Length), so an oversized upload is
// refused without ever being held in memory.
import type { Context } from "koa";
import { HttpError } from "./errors.js";

export const DEFAULT_MAX_BODY_BYTES = 10 * 1024 * 1024;

function tooLarge(ctx: Context, max: number): HttpError {
  // The rest of the upload is not wanted: close the connection after the reply.
  ctx.set("Connection", "close");
  return new HttpError(413, `Request body is larger than ${max} bytes`);
}

function isJsonType(ctx: Context, acceptText: boolean): boolean {
  const type = ctx.request.type; // media type without parameters, lower-cased
  return type === "application/json" || /^application\/[a-z0-9.+-]+\+json$/.test(type) || (acceptText && type === "text/plain");
}

function readRaw(ctx: Context, max: number): Promise<Buffer> {
  const req = ctx.req;
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
        req.pause();
        chunks.length = 0;
        reject(tooLarge(ctx, max));
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

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** Parsed JSON body; HttpError 413/415/400 on oversize, wrong type, empty or malformed input. */
export async function readJsonBody(ctx: Context, maxBytes: number, opts: { acceptText?: boolean } = {}): Promise<unknown> {
  const declared = Number(ctx.get("Content-Length") || NaN);
  if (Number.isFinite(declared) && declared > maxBytes) throw tooLarge(ctx, maxBytes);
  const hasBody = ctx.request.length > 0 || Boolean(ctx.get("Transfer-Encoding"));
  if (!hasBody) throw new HttpError(400, "Request body is required: send a JSON object with Content-Type: application/json");
  if (!isJsonType(ctx, opts.acceptText ?? false)) throw new HttpError(415, "Content-Type must be application/json");
  const raw = await readRaw(ctx, maxBytes);
  if (raw.length === 0) throw new HttpError(400, "Request body is required: send a JSON object");
  let text: string;
  try {
    text = utf8.decode(raw);
  } catch {
    throw new HttpError(400, "Request body is not valid UTF-8");
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new HttpError(400, "Request body is not valid JSON");
  }
}
