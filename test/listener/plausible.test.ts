// The small rules behind plausible statistics: the bound's playback speed is
// the player's own, a beacon counts as one listener, per-address limits see
// an IPv6 client as its /64, and the key caches stay bounded.
import { expect } from "chai";
import { readFile } from "node:fs/promises";
import { clientNetwork } from "../../gateway/client-network.js";
import { oneListener } from "../../gateway/routes/player.js";
import { ListeningEventType } from "../../gen/articles/v1/listener_pb.js";
import { createExpiringLru } from "../../lib/expiring-lru.js";
import { MAX_PLAYBACK_SPEED } from "../../services/articles/stats/plausible.js";

describe("plausible statistics: the rules", () => {
  it("bounds listening time with the fastest speed the player offers", async () => {
    const js = await readFile(new URL("../../gateway/player/player.js", import.meta.url), "utf8");
    const speeds = /const SPEEDS = \[([^\]]+)\]/.exec(js)![1].split(",").map(Number);
    expect(Math.max(...speeds)).to.equal(MAX_PLAYBACK_SPEED);
  });

  it("counts a beacon as one listener: each kind of event once per article, at most 600 s, never more events than sent", () => {
    const sent = [
      { type: "impression", articleId: "a" },
      { type: "play", articleId: "a", seconds: 300 },
      ...Array.from({ length: 20 }, () => ({ type: "complete", articleId: "a", seconds: 600 })),
      { type: "progress", articleId: "a", percent: 100 },
      { type: "progress", articleId: "a", percent: 25 },
      { type: "progress", articleId: "a", percent: 25 },
      { type: "play", articleId: "a", percent: 25 },
      { type: "listen", articleId: "b", seconds: 12.5 },
      { type: "listen", articleId: "b", seconds: 1 },
      { type: "play", articleId: "c" },
    ];
    const out = oneListener(sent);
    expect(out.length).to.be.at.most(sent.length);
    const of = (id: string, type: ListeningEventType) => out.filter((e) => e.articleId === id && e.type === type);
    expect(of("a", ListeningEventType.IMPRESSION)).to.have.length(1);
    expect(of("a", ListeningEventType.PLAY)).to.have.length(1);
    expect(of("a", ListeningEventType.COMPLETE).length + of("a", ListeningEventType.PROGRESS).filter((e) => e.percent === 100).length).to.equal(1);
    expect(of("a", ListeningEventType.PROGRESS).filter((e) => e.percent === 25)).to.have.length(1);
    const seconds = (id: string) => out.filter((e) => e.articleId === id).reduce((s, e) => s + e.seconds, 0);
    expect([seconds("a"), seconds("b"), seconds("c")]).to.deep.equal([600, 13.5, 0]);
    expect(of("b", ListeningEventType.LISTEN)).to.have.length(1);
  });

  it("limits an IPv6 client by its /64 and an IPv4 client by its address", () => {
    expect(clientNetwork("2001:db8:1:2::1")).to.equal(clientNetwork("2001:0DB8:1:2:ffff:ffff:ffff:fffe"));
    expect(clientNetwork("2001:db8:1:2::1")).to.not.equal(clientNetwork("2001:db8:1:3::1"));
    expect(clientNetwork("::ffff:192.0.2.7")).to.equal("192.0.2.7");
    expect(clientNetwork("192.0.2.7")).to.not.equal(clientNetwork("192.0.2.8"));
  });

  it("keeps at most max entries, the least recently used leaving first, none past its time", () => {
    let now = 0;
    const lru = createExpiringLru<true>({ max: 3, ttlMs: 1_000, now: () => now });
    for (const k of ["a", "b", "c"]) lru.set(k, true);
    lru.get("a");
    lru.set("d", true);
    expect(["a", "b", "c", "d"].map((k) => lru.get(k) ?? false)).to.deep.equal([true, false, true, true]);
    for (let i = 0; i < 10_000; i++) lru.set(`k${i}`, true);
    expect(lru.size).to.equal(3);
    now = 1_000;
    expect(lru.get("k9999")).to.equal(undefined);
  });
});
