// The embedded default with PORT=0 names its public port in the token banner
// seconds before the gateway listens; the port is held in between.
import { expect } from "chai";
import net from "node:net";
import { reservePort } from "../../lib/net/free-port.js";

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
});
