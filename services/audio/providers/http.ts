// One HTTP request to a speech API: timeout, error classification, and a
// redacted error text (API error bodies can echo credentials).
import { ProviderError, parseRetryAfter, retryableStatus } from "./errors.js";
import { checkMp3, mp3Type } from "./validate.js";

export interface Mp3Request {
  provider: string;
  url: string;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  /** Strings that must never appear in an error message. */
  secrets: string[];
}

const MAX_DETAIL = 200;

export function redact(text: string, secrets: string[]): string {
  let out = text;
  for (const s of secrets) if (s) out = out.split(s).join("***");
  // Key-shaped tokens (e.g. "sk-…") are hidden even when they are not ours.
  return out.replace(/\b(sk|key|bearer)[-_ ]?[A-Za-z0-9_-]{12,}/gi, "$1-***");
}

async function errorDetail(res: Response, secrets: string[]): Promise<string> {
  const text = await res.text().catch(() => "");
  let detail = text;
  try {
    const json = JSON.parse(text) as { error?: { message?: string } | string; message?: string };
    detail = (typeof json.error === "string" ? json.error : json.error?.message) ?? json.message ?? text;
  } catch {
    // not JSON: keep the text
  }
  detail = redact(detail.replace(/\s+/g, " ").trim(), secrets);
  return detail.length > MAX_DETAIL ? `${detail.slice(0, MAX_DETAIL)}…` : detail;
}

/** `onData` sees the body's pieces as they arrive when the answer is a 200 of an MP3 type (see SpeechProvider.synthesize). */
export async function postForMp3(req: Mp3Request, signal: AbortSignal, onData?: (bytes: Uint8Array) => void): Promise<Buffer> {
  signal.throwIfAborted();
  const timeout = AbortSignal.timeout(req.timeoutMs);
  const both = AbortSignal.any([signal, timeout]);
  const timedOut = () => new ProviderError(`no complete answer within ${Math.round(req.timeoutMs / 100) / 10} s`, true);
  let res: Response;
  try {
    res = await fetch(req.url, { method: "POST", headers: req.headers, body: req.body, signal: both });
  } catch (e) {
    if (signal.aborted) throw signal.reason;
    if (timeout.aborted) throw timedOut();
    throw new ProviderError(`request failed: ${redact(String((e as Error).cause ?? (e as Error).message), req.secrets)}`, true);
  }
  if (!res.ok) {
    const detail = await errorDetail(res, req.secrets);
    const retryAfterMs = parseRetryAfter(res.headers);
    const wait = retryAfterMs !== undefined ? ` (retry after ${Math.round(retryAfterMs / 100) / 10} s)` : "";
    throw new ProviderError(`HTTP ${res.status}${detail ? `: ${detail}` : ""}${wait}`, retryableStatus(res.status), retryAfterMs, res.status);
  }
  let body: Buffer;
  try {
    // Read piece by piece, so that the caller can decode while the rest is still coming.
    const pieces: Uint8Array[] = [];
    let length = 0;
    const sink = mp3Type(res.headers.get("content-type")).ok ? onData : undefined;
    if (res.body) {
      for await (const piece of res.body) {
        pieces.push(piece);
        length += piece.length;
        sink?.(piece);
      }
    }
    body = Buffer.concat(pieces, length);
  } catch (e) {
    if (signal.aborted) throw signal.reason;
    if (timeout.aborted) throw timedOut();
    throw new ProviderError(`response body cut off: ${redact((e as Error).message, req.secrets)}`, true);
  }
  return checkMp3(body, res.headers.get("content-type"));
}
