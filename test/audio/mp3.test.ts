import { expect } from "chai";
import { createMp3Encoder } from "wasm-media-encoders";
import { joinMp3, mp3Duration, parseFrames, silenceFrames, sliceMp3 } from "../../services/audio/mp3/index.js";

// Fixtures are encoded on the fly with LAME (WASM) from synthetic tones, so these tests do not
// depend on the speech engine.
async function tone(seconds: number, opts: { sampleRate?: number; channels?: 1 | 2; bitrate?: number; vbrQuality?: number; freq?: number } = {}): Promise<Buffer> {
  const sampleRate = opts.sampleRate ?? 24000;
  const channels = opts.channels ?? 1;
  const encoder = await createMp3Encoder();
  const params = opts.vbrQuality !== undefined ? { vbrQuality: opts.vbrQuality } : { bitrate: (opts.bitrate ?? 48) as 48 };
  // The output rate is pinned because LAME would otherwise pick one to suit the bitrate.
  encoder.configure({ sampleRate, channels, ...params, outputSampleRate: sampleRate as 24000 });
  const n = Math.round(seconds * sampleRate);
  const pcm = new Float32Array(n);
  // A sweep with a noisy component: uneven content so VBR actually varies.
  for (let i = 0; i < n; i++) pcm[i] = 0.4 * Math.sin((2 * Math.PI * (opts.freq ?? 440) * i * (1 + i / n)) / sampleRate) + (i % 7919 < 2000 ? 0.2 * (Math.random() - 0.5) : 0);
  const input = Array.from({ length: channels }, () => pcm);
  return Buffer.concat([Buffer.from(encoder.encode(input)), Buffer.from(encoder.finalize())]);
}

async function metadata(buf: Buffer, countFrames = false) {
  // Imported lazily: loaded through mocha's require path, its CommonJS dependencies lose their
  // default export, while a dynamic import takes the native ESM path.
  const { parseBuffer } = await import("music-metadata");
  return (await parseBuffer(buf, { mimeType: "audio/mpeg" }, { duration: countFrames })).format;
}

function infoTags(buf: Buffer): string[] {
  const found: string[] = [];
  for (const tag of ["Info", "Xing"]) {
    let at = buf.indexOf(tag);
    while (at >= 0) {
      found.push(tag);
      at = buf.indexOf(tag, at + 1);
    }
  }
  return found;
}

function id3v2(payload: number): Buffer {
  const tag = Buffer.alloc(10 + payload, 0x41);
  tag.write("ID3", 0, "latin1");
  tag[3] = 4;
  tag[4] = 0;
  tag[5] = 0;
  // Syncsafe size: 7 bits per byte.
  tag[6] = (payload >> 21) & 0x7f;
  tag[7] = (payload >> 14) & 0x7f;
  tag[8] = (payload >> 7) & 0x7f;
  tag[9] = payload & 0x7f;
  return tag;
}

function id3v1(): Buffer {
  const tag = Buffer.alloc(128, 0x20);
  tag.write("TAG", 0, "latin1");
  tag.write("\xff\xf3\x64\xc4", 3, "latin1"); // a fake frame header inside the title must not count
  return tag;
}

const FRAME = 576 / 24000;

