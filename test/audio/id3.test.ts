// ID3v2.4 tags on published files: players show title, publisher, language and date, and the
// frame-exact duration (Info header) survives the tag.
import { expect } from "chai";
import { createLocalEngine } from "../../services/audio/engine/index.js";
import { mp3Duration, tagMp3 } from "../../services/audio/mp3/index.js";
import { renderArticle } from "../../services/audio/pipeline.js";

describe("ID3v2.4 tags", function () {
  this.timeout(60_000);
  it("carry title, artist, album, language, date and article id, and keep the exact duration", async () => {
    const { parseBuffer } = await import("music-metadata");
    const engine = await createLocalEngine({ threads: 1 });
    try {
      const r = await renderArticle({ title: "Bäckerei gewinnt Brotpreis", text: "Eine kleine Bäckerei hat gewonnen. Die Schlange reicht bis um die Ecke.", lang: "de-DE", voice: "de-DE-KatjaNeural" }, engine);
      const tagged = tagMp3(r.full, { title: "Bäckerei gewinnt Brotpreis", artist: "Stadtanzeiger", album: "Stadtanzeiger", lang: "de-DE", date: new Date("2026-11-24T10:00:00Z"), articleId: "a-123" });
      expect(tagged.subarray(0, 5)).to.deep.equal(Buffer.from([0x49, 0x44, 0x33, 4, 0]));
      const meta = await parseBuffer(tagged, { mimeType: "audio/mpeg" }, { duration: false });
      expect(meta.format.tagTypes).to.include("ID3v2.4");
      expect(meta.common.title).to.equal("Bäckerei gewinnt Brotpreis");
      expect(meta.common.artist).to.equal("Stadtanzeiger");
      expect(meta.common.album).to.equal("Stadtanzeiger");
      expect(meta.common.language).to.equal("deu");
      expect(meta.common.date).to.equal("2026-11-24");
      const txxx = (meta.native["ID3v2.4"] ?? []).find((t) => t.id === "TXXX:ARTICLE_ID");
      expect(txxx?.value).to.equal("a-123");
      // Duration from the Info header's frame count, as players read it, equals the frames' own.
      expect(meta.format.duration).to.be.closeTo(r.fullDuration, 1e-6);
      expect(mp3Duration(tagged)).to.be.closeTo(r.fullDuration, 1e-6);
      // Tagging twice replaces the tag instead of stacking a second one.
      const again = tagMp3(tagged, { title: "T", artist: "A", album: "A", lang: "en-US", articleId: "b" });
      expect(again.length).to.be.lessThan(tagged.length);
      expect((await parseBuffer(again, { mimeType: "audio/mpeg" })).common.title).to.equal("T");
    } finally {
      await engine.close();
    }
  });
});
