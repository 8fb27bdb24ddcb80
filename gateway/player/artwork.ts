// The podcast artwork a feed shows when the project set none of its own:
// Apple Podcasts and Spotify refuse a feed without a square image of at least
// 1400 px. Drawn here (a sound-wave mark on a gradient) and written as an
// 8-bit RGB PNG with node:zlib, once per process, then served from memory.
import { createHash } from "node:crypto";
import { promisify } from "node:util";
import { crc32, deflate } from "node:zlib";
import type { Context } from "koa";
import { notModified } from "../conditional.js";

/** Where the gateway serves it; stable, so podcast directories can cache it. */
export const ARTWORK_PATH = "/feeds/artwork.png";
export const ARTWORK_SIZE = 1400;

const deflateAsync = promisify(deflate);

type Rgb = [number, number, number];
const TOP_LEFT: Rgb = [0x1d, 0x35, 0x57];
const BOTTOM_RIGHT: Rgb = [0x2a, 0x9d, 0x8f];
const MARK: Rgb = [0xf8, 0xf9, 0xfa];

// Nine bars, tallest in the middle, each a vertical capsule centred on the image.
const BAR_HEIGHTS = [0.22, 0.4, 0.62, 0.82, 1, 0.82, 0.62, 0.4, 0.22];
const BAR_RADIUS = 0.025;
const BAR_PITCH = 0.08;
const MAX_HALF_LENGTH = 0.25;

const FIRST_BAR = 0.5 - ((BAR_HEIGHTS.length - 1) / 2) * BAR_PITCH;

/** Share of the pixel at (x, y), in [0, 1] image units, covered by bar i; a one-pixel soft edge. */
function barCoverage(i: number, x: number, y: number, pixel: number): number {
  const dx = x - (FIRST_BAR + i * BAR_PITCH);
  const dy = Math.max(0, Math.abs(y - 0.5) - BAR_HEIGHTS[i] * MAX_HALF_LENGTH);
  const distance = Math.sqrt(dx * dx + dy * dy) - BAR_RADIUS;
  return Math.min(1, Math.max(0, 0.5 - distance / pixel));
}

/** Raw scanlines, unfiltered. */
function scanlines(size: number): Buffer {
  const stride = size * 3 + 1;
  const out = Buffer.alloc(stride * size);
  const pixel = 1 / size;
  // The gradient runs along the diagonal: one colour per px + py.
  const diagonal = Buffer.alloc(2 * size * 3);
  for (let k = 0; k < 2 * size; k++) {
    const t = (k + 1) / (2 * size);
    for (let c = 0; c < 3; c++) diagonal[k * 3 + c] = Math.round(TOP_LEFT[c] + (BOTTOM_RIGHT[c] - TOP_LEFT[c]) * t);
  }
  const row = Buffer.alloc(size * 3);
  const reach = BAR_RADIUS + pixel;
  for (let py = 0; py < size; py++) {
    const y = (py + 0.5) / size;
    diagonal.copy(row, 0, py * 3, (py + size) * 3);
    for (let i = 0; i < BAR_HEIGHTS.length; i++) {
      if (Math.abs(y - 0.5) > BAR_HEIGHTS[i] * MAX_HALF_LENGTH + reach) continue;
      const cx = FIRST_BAR + i * BAR_PITCH;
      for (let px = Math.max(0, Math.floor((cx - reach) * size)); px < Math.min(size, Math.ceil((cx + reach) * size)); px++) {
        const cover = barCoverage(i, (px + 0.5) / size, y, pixel);
        if (cover === 0) continue;
        for (let c = 0; c < 3; c++) row[px * 3 + c] = Math.round(row[px * 3 + c] + (MARK[c] - row[px * 3 + c]) * cover);
      }
    }
    // Filter type 0 (None): each row is the one above shifted by a pixel, which deflate finds on its own.
    row.copy(out, py * stride + 1);
  }
  return out;
}

function chunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, "latin1");
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(data, crc32(head.subarray(4))), 0);
  return Buffer.concat([head, data, crc]);
}

/** A square 8-bit RGB PNG of the mark, `size` pixels a side. */
export async function renderArtwork(size = ARTWORK_SIZE): Promise<Buffer> {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(size, 0);
  ihdr.writeUInt32BE(size, 4);
  ihdr.set([8, 2, 0, 0, 0], 8); // bit depth 8, colour type RGB, deflate, adaptive filtering, no interlace
  const idat = await deflateAsync(scanlines(size), { level: 9 });
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk("IHDR", ihdr), chunk("IDAT", idat), chunk("IEND", Buffer.alloc(0))]);
}

let rendered: Promise<{ png: Buffer; etag: string }> | undefined;

/** Drawn on first request (some 50 ms on the event loop, the deflate off it), then kept. */
function artwork(): Promise<{ png: Buffer; etag: string }> {
  rendered ??= renderArtwork().then(
    (png) => ({ png, etag: `"${createHash("sha1").update(png).digest("base64url")}"` }),
    (err: unknown) => {
      rendered = undefined;
      throw err;
    },
  );
  return rendered;
}

export async function serveArtwork(ctx: Context): Promise<void> {
  const { png, etag } = await artwork();
  ctx.set("Access-Control-Allow-Origin", "*");
  ctx.set("Cache-Control", "public, max-age=86400");
  ctx.set("ETag", etag);
  if (notModified(ctx, etag)) {
    ctx.status = 304;
    return;
  }
  ctx.type = "image/png";
  ctx.body = png;
}
