// Steady keep-alive traffic, as several publishers' HTTP clients would send
// it: each client (an http.Agent with keep-alive) runs a few loops that send
// their next request as soon as the last one is answered. Every request ends
// one of three ways: answered in full, refused at connect (the listener is
// gone: never sent), or cut (sent, and the connection failed before a whole
// response came back; a reset on a reused socket counts here).
import http from "node:http";

export interface TrafficOptions {
  token?: string;
  /** The fast loops' request; default GET /api/articles?limit=5. */
  read?: { method: string; path: string; headers?: Record<string, string>; body?: string };
  /** Keep-alive clients. */
  agents?: number;
  /** Concurrent fast loops (GET /api/articles) per client. */
  loops?: number;
  /** Loops per client that upload a create slowly (half the body, a pause, the rest). */
  slowLoops?: number;
  slowPauseMs?: number;
}

export interface Cut {
  kind: "read" | "slow-create";
  code: string;
  reusedSocket: boolean;
}

export interface TrafficResult {
  answered: number;
  /** Answers that said `Connection: close`. */
  closeAnswers: number;
  refused: number;
  cut: Cut[];
}

export interface Traffic {
  answered(): number;
  /** Stops sending, waits for what is in flight, and returns the tally. */
  stop(): Promise<TrafficResult>;
}

export function keepAliveTraffic(baseUrl: string, o: TrafficOptions): Traffic {
  const url = new URL(baseUrl);
  const tally: TrafficResult = { answered: 0, closeAnswers: 0, refused: 0, cut: [] };
  let stopped = false;
  const agents = Array.from({ length: o.agents ?? 6 }, () => new http.Agent({ keepAlive: true, maxSockets: 8 }));

  const send = (agent: http.Agent, kind: Cut["kind"]) =>
    new Promise<void>((resolve) => {
      const slow = kind === "slow-create";
      const read = o.read ?? { method: "GET", path: "/api/articles?limit=5" };
      const body = slow ? Buffer.from(JSON.stringify({ title: "Slow upload during shutdown", text: "Sent in two halves around the signal." })) : read.body === undefined ? undefined : Buffer.from(read.body);
      const req = http.request({
        host: url.hostname,
        port: url.port,
        agent,
        method: slow ? "POST" : read.method,
        path: slow ? "/api/articles" : read.path,
        headers: {
          ...(o.token ? { authorization: `Bearer ${o.token}` } : {}),
          ...(slow ? { "content-type": "application/json" } : read.headers),
          ...(body ? { "content-length": body.length } : {}),
        },
        timeout: 60_000,
      });
      let settled = false;
      const fail = (err: NodeJS.ErrnoException) => {
        if (settled) return;
        settled = true;
        // Refused at connect: the request never left this client.
        if (err.code === "ECONNREFUSED") tally.refused++;
        else tally.cut.push({ kind, code: err.code ?? err.message, reusedSocket: req.reusedSocket });
        resolve();
      };
      req.on("error", fail);
      req.on("timeout", () => req.destroy(Object.assign(new Error("no answer within 60 s"), { code: "TIMEOUT" })));
      req.on("response", (res) => {
        res.on("error", fail);
        res.on("aborted", () => fail(Object.assign(new Error("response aborted"), { code: "ABORTED" })));
        res.resume();
        res.on("end", () => {
          if (settled) return;
          if (!res.complete) return fail(Object.assign(new Error("response incomplete"), { code: "INCOMPLETE" }));
          settled = true;
          tally.answered++;
          if (/close/i.test(String(res.headers.connection ?? ""))) tally.closeAnswers++;
          resolve();
        });
      });
      if (!slow) return void req.end(body);
      req.write(body!.subarray(0, body!.length >> 1));
      setTimeout(() => req.end(body!.subarray(body!.length >> 1)), o.slowPauseMs ?? 300);
    });

  const loop = async (agent: http.Agent, kind: Cut["kind"]) => {
    while (!stopped) {
      const refusedBefore = tally.refused;
      await send(agent, kind);
      // Nothing listens any more: try again a little later, as a client would.
      if (tally.refused > refusedBefore) await new Promise((r) => setTimeout(r, 25));
    }
  };
  const loops = agents.flatMap((a) => [
    ...Array.from({ length: o.loops ?? 3 }, () => loop(a, "read")),
    ...Array.from({ length: o.slowLoops ?? 1 }, () => loop(a, "slow-create")),
  ]);

  return {
    answered: () => tally.answered,
    async stop() {
      stopped = true;
      await Promise.all(loops);
      for (const a of agents) a.destroy();
      return tally;
    },
  };
}
