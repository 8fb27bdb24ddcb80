import { expect } from "chai";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigError } from "../../lib/config.js";
import { audioDrainMsOf } from "../../services/audio/drain.js";
import { startEmbedded } from "../../launch/embedded.js";

describe("the audio worker's drain after SIGTERM (AUDIO_DRAIN_MS)", () => {
  it("defaults to the grace period less 5 s, and never below a second", () => {
    expect(audioDrainMsOf({ SHUTDOWN_GRACE_MS: 25_000 })).to.equal(20_000);
    expect(audioDrainMsOf({ SHUTDOWN_GRACE_MS: 3_000 })).to.equal(1_000);
  });

  it("takes a drain that leaves at least a second of the grace period, and refuses one that does not, naming the variable", () => {
    expect(audioDrainMsOf({ SHUTDOWN_GRACE_MS: 25_000, AUDIO_DRAIN_MS: 24_000 })).to.equal(24_000);
    expect(() => audioDrainMsOf({ SHUTDOWN_GRACE_MS: 25_000, AUDIO_DRAIN_MS: 24_500 })).to.throw(ConfigError, /AUDIO_DRAIN_MS/);
  });

  it("stops the embedded default's start-up before it creates anything", async () => {
    const dir = mkdtempSync(join(tmpdir(), "audio-drain-"));
    try {
      const dataDir = join(dir, "data");
      const err = await startEmbedded({ DATA_DIR: dataDir, PORT: "0", SHUTDOWN_GRACE_MS: "5000", AUDIO_DRAIN_MS: "4500" }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).to.be.instanceOf(ConfigError);
      expect((err as Error).message).to.include("AUDIO_DRAIN_MS");
      expect(readdirSync(dir), "no data directory made").to.deep.equal([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