describe("mp3 tools", function () {
  this.timeout(20000);
  let a: Buffer;
  let b: Buffer;
  let c: Buffer;

  before(async () => {
    [a, b, c] = await Promise.all([tone(1.3), tone(0.7, { freq: 330 }), tone(2.1, { freq: 550 })]);
  });

  describe("parseFrames / mp3Duration", () => {
    it("finds every frame of an encoder stream and agrees with music-metadata", async () => {
      const frames = parseFrames(a);
      expect(frames.length).to.be.greaterThan(40);
      expect(frames[0]).to.deep.equal({ offset: 0, length: 144, samples: 576, sampleRate: 24000, bitrate: 48, channels: 1 });
      for (let i = 1; i < frames.length; i++) expect(frames[i].offset).to.equal(frames[i - 1].offset + frames[i - 1].length);
      expect(frames.at(-1)!.offset + frames.at(-1)!.length).to.equal(a.length);
      const mm = await metadata(a, true);
      expect(mp3Duration(a)).to.be.closeTo(mm.duration!, FRAME);
      // LAME adds encoder delay and padding, so the stream is a little longer than the PCM, never shorter.
      expect(mp3Duration(a)).to.be.within(1.3, 1.3 + 0.15);
    });

    it("skips ID3v2 and ID3v1 tags", () => {
      const tagged = Buffer.concat([id3v2(3000), a, id3v1()]);
      const frames = parseFrames(tagged);
      expect(frames.length).to.equal(parseFrames(a).length);
      expect(frames[0].offset).to.equal(3010);
      expect(mp3Duration(tagged)).to.equal(mp3Duration(a));
    });

    it("returns no frames for garbage, empty or tiny input", () => {
      let seed = 7;
      const random = Buffer.alloc(256 * 1024);
      for (let i = 0; i < random.length; i++) random[i] = (seed = (seed * 1103515245 + 12345) & 0x7fffffff) >> 16;
      expect(parseFrames(random).length).to.be.lessThan(3);
      expect(parseFrames(Buffer.alloc(0))).to.deep.equal([]);
      expect(parseFrames(Buffer.from([0xff, 0xf3]))).to.deep.equal([]);
      expect(parseFrames(Buffer.alloc(100_000, 0xff))).to.deep.equal([]);
      expect(mp3Duration(Buffer.from("not an mp3 at all"))).to.equal(0);
    });

    it("drops a truncated last frame and stops at trailing garbage", () => {
      const whole = parseFrames(a).length;
      expect(parseFrames(a.subarray(0, a.length - 50)).length).to.equal(whole - 1);
      const withJunk = Buffer.concat([a, Buffer.from("x".repeat(500_000))]);
      expect(parseFrames(withJunk).length).to.equal(whole);
    });

    it("resyncs over a short run of junk between frames", () => {
      const frames = parseFrames(a);
      const cut = frames[10].offset;
      const damaged = Buffer.concat([a.subarray(0, cut), Buffer.from("junk bytes here"), a.subarray(cut)]);
      expect(parseFrames(damaged).length).to.equal(frames.length);
    });
  });

  describe("joinMp3", () => {
    it("joins three parts: duration is the sum, one Info header, players read the exact duration", async () => {
      const joined = joinMp3([a, b, c]);
      const sum = mp3Duration(a) + mp3Duration(b) + mp3Duration(c);
      expect(mp3Duration(joined)).to.be.closeTo(sum, 1e-9);
      expect(parseFrames(joined).length).to.equal(parseFrames(a).length + parseFrames(b).length + parseFrames(c).length);
      expect(infoTags(joined)).to.deep.equal(["Info"]);
      expect(joined.indexOf("Info")).to.be.lessThan(144);
      // Without frame counting, music-metadata can only know the exact length from our header.
      const mm = await metadata(joined);
      expect(mm.duration).to.be.closeTo(sum, 1e-6);
      expect(mm.sampleRate).to.equal(24000);
      expect(mm.codecProfile).to.equal("CBR");
    });

    it("strips inner Info headers and tags from the parts", async () => {
      const inner = Buffer.concat([id3v2(500), joinMp3([a]), id3v1()]);
      const joined = joinMp3([inner, b]);
      expect(infoTags(joined)).to.have.length(1);
      expect(joined.includes("TAG")).to.equal(false);
      expect(mp3Duration(joined)).to.be.closeTo(mp3Duration(a) + mp3Duration(b), 1e-9);
    });

    it("writes a Xing header with a seek table when bitrates differ", async () => {
      const [hi, lo] = await Promise.all([tone(1, { bitrate: 64 }), tone(1, { bitrate: 32 })]);
      const joined = joinMp3([hi, lo]);
      expect(infoTags(joined)).to.deep.equal(["Xing"]);
      const at = joined.indexOf("Xing");
      expect(joined.readUInt32BE(at + 4) & 7).to.equal(7);
      expect(joined.readUInt32BE(at + 8)).to.equal(parseFrames(hi).length + parseFrames(lo).length);
      expect(joined.readUInt32BE(at + 12)).to.equal(joined.length);
      const toc = [...joined.subarray(at + 16, at + 116)];
      // Entry 0 lands on the first audio frame, right after the Xing frame.
      expect(Math.ceil(((toc[0] + 1) / 256) * joined.length)).to.be.greaterThan(parseFrames(joined)[0].offset);
      expect(Math.floor((toc[0] / 256) * joined.length)).to.be.at.most(parseFrames(joined)[0].offset);
      for (let i = 1; i < 100; i++) expect(toc[i]).to.be.at.least(toc[i - 1]);
      // The first half of the time is the 64 kbps part, i.e. about two thirds of the bytes.
      expect(toc[50] / 256).to.be.closeTo(2 / 3, 0.05);
      const mm = await metadata(joined);
      expect(mm.duration).to.be.closeTo(mp3Duration(hi) + mp3Duration(lo), 1e-6);
    });

    it("refuses parts in different formats", async () => {
      const stereo = await tone(0.5, { sampleRate: 44100, channels: 2, bitrate: 128 });
      expect(() => joinMp3([a, stereo])).to.throw(/part 1 is MPEG-1 layer 3, 44100 Hz, stereo but part 0 is MPEG-2 layer 3, 24000 Hz, mono/);
    });

    it("refuses non-MP3 parts and an empty list, and ignores empty parts", () => {
      expect(() => joinMp3([a, Buffer.from("hello world, not audio")])).to.throw(/part 1 contains no MPEG audio frames/);
      expect(() => joinMp3([])).to.throw(/no MPEG audio frames/);
      expect(mp3Duration(joinMp3([Buffer.alloc(0), a, sliceMp3(a, 0)]))).to.be.closeTo(mp3Duration(a), 1e-9);
    });

    it("mutes opening frames whose bit-reservoir data lies before the part", async () => {
      const long = await tone(3, { bitrate: 32 });
      const frames = parseFrames(long);
      // A cut from the middle of a stream: find a frame that borrows bytes from its predecessors.
      const borrowing = frames.findIndex((f, i) => i > 5 && long[f.offset + 4] > 0);
      expect(borrowing, "fixture has a frame using the reservoir").to.be.greaterThan(0);
      const cut = long.subarray(frames[borrowing].offset);
      const joined = joinMp3([a, cut]);
      const out = parseFrames(joined);
      const first = out[parseFrames(a).length];
      expect(joined.subarray(first.offset + 4, first.offset + 13).every((x) => x === 0)).to.equal(true);
      expect(out.length).to.equal(parseFrames(a).length + frames.length - borrowing);
    });
  });

  describe("sliceMp3", () => {
    it("keeps the opening up to the limit, at a frame boundary, with its own Info header", async () => {
      const joined = joinMp3([a, b, c]);
      for (const limit of [0.5, 1, 2.0, 2.5]) {
        const slice = sliceMp3(joined, limit);
        const d = mp3Duration(slice);
        expect(d).to.be.at.most(limit);
        expect(d).to.be.greaterThan(limit - FRAME);
        expect(infoTags(slice)).to.deep.equal(["Info"]);
        expect((await metadata(slice)).duration).to.be.closeTo(d, 1e-6);
        // It is the opening: the frames are byte-identical to the start of the source's audio.
        const firstAudio = parseFrames(joined)[0].offset;
        const sliceAudio = parseFrames(slice)[0].offset;
        expect(slice.subarray(sliceAudio).equals(joined.subarray(firstAudio, firstAudio + slice.length - sliceAudio))).to.equal(true);
      }
    });

    it("returns the whole input when the limit is longer, and rejects bad limits", () => {
      expect(mp3Duration(sliceMp3(a, 1000))).to.equal(mp3Duration(a));
      expect(mp3Duration(sliceMp3(a, 0))).to.equal(0);
      expect(() => sliceMp3(a, -1)).to.throw(RangeError);
      expect(() => sliceMp3(a, Number.NaN)).to.throw(RangeError);
      expect(() => sliceMp3(Buffer.from("nope"), 3)).to.throw(/no MPEG audio frames/);
    });
  });

  describe("silenceFrames", () => {
    it("produces silence of the requested length in whole frames, joinable with encoder output", async () => {
      const fmt = { sampleRate: 24000, channels: 1 as const, bitrate: 48 };
      expect(mp3Duration(silenceFrames(fmt, 480))).to.be.closeTo(0.48, 1e-9);
      expect(mp3Duration(silenceFrames(fmt, 1000))).to.be.closeTo(1.0, FRAME / 2);
      expect(silenceFrames(fmt, 0).length).to.equal(0);
      const joined = joinMp3([a, silenceFrames(fmt, 700), b]);
      expect((await metadata(joined)).duration).to.be.closeTo(mp3Duration(a) + 0.696 + mp3Duration(b), 1e-6);
      expect(() => silenceFrames(fmt, -5)).to.throw(RangeError);
      expect(() => silenceFrames({ ...fmt, bitrate: 47 }, 100)).to.throw(/bitrate/);
    });
  });
});
