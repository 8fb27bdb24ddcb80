// GET /api/voices and its samples: every voice with the engine that speaks it, availability as
// this deployment is configured (a cloud key set or not), and a sample URL that answers an MP3.
// On the embedded default: the gateway asks its audio service (ListVoices, VoiceSample over RPC).
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect } from "chai";
import { VoiceList } from "../../gateway/routes/voices.js";
import { compileSchema } from "../../gateway/schemas.js";
import { buildOpenApi } from "../../gateway/openapi.js";
import { startEmbedded, type Embedded } from "../../launch/embedded.js";
import { VOICE_NAMES } from "../../lib/voices.js";
import { mp3Duration } from "../../services/audio/mp3/index.js";
import { sink } from "../support/sink.js";

const FULL = "voices-full-0123456789";
const READ = "voices-read-0123456789";
const ADMIN = "voices-admin-token-0123456789";

interface Listed {
  name: string;
  langs: string[];
  engine: string;
  neural: boolean;
  available: boolean;
  speaks: Record<string, string>;
  samples: Record<string, string>;
}

describe("GET /api/voices", function () {
  this.timeout(120_000);
  let dataDir: string;
  let sys: Embedded;
  let url: string;
  const get = (p: string, token: string | null = READ) => fetch(p.startsWith("http") ? p : `${url}${p}`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  const list = async (): Promise<Listed[]> => {
    const res = await get("/api/voices");
    expect(res.status).to.equal(200);
    const body = (await res.json()) as { voices: Listed[] };
    expect(compileSchema(VoiceList)(body), "the answer matches its published schema").to.equal(true);
    return body.voices;
  };

  before(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), "voices-"));
    sys = await startEmbedded(
      {
        PORT: "0",
        HOST: "127.0.0.1",
        DATA_DIR: dataDir,
        ADMIN_TOKEN: ADMIN,
        SEED_TOKENS: JSON.stringify([
          { token: FULL, project: "voices", scope: "full" },
          { token: READ, project: "voices", scope: "read" },
        ]),
        // Configured but never called (no sample of an OpenAI voice is asked for): its voices are available.
        OPENAI_API_KEY: "sk-test-not-used",
        AUDIO_ENGINE: process.env.AUDIO_ENGINE,
      },
      sink(),
    );
    url = sys.url;
  });
  after(async () => {
    await sys?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it("lists every voice the API accepts, each with its engine, neural or not, and a sample URL per locale", async () => {
    const voices = await list();
    expect(voices.map((v) => v.name).sort()).to.deep.equal([...VOICE_NAMES].sort());
    const by = new Map(voices.map((v) => [v.name, v]));
    expect(by.get("alloy")).to.include({ engine: "openai", neural: true });
    expect(by.get("de-DE-KatjaNeural")).to.include({ engine: "azure", neural: true });
    for (const v of voices) {
      expect(Object.keys(v.samples).sort(), v.name).to.deep.equal([...v.langs].sort());
      expect(Object.keys(v.speaks).sort(), v.name).to.deep.equal([...v.langs].sort());
    }
    // Kokoro's voices by their accent: the American ones speak en-US, the British ones en-GB (and en-US, as before en-GB was a locale).
    expect(by.get("af_heart")!.langs).to.deep.equal(["en-US"]);
    expect(by.get("bm_george")!.langs).to.deep.equal(["en-GB", "en-US"]);
    expect(by.get("alloy")!.langs).to.not.include("en-GB");
  });

  it("takes an article in en-GB with a British Kokoro voice, and refuses en-GB with a voice that does not speak it", async () => {
    const post = (body: object) => fetch(`${url}/api/articles`, { method: "POST", headers: { authorization: `Bearer ${FULL}`, "content-type": "application/json" }, body: JSON.stringify(body) });
    const ok = await post({ title: "Weather", text: "Rain is expected across the north by the afternoon.", voice: "bf_emma", lang: "en-GB" });
    expect(ok.status, await ok.clone().text()).to.equal(200);
    const wrong = await post({ title: "Weather", text: "Rain again.", voice: "af_heart", lang: "en-GB" });
    expect(wrong.status).to.equal(400);
    expect(await wrong.text()).to.match(/af_heart.*en-GB/);
  });

  it("says which engines are there as configured: the OpenAI key is set, the Azure key is not", async () => {
    const by = new Map((await list()).map((v) => [v.name, v]));
    expect(by.get("alloy")).to.include({ available: true });
    expect(by.get("alloy")!.speaks["en-US"]).to.equal("openai");
    const katja = by.get("de-DE-KatjaNeural")!;
    expect(katja.available).to.equal(false);
    // Read by a local engine instead: Pico where it loaded, else eSpeak.
    expect(["pico", "espeak"]).to.include(katja.speaks["de-DE"]);
  });

  it("a sample URL answers audio/mpeg, rendered once and then kept", async () => {
    const katja = (await list()).find((v) => v.name === "de-DE-KatjaNeural")!;
    // On a busy machine the render can outlast the gateway's wait: the answer is then 504 "please
    // retry", and the retry finds the render that went on meanwhile.
    let first = await get(katja.samples["de-DE"]);
    for (let i = 0; i < 10 && first.status === 504; i++) first = await get(katja.samples["de-DE"]);
    expect(first.status, await first.clone().text().then((t) => t.slice(0, 200))).to.equal(200);
    expect(first.headers.get("content-type")).to.equal("audio/mpeg");
    expect(first.headers.get("x-voice-engine")).to.equal(katja.speaks["de-DE"]);
    const mp3 = Buffer.from(await first.arrayBuffer());
    expect(mp3Duration(mp3)).to.be.within(3, 20);
    // The same bytes again: kept, not rendered anew (the local engines never render twice alike bit for bit).
    const again = Buffer.from(await (await get(katja.samples["de-DE"])).arrayBuffer());
    expect(again.equals(mp3)).to.equal(true);
  });

  it("needs a token, refuses a locale the voice does not speak, and knows no made-up voice", async () => {
    expect((await get("/api/voices", null)).status).to.equal(401);
    expect((await get("/api/voices", "not-a-token-0123456789")).status).to.equal(401);
    expect((await get("/api/voices/de-DE-KatjaNeural/sample?lang=de-DE", null)).status).to.equal(401);
    const wrong = await get("/api/voices/de-DE-KatjaNeural/sample?lang=en-US");
    expect(wrong.status).to.equal(400);
    expect(((await wrong.json()) as { message: string }).message).to.match(/^lang/);
    expect((await get("/api/voices/de-DE-KatjaNeural/sample")).status).to.equal(400);
    expect((await get("/api/voices/nobody/sample?lang=en-US")).status).to.equal(404);
  });

  it("is in the OpenAPI document", () => {
    const doc = buildOpenApi() as { paths: Record<string, unknown> };
    expect(doc.paths).to.have.property("/api/voices");
    expect(doc.paths).to.have.property("/api/voices/{voice}/sample");
  });
});
