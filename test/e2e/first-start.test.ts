// A first start on a busy port must not swallow the demo tokens: the port is
// checked before the demo project is created, so the start that finally
// works is the one that prints them.
import net from "node:net";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Writable } from "node:stream";
import { expect } from "chai";
import { startEmbedded } from "../../launch/embedded.js";
import { ConfigError } from "../../lib/config.js";
import { freePort } from "../../lib/net/free-port.js";

function capture(): Writable & { text: () => string } {
  const chunks: string[] = [];
  const w = new Writable({
    write(c, _e, cb) {
      chunks.push(String(c));
      cb();
    },
  });
  return Object.assign(w, { text: () => chunks.join("") });
}

describe("embedded first start on a port already in use", function () {
  this.timeout(120_000);
  let dataDir: string;
  let blocker: net.Server;
  let port: number;

  before(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), "first-start-"));
    port = await freePort();
    blocker = net.createServer();
    await new Promise<void>((r) => blocker.listen(port, "127.0.0.1", r));
  });

  after(async () => {
    if (blocker.listening) await new Promise((r) => blocker.close(r));
    await rm(dataDir, { recursive: true, force: true });
  });

  it("stops naming PORT before creating the demo project, and the next start prints the tokens", async () => {
    const env = { PORT: String(port), HOST: "127.0.0.1", DATA_DIR: dataDir, AUDIO_ENGINE: "wasm" };
    const first = capture();
    const err = await startEmbedded(env, first).then(
      (sys) => sys.close().then(() => null),
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(ConfigError);
    expect((err as Error).message).to.include(`PORT=${port} is already in use`);
    expect(first.text()).not.to.include("full access");

    await new Promise((r) => blocker.close(r));
    const second = capture();
    const sys = await startEmbedded(env, second);
    try {
      expect(second.text()).to.include("full access").and.include("read only");
      const token = /full access : (\S+)/.exec(second.text())![1];
      const res = await fetch(`${sys.url}/api/articles`, { headers: { authorization: `Bearer ${token}` } });
      expect(res.status).to.equal(200);
      // Where to go next, in plain lines (not only inside a JSON log line), each answering.
      for (const [label, path] of [["API", "/api"], ["API docs", "/api/docs"], ["console", "/console"]]) {
        const line = second.text().split("\n").find((l) => l.trimStart().startsWith(`${label} `) && !l.includes("{"));
        expect(line, `${label} line in:\n${second.text()}`).to.be.a("string");
        expect(line!.split(" : ")[1]).to.equal(`${sys.url}${path}`);
        const page = await fetch(`${sys.url}${path}`, { headers: { authorization: `Bearer ${token}` } });
        expect(page.status, path).to.equal(200);
      }
    } finally {
      await sys.close();
    }
  });

  it("names AUTH_PORT when the auth port is taken", async () => {
    const busy = net.createServer();
    const authPort = await freePort();
    await new Promise<void>((r) => busy.listen(authPort, "127.0.0.1", r));
    try {
      const err = await startEmbedded({ PORT: "0", HOST: "127.0.0.1", DATA_DIR: dataDir, AUTH_PORT: String(authPort) }, capture()).then(
        (sys) => sys.close().then(() => null),
        (e: unknown) => e,
      );
      expect((err as Error | null)?.message).to.include(`AUTH_PORT=${authPort} is already in use`);
    } finally {
      await new Promise((r) => busy.close(r));
    }
  });
});
