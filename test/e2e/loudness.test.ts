// A project's own loudness target end to end, on the embedded default: set with the admin
// CLI's key=value patch, refused with 400 when out of range (changing nothing), and heard in
// the published files: full and preview, through a cloud provider (the fake OpenAI, answering
// 8 dB too quiet) and on the local engine, measured with ffmpeg's ebur128 filter, while a project
// without the setting in the same run keeps the deployment's -19 LUFS / -1 dBTP.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect } from "chai";
import { AudioService } from "../../gen/audio/v1/audio_pb.js";
import { AuthService } from "../../gen/auth/v1/auth_pb.js";
import { startEmbedded, type Embedded } from "../../launch/embedded.js";
import { rpcClient } from "../../lib/rpc/client.js";
import { createLocalEngine, type SpeechEngine } from "../../services/audio/engine/index.js";
import { patchFromArgs } from "../../services/auth/cli.js";
import { ARTICLES } from "../audio/fixtures/articles.js";
import { expectOnTarget } from "../audio/measure.js";
import { FAKE_OPENAI_KEY, startFakeProviders, type FakeProviders } from "../support/fake-providers.js";
import { api, waitFor } from "../support/http.js";
import { ROOMY_RATE_LIMITS } from "../support/rate-limits.js";
import { sink } from "../support/sink.js";

const ADMIN = "loudness-admin-token-0123456789";
const T = { loud: "loudness-loud-full-0123456789", plain: "loudness-plain-full-0123456789" };
const LOUD = { lufs: -16, truePeak: -1.5 };
const DEPLOYMENT = { lufs: -19, truePeak: -1 };

