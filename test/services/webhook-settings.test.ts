// Webhook URLs are checked when an admin sets them (issue 12, point 4): a
// private, loopback or metadata address is refused with a message that says
// why, unless FETCH_ALLOW_PRIVATE lists it (with its port, when one is given).
import { expect } from "chai";
import { Code, ConnectError } from "@connectrpc/connect";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AuthService } from "../../gen/auth/v1/auth_pb.js";
import { logger } from "../../lib/log.js";
import { allowPrivateFrom } from "../../lib/net/allow-list.js";
import { closeRpcClients, rpcClient } from "../../lib/rpc/client.js";
import type { RunningService } from "../../lib/service.js";
import { startAuthService } from "../../services/auth/app.js";
import { openEmbeddedAuthStore } from "../../services/auth/store/open.js";
import type { AuthStore } from "../../services/auth/store/port.js";

const ADMIN = "admin-secret-for-webhook-settings-0123";
const SECRET = "whsec-0123456789abcdef";

describe("webhook URL checked at settings:set", () => {
  let dir: string;
  let store: AuthStore;
  let svc: RunningService;
  let admin: ReturnType<typeof rpcClient<typeof AuthService>>;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "webhook-settings-"));
    store = await openEmbeddedAuthStore(dir);
    // As an operator would configure it: one intranet receiver on one port, and one host on any port.
    const allowPrivate = allowPrivateFrom("hooks.intranet:8443, 10.1.2.3");
    // Test DNS: fixed answers, so nothing leaves the machine.
    const zone: Record<string, string> = { "hooks.intranet": "10.0.0.7", "metadata.internal": "169.254.169.254", "hooks.example.com": "93.184.216.34" };
    const resolve = async (host: string) => {
      if (!zone[host]) throw Object.assign(new Error("not found"), { code: "ENOTFOUND" });
      return [{ address: zone[host], family: 4 }];
    };
    svc = await startAuthService({ store, adminToken: ADMIN, log: logger("webhook-settings-test"), host: "127.0.0.1", port: 0, webhookTargets: { allowPrivate, resolve } });
    admin = rpcClient(AuthService, svc.url, { token: ADMIN });
    await admin.createProject({ id: "news", name: "News" });
  });

  after(async () => {
    await svc.close();
    await store.close();
    closeRpcClients();
    await rm(dir, { recursive: true, force: true });
  });

  const setHook = (url: string) => admin.updateProjectSettings({ projectId: "news", patchJson: JSON.stringify({ webhook: { url, secret: SECRET } }) });
  const storedUrl = async () => JSON.parse((await admin.getProjectSettings({ projectId: "news" })).settings!.settingsJson).webhook?.url;

  async function refused(url: string): Promise<string> {
    try {
      await setHook(url);
    } catch (e) {
      const ce = ConnectError.from(e);
      expect(ce.code, url).to.equal(Code.InvalidArgument);
      return ce.rawMessage;
    }
    throw new Error(`${url} was accepted`);
  }

  it("refuses private, loopback and metadata targets with a message that says why, and stores nothing", async () => {
    const before = await storedUrl();
    const cases: Array<[string, RegExp]> = [
      ["http://127.0.0.1:9000/hook", /loopback/],
      ["http://[::1]/hook", /loopback/],
      ["http://[::ffff:10.0.0.1]/hook", /private/],
      ["http://192.168.1.20/hook", /private/],
      ["http://169.254.169.254/latest/meta-data", /link-local/],
      ["http://metadata.internal/hook", /metadata\.internal resolves to a link-local address/],
      ["http://0.0.0.0:8080/", /unspecified/],
    ];
    for (const [url, why] of cases) {
      const message = await refused(url);
      expect(message, url).to.match(/^webhook\.url: refused, /);
      expect(message, url).to.match(why);
      expect(message, url).to.include("FETCH_ALLOW_PRIVATE");
      expect(message, url).to.not.include(SECRET);
    }
    expect(await storedUrl()).to.equal(before);
  });

  it("accepts public targets, and names that do not resolve yet (delivery checks again)", async () => {
    await setHook("https://hooks.example.com/a");
    expect(await storedUrl()).to.equal("https://hooks.example.com/a");
    await setHook("https://not-yet-in-dns.example.org/a");
    expect(await storedUrl()).to.equal("https://not-yet-in-dns.example.org/a");
  });

  it("accepts an allow-listed private target only on the listed port", async () => {
    await setHook("https://hooks.intranet:8443/audio");
    expect(await storedUrl()).to.equal("https://hooks.intranet:8443/audio");
    expect(await refused("https://hooks.intranet/audio")).to.match(/hooks\.intranet resolves to a private address/);
    expect(await refused("http://hooks.intranet:8080/audio")).to.match(/private/);
    // An entry without a port allows every port of that address.
    await setHook("http://10.1.2.3:7000/hook");
    await setHook("http://10.1.2.3/hook");
    expect(await storedUrl()).to.equal("http://10.1.2.3/hook");
  });

  it("does not re-check an unchanged URL when other settings change", async () => {
    // Stored directly, as an older version could have: a private URL nobody allowed.
    const state = await store.getProjectState("news");
    await store.saveSettings("news", { ...(state!.settings as object), dailyLimit: null, webhook: { url: "http://127.0.0.1:9/old", secret: SECRET } });
    const res = await admin.updateProjectSettings({ projectId: "news", patchJson: JSON.stringify({ dailyLimit: 5 }) });
    expect(JSON.parse(res.settings!.settingsJson)).to.include({ dailyLimit: 5 });
    expect(await storedUrl()).to.equal("http://127.0.0.1:9/old");
    // Changing it is checked again.
    expect(await refused("http://127.0.0.1:9/new")).to.match(/loopback/);
  });
});
