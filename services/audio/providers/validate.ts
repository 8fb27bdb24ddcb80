// A 200 response is only a success when its body is complete MP3: proxies and
// overloaded backends sometimes cut bodies short or answer with JSON or WAV.
import { scanFrames } from "../mp3/frames.js";
import { ProviderError } from "./errors.js";

// An ID3v1 tag (128 bytes) or APE tag may trail the last frame; anything else after it means a cut.
const TRAILING_TAG = /^(TAG|APETAGEX)/;

/** The media type of a response, when it may hold MP3 (none given counts as may). */
export function mp3Type(contentType: string | null): { ok: boolean; type: string } {
  const type = (contentType ?? "").split(";")[0].trim().toLowerCase();
  return { ok: !type || /^audio\/(mpeg|mp3|mpeg3|x-mpeg)$/.test(type) || type === "application/octet-stream", type };
}

export function checkMp3(body: Buffer, contentType: string | null): Buffer {
  const { ok, type } = mp3Type(contentType);
  if (!ok) throw new ProviderError(`unexpected response type '${type}' instead of MP3`, true);
  const scan = scanFrames(body);
  if (scan.frames.length === 0) throw new ProviderError(`response is not MP3 (${body.length} bytes without MPEG audio frames)`, true);
  const last = scan.frames[scan.frames.length - 1];
  const end = last.offset + last.length;
  if (end < body.length && !TRAILING_TAG.test(body.subarray(end, end + 8).toString("latin1"))) {
    throw new ProviderError(`MP3 response is truncated or corrupt (${body.length - end} stray bytes after the last whole frame)`, true);
  }
  return body;
}
