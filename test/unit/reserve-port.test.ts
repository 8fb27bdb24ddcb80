// The embedded default with PORT=0 names its public port in the token banner
// seconds before the gateway listens; the port is held in between.
import { expect } from "chai";
import net from "node:net";
import { ephemeralRange, freePort, reservePort } from "../../lib/net/free-port.js";

const listenOn = (port: number) =>
  new Promise<net.Server>((resolve, reject) => {
    const srv = net.createServer();
    srv.once("error", reject);
    srv.listen(port, "127.0.0.1", () => resolve(srv));
  });

describe("reservePort", () => {
  it("keeps the port from any other listener until released, then lets one take it", async () => {
    const reserved = await reservePort("127.0.0.1");
    let err: NodeJS.ErrnoException | undefined;
    await listenOn(reserved.port).then((s) => s.close(), (e: NodeJS.ErrnoException) => (err = e));
    expect(err?.code).to.equal("EADDRINUSE");
    await reserved.release();
    const srv = await listenOn(reserved.port);
    expect((srv.address() as net.AddressInfo).port).to.equal(reserved.port);
    await new Promise((resolve) => srv.close(resolve));
  });

  it("picks ports outside the range outgoing connections take their local ports from", async () => {
    // A child process told to listen on a picked port binds it only seconds later: a port from the
    // ephemeral range could meanwhile be the local end of any connection (EADDRINUSE in CI).
    const [lo, hi] = ephemeralRange();
    const ports = await Promise.all(Array.from({ length: 20 }, () => freePort("127.0.0.1")));
    for (const p of ports) expect(p < lo || p > hi, `port ${p} inside ${lo}-${hi}`).to.equal(true);
    const outgoing = await new Promise<net.Socket>((resolve, reject) => {
      const srv = net.createServer((s) => s.destroy()).listen(0, "127.0.0.1", () => {
        const sock = net.connect((srv.address() as net.AddressInfo).port, "127.0.0.1", () => resolve(sock)).once("error", reject);
        srv.unref();
      });
    });
    expect(outgoing.localPort! >= lo && outgoing.localPort! <= hi, "the system's own pick lies in the range read").to.equal(true);
    outgoing.destroy();
  });
});
