// The store's packed fields go through one zlib stream each way, reset and reused (lib/store/reused-zlib.ts).
import { expect } from "chai";
import zlib from "node:zlib";
import { reusedDeflateRaw, reusedInflateRaw } from "../../lib/store/reused-zlib.js";

// The options the SQLite driver stores with.
const DEFLATE = { level: 6, windowBits: 12, memLevel: 5 } as const;
const INFLATE = { windowBits: 12 } as const;

/** A deterministic text of `n` characters, some of them outside ASCII, that compresses like prose would not. */
function textOf(n: number): string {
  let s = "";
  for (let x = n + 1; s.length < n; ) {
    x = (x * 1103515245 + 12345) >>> 0;
    s += String.fromCharCode(97 + (x % 26)) + (x % 7 === 0 ? " é—" : "");
  }
  return s.slice(0, n);
}

describe("reused zlib streams", () => {
  const inflate = reusedInflateRaw(INFLATE);
  const deflate = reusedDeflateRaw(DEFLATE);

  it("writes the bytes zlib's own functions write and reads what they wrote, short texts and ones larger than any buffer it keeps", () => {
    for (const n of [0, 1, 1_200, 40_000, 700_000]) {
      const text = textOf(n);
      const before = zlib.deflateRawSync(text, DEFLATE);
      expect(deflate.buffer(Buffer.from(text)).equals(before), `${n} characters`).to.equal(true);
      expect(inflate.text(before), `${n} characters`).to.equal(text);
      expect(zlib.inflateRawSync(deflate.buffer(Buffer.from(text)), INFLATE).toString("utf8")).to.equal(text);
    }
  });

  it("gives each call a buffer of its own", () => {
    const a = deflate.buffer(Buffer.from("first text, first text"));
    const copy = Buffer.from(a);
    deflate.buffer(Buffer.from("a second, different text"));
    expect(a.equals(copy)).to.equal(true);
  });

  it("fails as zlib does on damaged or cut bytes, and reads the next ones as usual", () => {
    const good = zlib.deflateRawSync("The council met on Tuesday. The council met on Tuesday.", DEFLATE);
    expect(() => inflate.text(Buffer.from([0xff, 0xff, 0x00]))).to.throw(/invalid block type/);
    expect(inflate.text(good)).to.equal("The council met on Tuesday. The council met on Tuesday.");
    expect(() => inflate.text(good.subarray(0, 5))).to.throw(/unexpected end of file/);
    expect(inflate.text(good)).to.equal("The council met on Tuesday. The council met on Tuesday.");
  });
});
