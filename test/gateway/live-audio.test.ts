// GET /player/v1/live/{articleId}/{revision}.mp3: the parts of audio made on demand, streamed in
// order as the worker stores them, before the last exists; the end marker ends the stream; an
// article with nothing made is a 404 once the wait for its first part is up.
import { expect } from "chai";
import { audioKeys } from "../../lib/revision-files.js";
import { liveAnnouncements } from "../../gateway/routes/live-audio.js";
import { startHarness, type Harness } from "./support.js";

describe("gateway: live audio of audio made on demand", () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ liveAudio: { pollMs: 20, firstWaitMs: 500, idleMs: 5_000, perAddress: 2 } });
  });
  after(async () => h?.close());

  const part = (n: number) => Buffer.alloc(1000 + n, 0x40 + n);

  it("streams the parts in order as they are stored, starting before the last exists, and ends at the marker", async () => {
    const keys = audioKeys("live-one", 3);
    await h.blobs.put(keys.live(0), part(0), "audio/mpeg");
    const res = await fetch(h.url("/player/v1/live/live-one/3.mp3"));
    expect(res.status).to.equal(200);
    expect(res.headers.get("content-type")).to.equal("audio/mpeg");
    expect(res.headers.get("cache-control")).to.equal("no-store");
    expect(res.headers.get("access-control-allow-origin")).to.equal("*");
    const reader = res.body!.getReader();
    const got: Buffer[] = [];
    const first = await reader.read();
    got.push(Buffer.from(first.value!));
    // Only now are the rest made.
    await h.blobs.put(keys.live(1), part(1), "audio/mpeg");
    await h.blobs.put(keys.live(2), part(2), "audio/mpeg");
    await h.blobs.put(keys.liveEnd, Buffer.alloc(0), "application/octet-stream");
    for (let r = await reader.read(); !r.done; r = await reader.read()) got.push(Buffer.from(r.value));
    expect(Buffer.concat(got).equals(Buffer.concat([part(0), part(1), part(2)]))).to.equal(true);
  });

  it("answers 404 when nothing of the audio was made within the wait, and 404 for a malformed name", async () => {
    expect((await fetch(h.url("/player/v1/live/never-made/1.mp3"))).status).to.equal(404);
    expect((await fetch(h.url("/player/v1/live/never-made/one.mp3"))).status).to.equal(404);
    expect((await fetch(h.url("/player/v1/live/..%2Fx/1.mp3"))).status).to.equal(404);
  });

  it("holds a client address to its share of open streams (429 beyond it)", async () => {
    const keys = audioKeys("live-many", 1);
    await h.blobs.put(keys.live(0), part(0), "audio/mpeg");
    const open = await Promise.all([1, 2].map(() => fetch(h.url("/player/v1/live/live-many/1.mp3"))));
    expect(open.map((r) => r.status)).to.deep.equal([200, 200]);
    const third = await fetch(h.url("/player/v1/live/live-many/1.mp3"));
    expect(third.status).to.equal(429);
    await h.blobs.put(keys.liveEnd, Buffer.alloc(0), "application/octet-stream");
    await Promise.all(open.map((r) => r.arrayBuffer()));
  });
});

describe("gateway: live audio waits only for streams its lookups handed out", function () {
  // The wait for a first part is far longer than this test may take: a 404 must come without it.
  this.timeout(20_000);
  let h: Harness;
  const announced = liveAnnouncements();
  before(async () => {
    h = await startHarness({ liveAudio: { pollMs: 20, firstWaitMs: 120_000, idleMs: 5_000, announced } });
  });
  after(async () => h?.close());

  it("answers 404 at once for a stream no lookup handed out, and streams one whose first part is there", async () => {
    expect((await fetch(h.url("/player/v1/live/made-up/1.mp3"))).status).to.equal(404);
    const keys = audioKeys("other-replica", 2);
    await h.blobs.put(keys.live(0), Buffer.alloc(500, 1), "audio/mpeg");
    await h.blobs.put(keys.liveEnd, Buffer.alloc(0), "application/octet-stream");
    const res = await fetch(h.url("/player/v1/live/other-replica/2.mp3"));
    expect(res.status).to.equal(200);
    expect((await res.arrayBuffer()).byteLength).to.equal(500);
  });

  it("waits for the first part of a stream a lookup handed out", async () => {
    announced.announce("on-demand", 4);
    const keys = audioKeys("on-demand", 4);
    const answer = fetch(h.url("/player/v1/live/on-demand/4.mp3"));
    await new Promise((r) => setTimeout(r, 300));
    await h.blobs.put(keys.live(0), Buffer.alloc(700, 2), "audio/mpeg");
    await h.blobs.put(keys.liveEnd, Buffer.alloc(0), "application/octet-stream");
    const res = await answer;
    expect(res.status).to.equal(200);
    expect((await res.arrayBuffer()).byteLength).to.equal(700);
  });
});
