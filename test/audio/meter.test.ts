// The loudness meter (libebur128, our WebAssembly build): it agrees with ffmpeg's ebur128 filter on
// speech, noise, tones, silence and clips shorter than a gating block; feeding it in pieces, as a
// download arrives, gives what one piece gives; chunks gated together give what the joined audio
// gives; and thousands of meters leave no memory behind.
import { expect } from "chai";
import { mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { openDiskCache } from "../../services/audio/cache/index.js";
import { createLocalEngine, type SpeechEngine } from "../../services/audio/engine/index.js";
import { finishMeter, forgetMeasurements, keepMetersIn, LoudnessMeter, measure, measureMp3, meterMp3, meterStats, Mp3Meter, type Measurement } from "../../services/audio/loudness/index.js";
import { liveDecoders } from "../../services/audio/loudness/stream.js";
import { applyGainSteps } from "../../services/audio/mp3/gain.js";
import { tagMp3 } from "../../services/audio/mp3/id3.js";
import { joinMp3, mp3Duration } from "../../services/audio/mp3/index.js";
import { renderWithProviders } from "../../services/audio/pipeline.js";
import { createOpenAiProvider, createSpeechRouter, localProvider } from "../../services/audio/providers/index.js";
import { reencode } from "../../services/audio/providers/reformat.js";
import { FAKE_OPENAI_KEY, startFakeProviders } from "../support/fake-providers.js";
import { concatFloat32 } from "../support/samples.js";
import { referenceTruePeak } from "../support/true-peak-reference.js";
import { decode, ffmpegLoudness, floatWav } from "./measure.js";

/** A deterministic pseudo-random sequence in [0, 1). */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const tone = (rate: number, seconds: number, amp: number, hz = 997) => Float32Array.from({ length: Math.round(rate * seconds) }, (_, i) => amp * Math.sin((2 * Math.PI * hz * i) / rate));

function noise(rate: number, seconds: number, amp: number, seed = 1): Float32Array {
  const r = random(seed);
  return Float32Array.from({ length: Math.round(rate * seconds) }, () => amp * (2 * r() - 1));
}

/** `x` through a windowed-sinc low-pass at `cutoff` × the sample rate (MP3 encoders and TTS voices leave no more). */
function lowPass(x: Float32Array, cutoff: number, taps = 63): Float32Array {
  const h = Array.from({ length: taps }, (_, j) => {
    const m = j - (taps - 1) / 2;
    const sinc = m === 0 ? 2 * cutoff : Math.sin(2 * Math.PI * cutoff * m) / (Math.PI * m);
    return sinc * (0.54 - 0.46 * Math.cos((2 * Math.PI * j) / (taps - 1)));
  });
  return Float32Array.from(x, (_, i) => {
    let acc = 0;
    for (let j = 0; j < taps; j++) acc += h[j] * (x[i - j] ?? 0);
    return acc;
  });
}

function expectLike(what: string, ours: Measurement, ffmpeg: { I: number; TP: number }): void {
  // ffmpeg prints -70.0 LUFS when no block passes the absolute gate; ours is -Infinity.
  if (ffmpeg.I <= -70) expect(ours.lufs, `${what}: integrated loudness`).to.equal(-Infinity);
  // ffmpeg prints one decimal: its figure is ±0.05 of its own.
  else expect(ours.lufs, `${what}: integrated loudness vs ffmpeg ${ffmpeg.I}`).to.be.closeTo(ffmpeg.I, 0.2);
  if (ffmpeg.TP === -Infinity) expect(ours.truePeak, `${what}: true peak`).to.equal(-Infinity);
  else expect(ours.truePeak, `${what}: true peak vs ffmpeg ${ffmpeg.TP}`).to.be.closeTo(ffmpeg.TP, 0.5);
}

describe("loudness meter (libebur128 in WebAssembly)", function () {
  this.timeout(120_000);
  // eSpeak speech as the local engine publishes it (22,050 Hz), and as a cloud provider sends it (24 kHz, 48 kbps).
  let engine: SpeechEngine;
  let speechMp3: Buffer;
  let providerMp3: Buffer;
  before(async () => {
    engine = await createLocalEngine({ threads: 1, native: "never" });
    speechMp3 = await engine.synthesize({
      text: "The city council approved the new budget on Tuesday after a debate that lasted well into the night. Critics argued that the money should go to schools first, while supporters pointed to the state of the roads.",
      voice: "alloy",
      lang: "en-US",
    });
    providerMp3 = await reencode(speechMp3, { sampleRate: 24000, channels: 1, bitrate: 48 });
  });
  after(async () => engine?.close());

  it("agrees with ffmpeg's ebur128 filter within 0.2 LU and 0.5 dB true peak", async () => {
    const speech = await decode(speechMp3);
    const provider = await decode(providerMp3);
    const signals: [string, Float32Array, number][] = [
      ["speech, 22,050 Hz", speech.samples, speech.sampleRate],
      ["speech, 24 kHz", provider.samples, provider.sampleRate],
      ["speech 12 dB quieter", provider.samples.map((v) => v / 4), provider.sampleRate],
      ["noise under 0.4 fs, 48 kHz", lowPass(noise(48000, 5, 0.5, 2), 0.4), 48000],
      ["noise under 0.4 fs, 24 kHz", lowPass(noise(24000, 5, 0.5, 3), 0.4), 24000],
      ["noise under 0.45 fs, 24 kHz", lowPass(noise(24000, 5, 0.5, 4), 0.45), 24000],
      ["noise under 0.4 fs, 22,050 Hz", lowPass(noise(22050, 5, 0.5, 4), 0.4), 22050],
      ["1 kHz sine at -20 dBFS", tone(48000, 5, 0.1), 48000],
      ["digital silence", new Float32Array(24000 * 3), 24000],
      ["300 ms tone (shorter than a gating block)", tone(24000, 0.3, 0.125, 440), 24000],
      ["tone, then 10 s of silence and a quiet tone (relative gate)", concatFloat32(tone(24000, 3, 0.3), new Float32Array(240000), tone(24000, 3, 0.01)), 24000],
    ];
    const results = signals.map(([what, samples, rate]) => {
      const ours = measure(samples, rate);
      const ffmpeg = ffmpegLoudness(floatWav(samples, rate), "wav");
      console.log(`      ${what}: ${ours.lufs.toFixed(2)} LUFS / ${ours.truePeak.toFixed(2)} dBTP; ffmpeg ${ffmpeg.I} / ${ffmpeg.TP}`);
      return { what, ours, ffmpeg };
    });
    for (const { what, ours, ffmpeg } of results) expectLike(what, ours, ffmpeg);
    // The MP3s themselves, decoded by mpg123 here and by ffmpeg's own decoder there.
    for (const [what, mp3] of [["speech MP3, 22,050 Hz", speechMp3], ["provider-like MP3, 24 kHz", providerMp3]] as const) {
      const ours = await measureMp3(mp3);
      const ffmpeg = ffmpegLoudness(mp3);
      console.log(`      ${what}: ${ours.lufs.toFixed(2)} LUFS / ${ours.truePeak.toFixed(2)} dBTP; ffmpeg ${ffmpeg.I} / ${ffmpeg.TP}`);
      expectLike(what, ours, ffmpeg);
    }
  });

  it("reads the true peak of full-band noise up to 1.5 dB under ffmpeg's, as BS.1770's 4x oversampling does", () => {
    // libebur128 oversamples 4x (2x from 96 kHz) through 49 taps, which attenuate content near the
    // Nyquist frequency; ffmpeg resamples to 192 kHz. Real speech MP3s have no such content (the
    // figures above agree); planGain keeps a margin for the difference (PEAK_MARGIN_DB).
    for (const rate of [24000, 44100, 48000, 96000]) {
      const samples = noise(rate, 5, 0.3, rate);
      const ours = measure(samples, rate);
      const ffmpeg = ffmpegLoudness(floatWav(samples, rate), "wav");
      console.log(`      white noise, ${rate} Hz: ${ours.lufs.toFixed(2)} LUFS / ${ours.truePeak.toFixed(2)} dBTP; ffmpeg ${ffmpeg.I} / ${ffmpeg.TP}`);
      expect(ours.lufs).to.be.closeTo(ffmpeg.I, 0.2);
      expect(ours.truePeak).to.be.within(ffmpeg.TP - 1.5, ffmpeg.TP + 0.1);
    }
    // A sine at a quarter of the rate, 0.9 full scale: its peak is -0.92 dBTP exactly (ffmpeg reads -0.4).
    expect(measure(tone(24000, 3, 0.9, 5993), 24000).truePeak).to.be.closeTo(20 * Math.log10(0.9), 0.05);
  });

  it("finds the true peak the library's interpolator finds over every sample, though it runs it over few", async () => {
    const { samples: speech, sampleRate } = await decode(providerMp3);
    // A block whose samples peak lower than an earlier block's but whose peak between samples is
    // higher (a quarter-rate sine at 45°: samples at 0.7, peak 0.99): a meter that skipped blocks
    // by their sample peaks alone would miss it.
    const slow = tone(24000, 1, 0.8, 50);
    const between = Float32Array.from({ length: 24000 }, (_, i) => 0.99 * Math.sin((Math.PI * i) / 2 + Math.PI / 4));
    const cases: [string, Float32Array, number][] = [
      ["speech", speech, sampleRate],
      ["speech 12 dB quieter, then the speech", concatFloat32(speech.map((v) => v / 4), speech), sampleRate],
      ["peak between samples after a higher sample peak", concatFloat32(slow, new Float32Array(5000), between, slow), 24000],
      ["silence, then noise", concatFloat32(new Float32Array(7), noise(48000, 2, 0.5, 5)), 48000],
      ["noise at 96 kHz (2x)", noise(96000, 1, 0.5, 6), 96000],
    ];
    for (const [what, samples, rate] of cases) {
      const reference = referenceTruePeak(samples, rate);
      // In one piece, and in pieces shorter than the interpolator's delay line and of odd sizes.
      for (const sizes of [[samples.length], [5, 3, 1000, 11, 257]]) {
        const meter = new LoudnessMeter(rate);
        for (let at = 0, k = 0; at < samples.length; k++) {
          const n = sizes[k % sizes.length];
          meter.add(samples.subarray(at, at + n));
          at += n;
        }
        const ours = meter.measurement().truePeak;
        meter.release();
        expect(ours, `${what}, pieces of ${sizes.join("/")}`).to.be.closeTo(20 * Math.log10(reference), 1e-5);
      }
    }
    expect(referenceTruePeak(between, 24000)).to.be.above(0.98);
  });

  it("gives the same figures fed in pieces of any size as in one piece", async () => {
    const { samples, sampleRate } = await decode(providerMp3);
    const whole = measure(samples, sampleRate);
    const r = random(3);
    for (const sizes of [[1, 7, 64], [4095, 4096, 4097], [2400], [100_000, 1]]) {
      const meter = new LoudnessMeter(sampleRate);
      for (let at = 0, k = 0; at < samples.length; k++) {
        const n = sizes[k % sizes.length] + (sizes.length > 1 ? Math.floor(r() * 3) : 0);
        meter.add(samples.subarray(at, at + n));
        at += n;
      }
      const pieces = meter.finish().measurement();
      meter.release();
      expect(pieces.lufs).to.be.closeTo(whole.lufs, 1e-9);
      expect(pieces.truePeak).to.be.closeTo(whole.truePeak, 1e-9);
      expect(pieces.seconds).to.equal(whole.seconds);
    }
  });

  it("measures an MP3 fed as a download arrives the same as the whole file", async () => {
    const whole = await measureMp3(providerMp3);
    // `bytes` pushed in pieces of `piece`; now and then the event loop turns, as between network
    // reads: decoding starts and takes the pieces as they come.
    const streamed = async (bytes: Uint8Array, piece: number) => {
      const stream = new Mp3Meter();
      for (let at = 0, k = 0; at < bytes.length; at += piece, k++) {
        stream.push(bytes.subarray(at, at + piece));
        if (k % 50 === 0) await new Promise((resolve) => setImmediate(resolve));
      }
      expect(stream.started).to.equal(true);
      const { meter } = await stream.end();
      const m = meter.measurement();
      meter.release();
      expect(m.lufs).to.be.closeTo(whole.lufs, 1e-9);
      expect(m.truePeak).to.be.closeTo(whole.truePeak, 1e-9);
      expect(m.seconds).to.equal(whole.seconds);
      return m;
    };
    for (const piece of [1, 417, 16_384]) await streamed(providerMp3, piece);
    // A body that came whole before its decoder started is looked up by content: the same bytes
    // twice at once are decoded once.
    const [a, b] = await Promise.all(
      [0, 1].map(() => {
        const stream = new Mp3Meter();
        const body = applyGainSteps(providerMp3, 1).mp3;
        stream.push(body);
        return finishMeter(stream, body);
      }),
    );
    expect(b).to.equal(a);
    expect(a.measurement().lufs).to.be.closeTo(whole.lufs + 1.5, 0.1);
    a.release();
    b.release();
    // A player skips an ID3v2 tag (written as ours are, in pieces that split it) and the encoder's
    // Info frame: so does the meter.
    const tagged = tagMp3(joinMp3([providerMp3]), { title: "Tagged ".repeat(400), artist: "Publisher", album: "p1", lang: "en-US", articleId: "a1" });
    expect(tagged.subarray(0, 3).toString()).to.equal("ID3");
    const m = await streamed(tagged, 999);
    expect(m.seconds, "every audio frame, not the Info frame").to.be.closeTo(mp3Duration(providerMp3), 1e-9);
    // What is not MP3 has no meter.
    const junk = new Mp3Meter();
    junk.push(Buffer.from(JSON.stringify({ error: "not audio" })));
    let failed: unknown;
    await junk.end().catch((e) => (failed = e));
    expect(String(failed)).to.match(/no audio/);
  });

  it("gates chunks together as one programme: within 0.1 LU of measuring the joined audio", async () => {
    const { samples, sampleRate } = await decode(providerMp3);
    const quiet = samples.map((v) => v / 6);
    // Loud speech, a quiet stretch, loud speech again, cut at arbitrary points (mid-block).
    const joined = concatFloat32(samples, quiet, samples);
    const whole = measure(joined, sampleRate);
    // Chunks as long as real requests give (seconds to minutes), cut anywhere, even mid-block.
    for (const cuts of [[joined.length / 3], [100_001, 250_000, 377_777, 500_000], Array.from({ length: 5 }, (_, i) => Math.round(((i + 1) * joined.length) / 6))]) {
      const bounds = [0, ...cuts.map(Math.round), joined.length];
      const meters = bounds.slice(1).map((end, i) => {
        const m = new LoudnessMeter(sampleRate);
        m.add(joined.subarray(bounds[i], end));
        return m.finish();
      });
      const together = LoudnessMeter.together(meters);
      meters.forEach((m) => m.release());
      expect(together.lufs, `${bounds.length - 1} chunks`).to.be.closeTo(whole.lufs, 0.1);
      expect(together.truePeak).to.be.closeTo(whole.truePeak, 0.01);
      expect(together.seconds).to.be.closeTo(whole.seconds, 1e-9);
    }
    // Only the blocks that would straddle a cut are missing: very short chunks (~1.5 s) lose a
    // fifth of their blocks and may land ~0.25 LU off; a provider's chunks are far longer.
    expect(LoudnessMeter.together([])).to.deep.equal({ lufs: -Infinity, truePeak: -Infinity, seconds: 0 });
  });

  it("frees every meter and decoder: thousands of chunks leave the module's memory as it was", async () => {
    const rate = 24000;
    const second = noise(rate, 0.5, 0.2, 11);
    const round = (n: number) => {
      const meters: LoudnessMeter[] = [];
      for (let i = 0; i < n; i++) {
        const m = new LoudnessMeter(rate);
        m.add(second);
        m.add(second.subarray(0, 2500));
        meters.push(m.finish());
      }
      // Shared as a cache and a render share them: one more reference each, given back.
      for (const m of meters) m.retain();
      LoudnessMeter.together(meters);
      for (const m of meters) m.release();
      for (const m of meters) m.release();
    };
    const before = meterStats().live;
    round(200);
    const grown = meterStats().memoryBytes;
    for (let k = 0; k < 15; k++) round(200);
    expect(meterStats().live).to.equal(before);
    expect(meterStats().memoryBytes, "module memory after 3,000 more meters").to.equal(grown);

    // Streams: finished, aborted before and after decoding started. They share the module with
    // the meters, and a stream's buffers may first need more memory than meters alone did: the
    // first 30 set the level, the next 300 must not raise it.
    const decodersBefore = liveDecoders();
    const streams = async (n: number) => {
      for (let i = 0; i < n; i++) {
        const s = new Mp3Meter();
        if (i % 3 === 0) s.abort();
        s.push(providerMp3.subarray(0, 20_000));
        if (i % 3 === 1) {
          await new Promise((r) => setImmediate(r));
          s.abort();
        }
        if (i % 3 === 2) (await s.end()).meter.release();
      }
    };
    await streams(30);
    const withStreams = meterStats().memoryBytes;
    await streams(300);
    round(200);
    await new Promise((r) => setTimeout(r, 50));
    expect(liveDecoders()).to.equal(decodersBefore);
    expect(meterStats().live).to.equal(before);
    expect(meterStats().memoryBytes, "module memory after 300 more streams").to.equal(withStreams);
  });

  it("renders the same file on the provider path whether the bodies stream in or come at once", async () => {
    // Chunks at different levels (lossless gain steps), so that how they are gated together matters.
    const variants = [0, -2, 1, -4].map((k) => applyGainSteps(providerMp3, k).mp3);
    const audio = (text: string) => variants[text.length % variants.length];
    const text = Array.from({ length: 6 }, (_, p) => `Update ${p + 1}. The council met again on day ${p + 1}. It approved the budget and ${"talked at length ".repeat(p + 1)}about the roads.`).join("\n\n");
    const files: Buffer[] = [];
    for (const streamMs of [0, 300]) {
      const fake = await startFakeProviders({ audio, streamMs: () => streamMs, streamPieceBytes: 2000 });
      try {
        const speech = createSpeechRouter({ providers: { openai: createOpenAiProvider({ apiKey: FAKE_OPENAI_KEY, baseUrl: fake.openaiBaseUrl }), local: localProvider(engine) } });
        const live = meterStats().live;
        const r = await renderWithProviders({ title: "Council approves the budget", text, lang: "en-US", voice: "alloy" }, speech, { maxChunkChars: 120, loudness: { lufs: -23, truePeak: -1 } });
        expect(r.chunks).to.be.greaterThan(4);
        // Lossless steps reach -23 LUFS under the ceiling (a re-encode would only take longer).
        expect(r.loudness).to.equal("steps");
        files.push(r.full);
        // The render gave back its meters; what is left is the measurement cache's.
        await new Promise((resolve) => setImmediate(resolve));
        expect(meterStats().live - live).to.be.at.most(r.chunks);
      } finally {
        await fake.close();
      }
    }
    expect(files[1].equals(files[0])).to.equal(true);
  });

  it("keeps a finished meter as bytes that give the same figures, alone and gated with others", async () => {
    const { samples, sampleRate } = await decode(providerMp3);
    const parts = [samples, samples.map((v) => v / 3)].map((x) => {
      const m = new LoudnessMeter(sampleRate);
      m.add(x);
      return m.finish();
    });
    const copy = LoudnessMeter.fromBytes(parts[1].toBytes());
    expect(copy.measurement()).to.deep.equal(parts[1].measurement());
    expect(LoudnessMeter.together([parts[0], copy])).to.deep.equal(LoudnessMeter.together(parts));
    // About 8 bytes per 100 ms of audio.
    expect(parts[1].toBytes().length).to.be.within(70 * copy.seconds, 90 * copy.seconds + 100);
    for (const m of [...parts, copy]) m.release();
    expect(() => LoudnessMeter.fromBytes(Buffer.from("not a meter at all, no"))).to.throw(/not a stored meter/);
    expect(() => LoudnessMeter.fromBytes(Buffer.alloc(80))).to.throw(/not a stored meter/);
    const unfinished = new LoudnessMeter(sampleRate);
    expect(() => unfinished.toBytes()).to.throw(/before finish/);
    unfinished.release();
  });

  it("keeps the meters of measured chunks on disk: after a restart, cached chunks are not decoded again", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "meters-"));
    const disk = await openDiskCache({ dir, maxBytes: 1 << 20, ext: ".meter" });
    const calls = { gets: 0, hits: 0, puts: 0 };
    // The store, counting what is asked of it.
    const counted: typeof disk = {
      size: disk.size,
      keys: disk.keys,
      get: async (key) => {
        calls.gets++;
        const hit = await disk.get(key);
        if (hit) calls.hits++;
        return hit;
      },
      put: async (key, bytes) => {
        calls.puts++;
        return disk.put(key, bytes);
      },
    };
    try {
      expect(await keepMetersIn(counted)).to.equal(0);
      const body = applyGainSteps(providerMp3, -1).mp3;
      const first = await meterMp3(body);
      const measured = first.measurement();
      first.release();
      await new Promise((r) => setTimeout(r, 50));
      expect(calls).to.deep.equal({ gets: 1, hits: 0, puts: 1 });
      // A restart: nothing in memory; the store answers and nothing is measured (or stored) again.
      forgetMeasurements();
      const again = await meterMp3(body);
      expect(again.measurement()).to.deep.equal(measured);
      again.release();
      expect(calls).to.deep.equal({ gets: 2, hits: 1, puts: 1 });
      // A download that came whole is found the same way.
      forgetMeasurements();
      const stream = new Mp3Meter();
      stream.push(body);
      const streamed = await finishMeter(stream, body);
      expect(streamed.measurement()).to.deep.equal(measured);
      streamed.release();
      expect(calls).to.deep.equal({ gets: 3, hits: 2, puts: 1 });
      expect(liveDecoders()).to.equal(0);
      // At start the store's meters are loaded into memory: the render then asks the store nothing.
      forgetMeasurements();
      expect(await keepMetersIn(counted)).to.equal(1);
      expect(calls).to.deep.equal({ gets: 4, hits: 3, puts: 1 });
      const warm = await meterMp3(body);
      expect(warm.measurement()).to.deep.equal(measured);
      warm.release();
      expect(calls).to.deep.equal({ gets: 4, hits: 3, puts: 1 });
      // A damaged file (the store finds bytes, they are no meter) is measured again, and replaced.
      forgetMeasurements();
      const [sub] = await readdir(dir);
      const [file] = await readdir(path.join(dir, sub));
      await writeFile(path.join(dir, sub, file), "damaged");
      const remeasured = await meterMp3(body);
      expect(remeasured.measurement()).to.deep.equal(measured);
      remeasured.release();
      expect(calls).to.deep.equal({ gets: 5, hits: 4, puts: 2 });
    } finally {
      await keepMetersIn(undefined);
      forgetMeasurements();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("keeps one reference per holder: the cache's and each caller's", async () => {
    const live = meterStats().live;
    const a = await meterMp3(providerMp3);
    const b = await meterMp3(providerMp3);
    // Found by content: the same meter, not decoded twice.
    expect(b).to.equal(a);
    a.release();
    b.release();
    expect(meterStats().live).to.be.at.most(live + 1);
    expect(b.measurement().lufs).to.be.lessThan(0);
    const m = new LoudnessMeter(24000);
    m.release();
    expect(() => m.measurement()).to.throw(/after its last release/);
    expect(() => m.release()).to.throw(/after its last release/);
  });
});
