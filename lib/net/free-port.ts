// Ports for listeners whose URL must be known before they start (the token
// banner, the audio base URL, child processes, test servers).
import { readFileSync } from "node:fs";
import net from "node:net";

export interface ReservedPort {
  port: number;
  /** Lets go of the port, for the listener that is about to take it; again, a no-op. */
  release(): Promise<void>;
}

/** Below this, ports are often fixed by services (and need privileges under 1024). */
const LOWEST = 10_000;
const ATTEMPTS = 64;

/**
 * The range the system hands out as local ports of outgoing connections (Linux:
 * ip_local_port_range; elsewhere IANA's dynamic range, used by macOS and Windows).
 */
export function ephemeralRange(): [number, number] {
  try {
    const [lo, hi] = readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/).map(Number);
    if (lo > 0 && hi >= lo) return [lo, hi];
  } catch {
    // not Linux
  }
  return [49_152, 65_535];
}

/** A random port outside the ephemeral range, or 0 (any) when there is no room outside it. */
function candidate([lo, hi]: [number, number]): number {
  const below = Math.max(0, lo - LOWEST);
  const above = Math.max(0, 65_535 - hi);
  if (below + above === 0) return 0;
  const n = Math.floor(Math.random() * (below + above));
  return n < below ? LOWEST + n : hi + 1 + (n - below);
}

function listenOn(port: number, host: string): Promise<net.Server> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.once("error", reject);
    srv.listen(port, host, () => resolve(srv));
  });
}

/**
 * A port held by a probe listener until release(). Between picking a port and
 * listening on it, any connection this machine opens may be given the same
 * number as its local port, unless the port lies outside the range those are
 * drawn from: so it is picked there, and held, which keeps the window to the
 * moment between release() and the real listener's bind, and closes it for
 * everything but another listener picking the same number.
 */
export async function reservePort(host = "127.0.0.1"): Promise<ReservedPort> {
  const range = ephemeralRange();
  let srv: net.Server | undefined;
  for (let i = 0; i < ATTEMPTS && !srv; i++) {
    const port = candidate(range);
    srv = await listenOn(port, host).catch((e: NodeJS.ErrnoException) => {
      if (port === 0 || (e.code !== "EADDRINUSE" && e.code !== "EACCES")) throw e;
      return undefined;
    });
  }
  // Every try taken (a crowded machine): any free port, as the system picks it.
  srv ??= await listenOn(0, host);
  const { port } = srv.address() as net.AddressInfo;
  let released: Promise<void> | undefined;
  return { port, release: () => (released ??= new Promise<void>((done) => srv.close(() => done()))) };
}

/** A port that was free a moment ago, outside the range outgoing connections take theirs from. */
export async function freePort(host = "127.0.0.1"): Promise<number> {
  const reserved = await reservePort(host);
  await reserved.release();
  return reserved.port;
}
