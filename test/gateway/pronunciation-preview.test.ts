// POST /api/pronunciations/preview on the embedded default: what the publisher
// hears is the platform's own rendering of the rule (Synthesize with the rule,
// as an article's rules are rendered), an IPA rule gives an MP3, a bad rule
// gets the API's 400 naming rule.<field>, it needs a full token, and it is
// charged like any synthesis.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect } from "chai";
import { AudioService } from "../../gen/audio/v1/audio_pb.js";
import { AuthService } from "../../gen/auth/v1/auth_pb.js";
import { startEmbedded, type Embedded } from "../../launch/embedded.js";
import { rpcClient } from "../../lib/rpc/client.js";
import { mp3Duration } from "../../services/audio/mp3/index.js";
import { sink } from "../support/sink.js";

const FULL = "preview-full-0123456789";
const READ = "preview-read-0123456789";
const POOR = "preview-poor-0123456789";
const ADMIN = "preview-admin-token-0123456789";
const isMp3 = (b: Buffer) => b.subarray(0, 3).toString("latin1") === "ID3" || (b[0] === 0xff && (b[1] & 0xe0) === 0xe0);

describe("POST /api/pronunciations/preview", function () {
  this.timeout(120_000);
  let dataDir: string;
  let sys: Embedded;
  let audio: ReturnType<typeof rpcClient<typeof AudioService>>;
  let engine = "";
  const post = (token: string | undefined, body: unknown) =>
    fetch(`${sys.url}/api/pronunciations/preview`, { method: "POST", headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), "content-type": "application/json" }, body: JSON.stringify(body) });
  /**
   * What a listener hears, as far as the engine reproduces it: the native engine's bytes; the WASM
   * build's encoder output differs from run to run, so there its length and duration.
   */
  const sound = (mp3: Buffer) => (engine === "local-native" ? mp3.toString("base64") : `${mp3.length} bytes, ${mp3Duration(mp3)} s`);
  /** The sample's MP3 and the duration the answer names. */
  const preview = async (body: unknown) => {
    const res = await post(FULL, body);
    expect(res.status, await res.clone().text().then((t) => t.slice(0, 200))).to.equal(200);
    expect(res.headers.get("content-type")).to.equal("audio/mpeg");
    const mp3 = Buffer.from(await res.arrayBuffer());
    expect(mp3.length).to.equal(Number(res.headers.get("content-length")));
    return { mp3, duration: Number(res.headers.get("x-audio-duration")) };
  };
  /** What a direct Synthesize of the text makes (no rules), as the same project: its MP3 as served from {audio_url}. */
  const synthesize = async (text: string, voice = "alloy", lang = "en-US") => {
    const r = await audio.synthesize({ title: "", text, voice, lang }, { headers: { authorization: `Bearer ${FULL}` } });
    engine = r.provider;
    const res = await fetch(`${sys.url}/audio/${r.full!.key}`);
    expect(res.status).to.equal(200);
    return { mp3: Buffer.from(await res.arrayBuffer()), duration: Math.round(r.full!.duration * 1000) / 1000 };
  };

  before(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), "pron-preview-"));
    sys = await startEmbedded(
      {
        PORT: "0",
        HOST: "127.0.0.1",
        DATA_DIR: dataDir,
        ADMIN_TOKEN: ADMIN,
        SEED_TOKENS: JSON.stringify([
          { token: FULL, project: "preview", scope: "full" },
          { token: READ, project: "preview", scope: "read" },
          { token: POOR, project: "poor", scope: "full" },
        ]),
        AUDIO_ENGINE: process.env.AUDIO_ENGINE,
      },
      sink(),
    );
    audio = rpcClient(AudioService, sys.services.find((s) => s.name === "audio")!.url);
    const admin = rpcClient(AuthService, sys.services.find((s) => s.name === "auth")!.url, { token: ADMIN });
    await admin.updateProjectSettings({ projectId: "poor", patchJson: JSON.stringify({ creditChars: 10 }) });
  });
  after(async () => {
    await sys?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it("a say rule sounds exactly like its respelling written into the sample, and changes no stored rule", async () => {
    const heard = await preview({ rule: { match: "Nguyen", say: "Win" }, text: "Our reporter Nguyen was there.", voice: "alloy", lang: "en-US" });
    const respelled = await synthesize("Our reporter Win was there.");
    const asWritten = await synthesize("Our reporter Nguyen was there.");
    expect(isMp3(heard.mp3)).to.equal(true);
    expect(sound(heard.mp3)).to.equal(sound(respelled.mp3));
    expect(heard.duration).to.equal(respelled.duration);
    expect(sound(heard.mp3), "the rule changes what is heard").not.to.equal(sound(asWritten.mp3));
    // Case-insensitive by default and whole words only, as on an article.
    const cased = await preview({ rule: { match: "nguyen", say: "Win" }, text: "Our reporter Nguyen was there.", voice: "alloy", lang: "en-US" });
    expect(sound(cased.mp3)).to.equal(sound(heard.mp3));
    const rules = await (await fetch(`${sys.url}/api/pronunciations`, { headers: { authorization: `Bearer ${FULL}` } })).json();
    expect(rules.pronunciations).to.deep.equal([]);
  });

  it("a spell rule reads the letters, as the audio service spells them", async () => {
    const heard = await preview({ rule: { match: "BASF", spell: true }, text: "Shares of BASF rose.", voice: "alloy", lang: "en-US" });
    const asWritten = await synthesize("Shares of BASF rose.");
    expect(isMp3(heard.mp3)).to.equal(true);
    expect(heard.duration).to.be.greaterThan(asWritten.duration);
  });

  it("an IPA rule answers a playable MP3, spoken from its phonemes where the engine reads them", async () => {
    const heard = await preview({ rule: { match: "Nguyen", ipa: "ŋwiən", say: "Win" }, text: "Our reporter Nguyen was there.", voice: "alloy", lang: "en-US" });
    expect(isMp3(heard.mp3)).to.equal(true);
    expect(mp3Duration(heard.mp3)).to.be.closeTo(heard.duration, 0.01).and.greaterThan(0.5);
    const respelled = await synthesize("Our reporter Win was there.");
    // The native eSpeak reads phoneme input; the WASM build falls back to the rule's say.
    expect(sound(heard.mp3) === sound(respelled.mp3), `engine ${engine}`).to.equal(engine !== "local-native");
    // Without a say: the phonemes, else the word as written.
    const bare = await preview({ rule: { match: "Nguyen", ipa: "ŋwiən" }, text: "Our reporter Nguyen was there.", voice: "alloy", lang: "en-US" });
    const asWritten = await synthesize("Our reporter Nguyen was there.");
    expect(isMp3(bare.mp3)).to.equal(true);
    expect(sound(bare.mp3), `engine ${engine}`).to.equal(sound(engine === "local-native" ? heard.mp3 : asWritten.mp3));
  });

  it("a German rule without a voice is spoken in German", async () => {
    const heard = await preview({ rule: { match: "BASF", spell: true, lang: "de" } });
    expect(isMp3(heard.mp3)).to.equal(true);
  });

  it("refuses what PUT /api/pronunciations refuses, naming rule.<field>, a rule of another language, and bad sample text or voice", async () => {
    const cases: Array<[unknown, RegExp]> = [
      [{ rule: { match: "Nguyen", say: "Win", spell: true } }, /^rule\.spell: only one of say, spell or ipa/],
      [{ rule: { match: "Nguyen", ipa: "/ŋwiən/" } }, /^rule\.ipa: must be an IPA transcription/],
      [{ rule: { match: "<b>", say: "x" } }, /^rule\.match: /],
      [{ rule: { match: "Nguyen", say: "Win", lang: "de" }, voice: "alloy", lang: "en-US" }, /^rule\.lang: the rule is for 'de' only/],
      [{}, /rule/],
      [{ rule: { match: "Nguyen", say: "Win" }, text: "x".repeat(201) }, /text/],
      [{ rule: { match: "Nguyen", say: "Win" }, text: "   " }, /^text: must not be blank/],
      [{ rule: { match: "Nguyen", say: "Win" }, text: "bad \u0001 text" }, /^text: /],
      [{ rule: { match: "Nguyen", say: "Win" }, voice: "de-DE-KatjaNeural", lang: "en-US" }, /lang/],
      [{ rule: { match: "Nguyen", say: "Win" }, voice: "alloy" }, /lang/],
    ];
    for (const [body, message] of cases) {
      const res = await post(FULL, body);
      const json = await res.json();
      expect(res.status, JSON.stringify(body)).to.equal(400);
      expect(json.result).to.equal("fail");
      expect(json.message, JSON.stringify(body)).to.match(message);
    }
  });

  it("needs a full token: 401 without one, 403 for a read token", async () => {
    expect((await post(undefined, { rule: { match: "Nguyen", say: "Win" } })).status).to.equal(401);
    const ro = await post(READ, { rule: { match: "Nguyen", say: "Win" } });
    expect(ro.status).to.equal(403);
    expect((await ro.json()).message).to.match(/read-only/);
  });

  it("is charged like any synthesis: a project out of credit gets 429", async () => {
    const res = await post(POOR, { rule: { match: "Nguyen", say: "Win" }, text: "Our reporter Nguyen was there." });
    expect(res.status).to.equal(429);
    const json = await res.json();
    expect(json.result).to.equal("fail");
    expect(json.message).to.match(/credit/);
  });
});
