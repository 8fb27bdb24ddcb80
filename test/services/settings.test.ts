// Project settings over the auth service's RPC: who may call what, ajv
// validation that names the field, the redacted admin view, reservations.
import { expect } from "chai";
import { Code, ConnectError } from "@connectrpc/connect";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AuthService, ReservationOutcome, Scope } from "../../gen/auth/v1/auth_pb.js";
import { logger } from "../../lib/log.js";
import { closeRpcClients, rpcClient } from "../../lib/rpc/client.js";
import type { RunningService } from "../../lib/service.js";
import { startAuthService } from "../../services/auth/app.js";
import { patchFromArgs } from "../../services/auth/cli.js";
import { openEmbeddedAuthStore } from "../../services/auth/store/open.js";
import type { AuthStore } from "../../services/auth/store/port.js";

const ADMIN = "admin-secret-for-settings-0123456789";
const INTERNAL = "internal-secret-for-settings-0123456789";

async function code(p: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await p;
  } catch (e) {
    const ce = ConnectError.from(e);
    return { code: Code[ce.code], message: ce.rawMessage };
  }
  throw new Error("expected the call to fail");
}

describe("project settings (auth service)", () => {
  let dir: string;
  let store: AuthStore;
  let svc: RunningService;
  let admin: ReturnType<typeof rpcClient<typeof AuthService>>;
  let internal: ReturnType<typeof rpcClient<typeof AuthService>>;
  let publisherToken: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "settings-svc-"));
    store = await openEmbeddedAuthStore(dir);
    svc = await startAuthService({ store, adminToken: ADMIN, internalToken: INTERNAL, log: logger("settings-test"), host: "127.0.0.1", port: 0 });
    admin = rpcClient(AuthService, svc.url, { token: ADMIN });
    internal = rpcClient(AuthService, svc.url, { token: INTERNAL });
    await admin.createProject({ id: "news", name: "News" });
    publisherToken = (await admin.issueToken({ projectId: "news", scope: Scope.FULL })).token;
  });

  after(async () => {
    await svc.close();
    await store.close();
    closeRpcClients();
    await rm(dir, { recursive: true, force: true });
  });

  const patch = (patchJson: string) => admin.updateProjectSettings({ projectId: "news", patchJson });
  const read = async (client = admin) => JSON.parse((await client.getProjectSettings({ projectId: "news" })).settings!.settingsJson);

  it("starts from documented defaults: unlimited, no rules, no webhook", async () => {
    expect(await read()).to.deep.equal({
      dailyLimit: null,
      creditChars: null,
      defaultVoice: null,
      defaultLang: null,
      rules: {},
      webhook: null,
      recrawl: { enabled: false, everyMinutes: 60, maxAgeHours: 24 },
      audio: "immediate",
    });
  });

  it("chooses when audio is made: immediate by default, onDemand by patch, anything else refused naming the field", async () => {
    await patch(JSON.stringify({ audio: "onDemand" }));
    expect((await read()).audio).to.equal("onDemand");
    const refused = await patch(JSON.stringify({ audio: "later" })).then(() => undefined, (e: Error) => e);
    expect(refused?.message).to.match(/audio: must be one of immediate, onDemand/);
    expect((await read()).audio).to.equal("onDemand");
    await patch(JSON.stringify({ audio: null }));
    expect((await read()).audio).to.equal("immediate");
  });

  it("applies a merge patch and keeps what the patch does not name", async () => {
    await patch(JSON.stringify({ dailyLimit: 10, rules: { maxChars: 5000 } }));
    await patch(JSON.stringify({ rules: { labelsExclude: ["sponsored"] }, defaultVoice: "nova", defaultLang: "de-DE" }));
    const s = await read();
    expect(s).to.include({ dailyLimit: 10, defaultVoice: "nova", defaultLang: "de-DE" });
    expect(s.rules).to.deep.equal({ maxChars: 5000, labelsExclude: ["sponsored"] });
    await patch(JSON.stringify({ dailyLimit: null }));
    expect((await read()).dailyLimit).to.equal(null);
  });

  it("keeps per-project rate limits, partly or wholly, and null returns them to the defaults", async () => {
    await admin.updateProjectSettings({ projectId: "news", patchJson: patchFromArgs(["rateLimit.writes.perSecond=2", "rateLimit.writes.burst=10"]) });
    await patch(JSON.stringify({ rateLimit: { reads: { burst: 500 } } }));
    expect((await read()).rateLimit).to.deep.equal({ writes: { perSecond: 2, burst: 10 }, reads: { burst: 500 } });
    for (const [bad, field] of [
      [{ rateLimit: { writes: { perSecond: -1 } } }, /^rateLimit\.writes\.perSecond: /],
      [{ rateLimit: { reads: { burst: 0 } } }, /^rateLimit\.reads\.burst: /],
      [{ rateLimit: { reads: { every: 3 } } }, /^rateLimit\.reads\.every: unknown setting/],
    ] as const) {
      expect((await code(patch(JSON.stringify(bad)))).message, JSON.stringify(bad)).to.match(field);
    }
    await patch(JSON.stringify({ rateLimit: null }));
    expect((await read()).rateLimit).to.equal(undefined);
  });

  it("keeps a per-project on-demand budget, refuses what is not one naming the field, and null returns it to the defaults", async () => {
    await admin.updateProjectSettings({ projectId: "news", patchJson: patchFromArgs(["onDemandBudget.burst=50", "onDemandBudget.perHour=120"]) });
    expect((await read()).onDemandBudget).to.deep.equal({ burst: 50, perHour: 120 });
    for (const [bad, field] of [
      [{ onDemandBudget: { burst: 0 } }, /^onDemandBudget\.burst: /],
      [{ onDemandBudget: { burst: 2.5 } }, /^onDemandBudget\.burst: /],
      [{ onDemandBudget: { perHour: 0 } }, /^onDemandBudget\.perHour: /],
      [{ onDemandBudget: { perDay: 3 } }, /^onDemandBudget\.perDay: unknown setting/],
    ] as const) {
      expect((await code(patch(JSON.stringify(bad)))).message, JSON.stringify(bad)).to.match(field);
    }
    expect((await read()).onDemandBudget).to.deep.equal({ burst: 50, perHour: 120 });
    await patch(JSON.stringify({ onDemandBudget: null }));
    expect((await read()).onDemandBudget).to.equal(undefined);
  });

  it("keeps a per-project loudness target, field by field, and null returns it to the deployment's", async () => {
    await admin.updateProjectSettings({ projectId: "news", patchJson: patchFromArgs(["loudness.lufs=-16", "loudness.truePeakDbtp=-1.5"]) });
    expect((await read()).loudness).to.deep.equal({ lufs: -16, truePeakDbtp: -1.5 });
    // The articles service reads it with the internal credential.
    expect((await read(internal)).loudness).to.deep.equal({ lufs: -16, truePeakDbtp: -1.5 });
    await patch(JSON.stringify({ loudness: { truePeakDbtp: null } }));
    expect((await read()).loudness).to.deep.equal({ lufs: -16 });
    await patch(JSON.stringify({ loudness: null }));
    expect((await read()).loudness).to.equal(undefined);
  });

  it("refuses a loudness target outside what the renderer accepts with HTTP 400 naming the field, and changes nothing", async () => {
    await patch(JSON.stringify({ loudness: { lufs: -23 } }));
    const before = await read();
    const cases: Array<[object, RegExp]> = [
      [{ loudness: { lufs: -41 } }, /^loudness\.lufs: must be >= -40$/],
      [{ loudness: { lufs: -9.5 } }, /^loudness\.lufs: must be <= -10$/],
      [{ loudness: { lufs: "loud" } }, /^loudness\.lufs: must be number$/],
      [{ loudness: { truePeakDbtp: 0.5 } }, /^loudness\.truePeakDbtp: must be <= 0$/],
      [{ loudness: { truePeakDbtp: -12.5 } }, /^loudness\.truePeakDbtp: must be >= -12$/],
      [{ loudness: { range: 7 } }, /^loudness\.range: unknown setting$/],
      [{ loudness: -16 }, /^loudness: must be object$/],
    ];
    for (const [p, msg] of cases) {
      // As any admin client sends it: Connect's JSON over plain HTTP/1.1.
      const res = await fetch(`${svc.url}/auth.v1.AuthService/UpdateProjectSettings`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${ADMIN}` },
        body: JSON.stringify({ projectId: "news", patchJson: JSON.stringify(p) }),
      });
      const body = (await res.json()) as { code: string; message: string };
      expect(res.status, JSON.stringify(p)).to.equal(400);
      expect(body.code, JSON.stringify(p)).to.equal("invalid_argument");
      expect(body.message, JSON.stringify(p)).to.match(msg);
    }
    expect(await read()).to.deep.equal(before);
    await patch(JSON.stringify({ loudness: null }));
  });

  it("refuses invalid settings with a message naming the field, and changes nothing", async () => {
    const before = await read();
    const cases: Array<[object | string, RegExp]> = [
      [{ dailyLimit: -1 }, /^dailyLimit: /],
      [{ rules: { maxChars: "lots" } }, /^rules\.maxChars: /],
      [{ rules: { minChars: 10, maxChars: 5 } }, /^rules\.minChars: /],
      [{ rules: { colour: "red" } }, /^rules\.colour: unknown setting/],
      [{ rules: { types: { news: { min: 2 } } } }, /^rules\.types\.news\.min: /],
      [{ webhook: { url: "ftp://x.example", secret: "0123456789abcdef" } }, /^webhook\.url: /],
      [{ webhook: { url: "https://hooks.example.com/x", secret: "short" } }, /^webhook\.secret: /],
      [{ defaultVoice: "de-DE-KatjaNeural", defaultLang: "en-US" }, /^defaultVoice: .*does not speak/],
      [{ recrawl: { everyMinutes: 1 } }, /^recrawl\.everyMinutes: /],
      ["[1,2]", /^patch: must be a JSON object/],
      ["{nope", /^patch: not valid JSON/],
    ];
    for (const [p, msg] of cases) {
      const err = await code(patch(typeof p === "string" ? p : JSON.stringify(p)));
      expect(err.code, JSON.stringify(p)).to.equal("InvalidArgument");
      expect(err.message, JSON.stringify(p)).to.match(msg);
    }
    expect(await read()).to.deep.equal(before);
  });

  it("keeps the webhook secret write-only for admins and hands it to internal callers", async () => {
    await patch(JSON.stringify({ webhook: { url: "https://hooks.example.com/a", secret: "whsec-0123456789abcdef" } }));
    expect((await read()).webhook).to.deep.equal({ url: "https://hooks.example.com/a", secret: "(set)" });
    expect((await read(internal)).webhook).to.deep.equal({ url: "https://hooks.example.com/a", secret: "whsec-0123456789abcdef" });
    // Changing only the URL keeps the secret.
    await patch(JSON.stringify({ webhook: { url: "https://hooks.example.com/b" } }));
    expect((await read(internal)).webhook.secret).to.equal("whsec-0123456789abcdef");
  });

  it("credit: AddCredit needs a bounded balance; reservations debit it and say which bound refused", async () => {
    expect((await code(admin.addCredit({ projectId: "news", chars: 5n }))).code).to.equal("FailedPrecondition");
    await patch(JSON.stringify({ creditChars: 100, dailyLimit: null }));
    expect((await admin.addCredit({ projectId: "news", chars: 50n })).creditChars).to.equal(150n);
    expect((await code(admin.addCredit({ projectId: "news", chars: 0n }))).message).to.match(/^chars: /);
    const day = new Date().toISOString().slice(0, 10);
    const r1 = await internal.reserveAudification({ projectId: "news", day, chars: 120n });
    expect(r1.outcome).to.equal(ReservationOutcome.RESERVED);
    expect(r1.creditChars).to.equal(30n);
    const r2 = await internal.reserveAudification({ projectId: "news", day, chars: 31n });
    expect(r2.outcome).to.equal(ReservationOutcome.NO_MONEY);
    expect((await internal.refundAudification({ projectId: "news", chars: 120n })).creditChars).to.equal(150n);
    // A settings change that does not name creditChars leaves the balance alone.
    await patch(JSON.stringify({ dailyLimit: 1 }));
    const view = (await admin.getProjectSettings({ projectId: "news" })).settings!;
    expect(view.creditChars).to.equal(150n);
    const r3 = await internal.reserveAudification({ projectId: "news", day, chars: 1n });
    expect(r3.outcome).to.equal(ReservationOutcome.LIMIT_REACHED);
  });

  it("only the admin credential administers, only the internal token reserves", async () => {
    const pub = rpcClient(AuthService, svc.url, { token: publisherToken });
    const anon = rpcClient(AuthService, svc.url);
    expect((await code(pub.updateProjectSettings({ projectId: "news", patchJson: "{}" }))).code).to.equal("PermissionDenied");
    expect((await code(pub.getProjectSettings({ projectId: "news" }))).code).to.equal("PermissionDenied");
    expect((await code(anon.addCredit({ projectId: "news", chars: 1n }))).code).to.equal("Unauthenticated");
    expect((await code(internal.updateProjectSettings({ projectId: "news", patchJson: "{}" }))).code).to.equal("Unauthenticated");
    const day = new Date().toISOString().slice(0, 10);
    for (const c of [admin, pub, anon]) {
      expect((await code(c.reserveAudification({ projectId: "news", day, chars: 1n }))).code).to.equal("PermissionDenied");
      expect((await code(c.refundAudification({ projectId: "news", chars: 1n }))).code).to.equal("PermissionDenied");
    }
    expect((await code(internal.reserveAudification({ projectId: "news", day: "22.11.2026", chars: 1n }))).message).to.match(/^day: /);
    expect((await code(internal.reserveAudification({ projectId: "ghost", day, chars: 1n }))).code).to.equal("NotFound");
  });

  it("the CLI turns key=value pairs into a nested merge patch", () => {
    expect(JSON.parse(patchFromArgs(["dailyLimit=10", "rules.maxChars=2000", "rules.urlDeny=[\"*/ads/*\"]", "webhook=null", "defaultVoice=nova"]))).to.deep.equal({
      dailyLimit: 10,
      rules: { maxChars: 2000, urlDeny: ["*/ads/*"] },
      webhook: null,
      defaultVoice: "nova",
    });
    expect(patchFromArgs(['{"dailyLimit":3}'])).to.equal('{"dailyLimit":3}');
  });
});
