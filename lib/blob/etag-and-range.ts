// What both blob adapters must agree on: how an etag is derived from content
// and which byte ranges are valid.
import { createHash } from "node:crypto";
import { finishInSlices, type Steps } from "../slices.js";

/**
 * 128 bits of SHA-256 in base64url: unique enough, short in headers. Hashed in slices: hours of
 * audio are a few hundred milliseconds of hashing, which other requests need not wait for.
 */
export function contentEtagInSlices(data: Buffer): Promise<string> {
  return finishInSlices(etagSteps(data));
}

// A step hashes about a millisecond's worth.
const HASH_STEP_BYTES = 1 << 20;

function* etagSteps(data: Buffer): Steps<string> {
  const hash = createHash("sha256");
  for (let at = 0; at < data.length; at += HASH_STEP_BYTES) {
    hash.update(data.subarray(at, at + HASH_STEP_BYTES));
    yield;
  }
  return hash.digest("base64url").slice(0, 22);
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
