// Podcast downloads as the gateway counts them (gateway/podcast-downloads.ts): the IAB
// guidelines' listener, range and bot rules, and a salt that does not outlive its day.
import { expect } from "chai";
import { bytesToCount, createDownloadCounter, type EnclosureRequest } from "../../gateway/podcast-downloads.js";

const APP = "AppleCoreMedia/1.0.0.21E236 (iPhone; U; CPU OS 17_4 like Mac OS X; en_us)";
const SIZE = 1_200_000; // 10 minutes of audio
const req = (over: Partial<EnclosureRequest> = {}): EnclosureRequest => ({ address: "203.0.113.7", userAgent: APP, file: "a1/1/full.mp3", size: SIZE, durationSeconds: 600, ...over });

describe("podcast downloads", () => {
  it("needs a minute of audio, or the whole of a shorter file", () => {
    expect(bytesToCount(SIZE, 600)).to.equal(120_000);
    expect(bytesToCount(SIZE, 45)).to.equal(SIZE);
    expect(bytesToCount(SIZE)).to.equal(SIZE);
  });

  it("counts a listener once per episode and day, combining the ranges it fetched", () => {
    let now = Date.parse("2026-12-06T10:00:00Z");
    const c = createDownloadCounter({ now: () => now });
    expect(c.observe(req({ range: { start: 0, end: 1 } }))).to.equal(false);
    expect(c.observe(req({ range: { start: 60_000, end: 100_000 } }))).to.equal(false);
    // Together with the probe and the earlier range: 2 + 40,001 + 60,000 bytes (overlaps counted once), still short of 120,000.
    expect(c.observe(req({ range: { start: 0, end: 60_000 } }))).to.equal(false);
    expect(c.observe(req({ range: { start: 100_001, end: 120_000 } }))).to.equal(true);
    expect(c.observe(req())).to.equal(false);
    expect(c.observe(req({ file: "a2/1/full.mp3" }))).to.equal(true);
    expect(c.observe(req({ userAgent: "Overcast/3.0 (+http://overcast.fm/; iOS podcast app)" }))).to.equal(true);
    expect(c.observe(req({ address: "198.51.100.1" }))).to.equal(true);
    // Terse podcast apps are listeners, not bots.
    for (const ua of ["Pocket Casts", "Podcasts/1.0", "AntennaPod/3.2.0"]) expect(c.observe(req({ userAgent: ua })), ua).to.equal(true);
    now = Date.parse("2026-12-07T00:00:01Z");
    expect(c.observe(req())).to.equal(true);
  });

  it("never counts bots, crawlers or requests without a User-Agent", () => {
    const c = createDownloadCounter();
    for (const ua of ["", "  ", "Googlebot/2.1 (+http://www.google.com/bot.html)", "curl/8.5.0", "python-requests/2.31.0", "PocketCasts/1.0 (Pocket Casts Feed Parser; +http://pocketcasts.com/)", "Mozilla/5.0 (compatible; AhrefsBot/7.0; +http://ahrefs.com/robot/)"]) {
      expect(c.observe(req({ userAgent: ua })), ua).to.equal(false);
    }
    expect(c.size).to.equal(0);
  });

  it("remembers a bounded number of listeners a day, the oldest forgotten first", () => {
    const c = createDownloadCounter({ maxListeners: 3 });
    for (let i = 0; i < 10; i++) c.observe(req({ address: `192.0.2.${i}`, range: { start: 0, end: 9 } }));
    expect(c.size).to.equal(3);
  });
});
