// Closing an HTTP/1.1 server's kept-alive connections without cutting a
// request. A client may send its next request on an idle connection at any
// moment, and a connection closed while that request is on its way fails it
// unanswered (a reset on a reused socket). So, once draining:
// - every response not yet started says `Connection: close`, and the
//   connection closes after it: requests already sent, and new ones arriving
//   on an open connection, are all answered, each client learning in the
//   answer that this connection is done;
// - a connection is closed while idle only once it has been quiet for a while
//   (no request in progress and not a byte received since its last answer),
//   checked right after the event loop has read whatever arrived, so a client
//   that keeps sending gets its answers and a `Connection: close` instead;
// - whatever is still open at the cut-off is destroyed.
// Not http.Server#close(): since Node.js 19 it also destroys every idle
// connection at once, racing any request a client is sending on one.
import type http from "node:http";
import net from "node:net";
import { held, type Held } from "../held.js";

/** How long an idle connection may stay open while draining: its client is not using it. */
export const DRAIN_QUIET_MS = 1_000;

export interface HttpDrain {
  /** For connections handed to the server (server.emit("connection")) that it should drain too, e.g. before their first byte. */
  track(socket: net.Socket): void;
  /**
   * Starts draining: what the header comment describes. Connections still
   * open after cutoffMs are destroyed. Returns a function that stops the
   * timers, for when every connection has closed.
   */
  begin(cutoffMs: number): () => void;
}

interface Conn {
  /** Requests of this connection not yet answered in full. */
  busy: number;
  /** bytesRead when it last fell idle: more since then is a request on its way. */
  readAt: number;
  idleSince: number;
  ending: boolean;
}

/** A response's entry in the set of open ones, emptied when the response closes (lib/held.ts). */
type Open = Held<http.ServerResponse>;
const OPEN = Symbol("open response");

/** Call after the application's own "checkContinue" listener, if it has one. */
export function httpDrain(server: http.Server, quietMs = DRAIN_QUIET_MS): HttpDrain {
  const conns = new Map<net.Socket, Conn>();
  const responses = new Set<Open>();
  let draining = false;

  const track = (socket: net.Socket) => {
    if (conns.has(socket)) return;
    conns.set(socket, { busy: 0, readAt: 0, idleSince: Date.now(), ending: false });
    socket.once("close", () => conns.delete(socket));
  };
  server.on("connection", track);

  // One shared listener, not a closure per request: this runs for every request the server answers.
  function onResponseClose(this: http.ServerResponse & { [OPEN]?: Open }): void {
    const open = this[OPEN];
    if (open) {
      open.value = undefined;
      responses.delete(open);
    }
    const socket = this.req.socket;
    const conn = conns.get(socket);
    if (!conn) return;
    conn.busy--;
    conn.readAt = socket.bytesRead;
    conn.idleSince = Date.now();
  }

  const onRequest = (req: http.IncomingMessage, res: http.ServerResponse & { [OPEN]?: Open }) => {
    const conn = conns.get(req.socket);
    if (conn) conn.busy++;
    const open = held(res);
    res[OPEN] = open;
    responses.add(open);
    if (draining) res.shouldKeepAlive = false;
    // A response closes once ("on" spares the once-wrapper).
    res.on("close", onResponseClose);
  };
  // Ahead of the application's listeners, so the flag is set before any answer starts.
  server.prependListener("request", onRequest);
  // Only where the application answers "Expect: 100-continue" itself: a listener
  // here makes Node.js hand such requests to it instead of to "request".
  if (server.listenerCount("checkContinue") > 0) server.prependListener("checkContinue", onRequest);

  const closeQuiet = () => {
    const now = Date.now();
    for (const [socket, conn] of conns) {
      if (conn.ending || conn.busy > 0 || socket.bytesRead !== conn.readAt || now - conn.idleSince < quietMs) continue;
      conn.ending = true;
      // A FIN, not a reset: the client's pool drops the connection when it arrives.
      socket.end();
    }
  };

  return {
    track,
    begin(cutoffMs) {
      draining = true;
      // Not keep-alive: Node.js answers `Connection: close` and closes after the response.
      for (const { value: res } of responses) if (res && !res.headersSent) res.shouldKeepAlive = false;
      // In the check phase, right after the poll phase has read what arrived.
      const sweep = setInterval(() => setImmediate(closeQuiet), Math.max(20, quietMs / 10));
      const cutoff = setTimeout(() => {
        for (const socket of conns.keys()) socket.destroy();
      }, cutoffMs);
      cutoff.unref();
      return () => {
        clearInterval(sweep);
        clearTimeout(cutoff);
      };
    },
  };
}

/**
 * Stops accepting connections and calls done once every open one has closed,
 * leaving the open ones to httpDrain (http.Server#close would destroy the idle ones).
 */
export function stopListening(server: net.Server, done: () => void): void {
  net.Server.prototype.close.call(server, () => done());
}
