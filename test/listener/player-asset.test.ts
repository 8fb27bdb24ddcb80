// The player script as served: its messages inlined from one source per
// language, every language complete, and the whole under its size budget.
import { expect } from "chai";
import { readdir, readFile } from "node:fs/promises";
import { buildPlayer, loadMessages, playerAsset } from "../../gateway/player/asset.js";

const MESSAGES = new URL("../../gateway/player/messages/", import.meta.url);
/** What a page pays for the player, with read-along and every language (docs/player.md). */
const BUDGET_GZIP_BYTES = 15 * 1024;

describe("player.js as served", () => {
  it(`stays under ${BUDGET_GZIP_BYTES / 1024} KB gzipped, messages and read-along included`, () => {
    const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;
    console.log(`      player.js: ${kb(playerAsset.source.length)}, ${kb(playerAsset.gzip.length)} gzipped (${playerAsset.gzip.length} bytes)`);
    expect(playerAsset.gzip.length).to.be.below(BUDGET_GZIP_BYTES);
    expect(playerAsset.source.toString()).to.not.include("{/*messages*/}");
  });

  it("carries every message file, each with English's keys and placeholders", async () => {
    const files = (await readdir(MESSAGES)).filter((f) => f.endsWith(".json")).sort();
    expect(files).to.include.members(["de.json", "en.json"]);
    const en = JSON.parse(await readFile(new URL("en.json", MESSAGES), "utf8")) as Record<string, string>;
    const holes = (s: string) => (s.match(/\{\w+\}/g) ?? []).sort();
    for (const f of files) {
      const m = JSON.parse(await readFile(new URL(f, MESSAGES), "utf8")) as Record<string, string>;
      expect(Object.keys(m).sort(), f).to.deep.equal(Object.keys(en).sort());
      for (const k of Object.keys(en)) expect(holes(m[k]), `${f} ${k}`).to.deep.equal(holes(en[k]));
    }
    const served = loadMessages();
    expect(Object.keys(served)).to.deep.equal(files.map((f) => f.slice(0, -5)));
    expect(playerAsset.source.toString()).to.include(JSON.stringify(served));
  });

  it("refuses a player source without the messages' placeholder", () => {
    expect(() => buildPlayer("(() => {})();")).to.throw(/placeholder/);
  });
});
