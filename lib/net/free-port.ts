// Ports for listeners whose URL must be known before they start (the token
// banner, the audio base URL, child processes, test servers).
import net from "node:net";

export interface ReservedPort {
  port: number;
  /** Lets go of the port, for the listener that is about to take it; again, a no-op. */
  release(): Promise<void>;
}

/**
 * A port held by a probe listener until release(). Between picking a port and
 * listening on it, any connection this machine opens may be given the same
 * number as its local port; holding it keeps that window to the moment
 * between release() and the real listener's bind.
 */
export function reservePort(host = "127.0.0.1"): Promise<ReservedPort> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.once("error", reject);
    srv.listen(0, host, () => {
      const { port } = srv.address() as net.AddressInfo;
      let released: Promise<void> | undefined;
      resolve({ port, release: () => (released ??= new Promise<void>((done) => srv.close(() => done()))) });
    });
  });
}

/** A port that was free a moment ago. */
export async function freePort(host = "127.0.0.1"): Promise<number> {
  const reserved = await reservePort(host);
  await reserved.release();
  return reserved.port;
}
