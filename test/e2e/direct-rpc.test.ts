// Direct RPC obeys the project's rules on the embedded default: a publisher
// token calling AudioService/Synthesize is charged like an article, and
// AuthService/Authenticate answers only the internal credential.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Code, ConnectError } from "@connectrpc/connect";
import { expect } from "chai";
import { AudioService } from "../../gen/audio/v1/audio_pb.js";
import { AuthService } from "../../gen/auth/v1/auth_pb.js";
import { startEmbedded, type Embedded } from "../../launch/embedded.js";
import { rpcClient } from "../../lib/rpc/client.js";
import { sink } from "../support/sink.js";

const ADMIN = "direct-admin-token-0123456789";
const INTERNAL = "direct-internal-token-0123456789";
const T = { poor: "direct-poor-full-0123456789", rich: "direct-rich-full-0123456789" };
const fails = (p: Promise<unknown>) => p.then(() => undefined, (e: unknown) => ConnectError.from(e));

describe("direct RPC obeys the project's rules (embedded default)", function () {
  // A synthesis runs below the service's priority: beside busy programs it can take minutes.
  this.timeout(900_000);
  let dir: string;
  let sys: Embedded;
  let authUrl: string;
  let audioUrl: string;
  const as = (token: string) => ({ headers: { authorization: `Bearer ${token}` }, timeoutMs: 600_000 });

  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "direct-rpc-"));
    sys = await startEmbedded(
      {
        PORT: "0",
        HOST: "127.0.0.1",
        DATA_DIR: dir,
        ADMIN_TOKEN: ADMIN,
        INTERNAL_TOKEN: INTERNAL,
        AUDIO_ENGINE: process.env.AUDIO_ENGINE,
        SEED_TOKENS: JSON.stringify([
          { token: T.poor, project: "poor", scope: "full" },
          { token: T.rich, project: "rich", scope: "full" },
        ]),
      },
      sink(),
    );
    authUrl = sys.services.find((s) => s.name === "auth")!.url;
    audioUrl = sys.services.find((s) => s.name === "audio")!.url;
    const admin = rpcClient(AuthService, authUrl, { token: ADMIN });
    await admin.updateProjectSettings({ projectId: "poor", patchJson: JSON.stringify({ dailyLimit: 1, creditChars: 10 }) });
    await admin.updateProjectSettings({ projectId: "rich", patchJson: JSON.stringify({ dailyLimit: 1, creditChars: 1000 }) });
  });
  after(async () => {
    await sys?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("Synthesize with a project's own token cannot render past its credit", async () => {
    const audio = rpcClient(AudioService, audioUrl);
    const e = await fails(audio.synthesize({ title: "Flood", text: "word ".repeat(9_520), voice: "alloy", lang: "en-US" }, as(T.poor)));
    expect(e?.code).to.equal(Code.ResourceExhausted);
    expect(e?.rawMessage).to.match(/Not enough credit: this synthesis needs 47605 characters/);
    const st = (await rpcClient(AuthService, authUrl, { token: ADMIN }).getProjectSettings({ projectId: "poor" })).settings!;
    expect(st.creditChars).to.equal(10n);
    expect(st.usedToday).to.equal(0n);
  });

  it("Synthesize is charged like an article: characters from the credit and one of the day's articles", async () => {
    const audio = rpcClient(AudioService, audioUrl);
    const admin = rpcClient(AuthService, authUrl, { token: ADMIN });
    const title = "Short note";
    const text = "A brief sentence to speak.";
    const r = await audio.synthesize({ title, text, voice: "alloy", lang: "en-US" }, as(T.rich));
    expect(r.full?.key).to.match(/^adhoc\/\d{10}\//);
    expect(Number(r.expires) * 1000).to.be.greaterThan(Date.now() + 23 * 3_600_000);
    const st = (await admin.getProjectSettings({ projectId: "rich" })).settings!;
    expect(st.creditChars).to.equal(BigInt(1000 - title.length - text.length));
    expect(st.usedToday).to.equal(1n);
    // dailyLimit=1 is used up by that synthesis.
    const again = await fails(audio.synthesize({ title, text, voice: "alloy", lang: "en-US" }, as(T.rich)));
    expect(again?.code).to.equal(Code.ResourceExhausted);
    expect(again?.rawMessage).to.match(/daily limit/);
    // The file is served like any audio until it expires.
    const res = await fetch(`${sys.url}/audio/${r.full!.key}`);
    expect(res.status).to.equal(200);
    await res.arrayBuffer();
  });

  it("Authenticate answers only the internal credential", async () => {
    for (const token of [undefined, T.rich, ADMIN]) {
      const client = rpcClient(AuthService, authUrl, token ? { token } : {});
      const e = await fails(client.authenticate({ token: T.rich }));
      expect(e?.code, String(token)).to.equal(Code.PermissionDenied);
    }
    const ok = await rpcClient(AuthService, authUrl, { token: INTERNAL }).authenticate({ token: T.rich });
    expect(ok.projectId).to.equal("rich");
  });
});