describe("a project's own loudness target, end to end (embedded default)", function () {
  this.timeout(300_000);
  let dir: string;
  let sys: Embedded;
  let engine: SpeechEngine;
  let fake: FakeProviders;
  let authUrl: string;

  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "loudness-e2e-"));
    engine = await createLocalEngine({ threads: 1 });
    // Real speech, but 8 dB too quiet: the provider path has to bring it up.
    fake = await startFakeProviders({ audio: (text, voice) => engine.synthesize({ text, voice, lang: "en-US", level: { lufs: -27, truePeak: -6 } }) });
    sys = await startEmbedded(
      {
        PORT: "0",
        HOST: "127.0.0.1",
        DATA_DIR: dir,
        ADMIN_TOKEN: ADMIN,
        AUDIO_ENGINE: process.env.AUDIO_ENGINE,
        SEED_TOKENS: JSON.stringify([
          { token: T.loud, project: "loud", scope: "full" },
          { token: T.plain, project: "plain", scope: "full" },
        ]),
        OPENAI_API_KEY: FAKE_OPENAI_KEY,
        OPENAI_BASE_URL: fake.openaiBaseUrl,
        ...ROOMY_RATE_LIMITS,
      },
      sink(),
    );
    authUrl = sys.services.find((s) => s.name === "auth")!.url;
  });
  after(async () => {
    await sys?.close();
    await fake?.close();
    await engine?.close();
    await rm(dir, { recursive: true, force: true });
  });

  const updateSettings = (patchJson: string) =>
    fetch(`${authUrl}/auth.v1.AuthService/UpdateProjectSettings`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${ADMIN}` },
      body: JSON.stringify({ projectId: "loud", patchJson }),
    });

  it("is set like any other setting, and an out-of-range value is a 400 naming the field that changes nothing", async () => {
    const admin = rpcClient(AuthService, authUrl, { token: ADMIN });
    await admin.updateProjectSettings({ projectId: "loud", patchJson: patchFromArgs(["loudness.lufs=-16", "loudness.truePeakDbtp=-1.5"]) });
    for (const [patch, message] of [
      ["loudness.lufs=-5", "loudness.lufs: must be <= -10"],
      ["loudness.truePeakDbtp=3", "loudness.truePeakDbtp: must be <= 0"],
    ]) {
      const res = await updateSettings(patchFromArgs([patch]));
      expect(res.status, patch).to.equal(400);
      expect(((await res.json()) as { message: string }).message).to.equal(message);
    }
    const settings = JSON.parse((await admin.getProjectSettings({ projectId: "loud" })).settings!.settingsJson);
    expect(settings.loudness).to.deep.equal({ lufs: -16, truePeakDbtp: -1.5 });
  });

  it("gives the project's full and preview files its target, cloud provider and local engine alike, while another project keeps the deployment's", async () => {
    const english = ARTICLES.find((a) => a.lang === "en-US")!;
    const german = ARTICLES.find((a) => a.lang === "de-DE")!;
    // alloy goes to the (fake) OpenAI; no Azure key, so Katja is spoken by the local engine.
    const jobs = [
      { project: "loud", token: T.loud, article: { ...english, voice: "alloy" }, path: "openai", target: LOUD },
      { project: "loud", token: T.loud, article: { ...german, voice: "de-DE-KatjaNeural" }, path: "local engine", target: LOUD },
      { project: "plain", token: T.plain, article: { ...english, voice: "alloy" }, path: "openai", target: DEPLOYMENT },
      { project: "plain", token: T.plain, article: { ...german, voice: "de-DE-KatjaNeural" }, path: "local engine", target: DEPLOYMENT },
    ];
    const created = await Promise.all(
      jobs.map(async (j) => {
        const r = await api(sys.url, j.token)("POST", "/api/articles", j.article);
        expect(r.status, r.text).to.equal(200);
        return r.body.id as string;
      }),
    );
    for (const [i, j] of jobs.entries()) {
      const call = api(sys.url, j.token);
      const art = await waitFor(`article ${created[i]} ready`, async () => {
        const r = await call("GET", `/api/articles/${created[i]}`);
        if (r.body?.article?.status === "errored") throw new Error(`errored: ${r.body.article.error}`);
        return r.body?.article?.status === "ready" ? r.body.article : undefined;
      }, 240_000, 250);
      const file = async (url: string) => Buffer.from(await (await fetch(url.replace("localhost", "127.0.0.1"))).arrayBuffer());
      const full = await file(art.audio);
      const preview = await file(art.audio_preview);
      expect(art.audio_preview_duration, "a preview shorter than the full file").to.be.lessThan(art.audio_duration);
      const what = `${j.project} ${j.article.voice} (${j.path})`;
      const f = expectOnTarget(`${what} full`, full, j.target);
      const p = expectOnTarget(`${what} preview`, preview, j.target);
      console.log(`      ${what}: full ${f.I} LUFS / ${f.TP} dBTP, preview ${p.I} LUFS / ${p.TP} dBTP (target ${j.target.lufs} / ${j.target.truePeak})`);
    }
    // Both paths were taken: the English articles went to the provider, the German ones did not.
    const sent = fake.callsTo("openai").map((c) => String(c.json?.input));
    expect(sent.length).to.be.greaterThan(0);
    expect(sent.some((t) => german.title.includes(t) || german.text.includes(t))).to.equal(false);
  });

  it("gives a project's ad-hoc Synthesize files its target too, while a project without the setting keeps the deployment's", async () => {
    const audio = rpcClient(AudioService, sys.services.find((x) => x.name === "audio")!.url);
    const german = ARTICLES.find((a) => a.lang === "de-DE")!;
    const text = german.text.slice(0, 600);
    for (const [who, headers, target] of [
      ["loud project", { authorization: `Bearer ${T.loud}` }, LOUD],
      ["plain project", { authorization: `Bearer ${T.plain}` }, DEPLOYMENT],
    ] as const) {
      const r = await audio.synthesize({ title: german.title, text, voice: "de-DE-KatjaNeural", lang: "de-DE" }, { headers });
      const full = Buffer.from(await (await fetch(`${sys.url}/audio/${r.full!.key}`)).arrayBuffer());
      const f = expectOnTarget(`Synthesize, ${who}`, full, target);
      console.log(`      Synthesize, ${who}: ${f.I} LUFS / ${f.TP} dBTP (target ${target.lufs} / ${target.truePeak})`);
    }
  });
});

