// What both blob adapters must agree on: how an etag is derived from content
// and which byte ranges are valid.
import { createHash } from "node:crypto";

/** 128 bits of SHA-256 in base64url: unique enough, short in headers. */
export function contentEtag(data: Buffer): string {
  return createHash("sha256").update(data).digest("base64url").slice(0, 22);
}

/**
 * Normalises an inclusive HTTP-style range against the size: an end past the
 * last byte is clamped; a range that selects nothing is an error.
 */
export function checkRange(range: { start: number; end: number } | undefined, size: number): { start: number; end: number } | undefined {
  if (!range) return undefined;
  const { start } = range;
  const end = Math.min(range.end, size - 1);
  if (!Number.isInteger(start) || !Number.isInteger(range.end) || start < 0 || start > end) {
    throw new RangeError(`byte range ${range.start}-${range.end} is not satisfiable for ${size} bytes`);
  }
  return { start, end };
}
