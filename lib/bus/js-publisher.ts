// JetStream publishes with their acknowledgements, without a request per publish.
// The client's js.publish makes each publish a request: a muxed reply subscription
// entry, a timer, and two error objects with captured stacks (one made up front for
// a timeout that almost never comes, one when the answer cancels it) — a tenth of
// the articles service's CPU per create. Here every publish names a reply subject
// under one inbox this connection subscribed to once; acknowledgements settle a map
// entry, and one sweep times out the publishes left unanswered.
import { createInbox, headers, type Msg, type NatsConnection } from "nats";

export interface PubAck {
  seq: number;
  /** The stream already held a message with this id (deduplication window). */
  duplicate: boolean;
}

export interface JsPublisher {
  /** Publishes to a subject a stream captures; resolves with the stream's acknowledgement. */
  publish(subject: string, data: Uint8Array, msgId: string, timeoutMs: number): Promise<PubAck>;
  /** Fails what is still waiting and stops listening. */
  close(): void;
}

const SWEEP_MS = 100;
const decoder = new TextDecoder();

interface Waiting {
  resolve(ack: PubAck): void;
  reject(err: Error): void;
  until: number;
  timeoutMs: number;
}

export function jsPublisher(nc: NatsConnection): JsPublisher {
  const prefix = `${createInbox()}.`;
  const waiting = new Map<string, Waiting>();
  let next = 0;
  let sweep: NodeJS.Timeout | undefined;

  function settle(m: Msg): void {
    const token = m.subject.slice(prefix.length);
    const w = waiting.get(token);
    if (!w) return;
    waiting.delete(token);
    // A status instead of an answer: typically 503, no stream captures the subject.
    if (m.headers?.hasError) return w.reject(new Error(`no acknowledgement: ${m.headers.code} ${m.headers.description}`));
    let ack: { seq?: number; duplicate?: boolean; error?: { code?: number; description?: string } };
    try {
      ack = JSON.parse(decoder.decode(m.data)) as typeof ack;
    } catch {
      return w.reject(new Error("JetStream answered the publish with something that is not JSON"));
    }
    if (ack.error) return w.reject(new Error(`JetStream refused the publish: ${ack.error.description ?? "unknown"} (${ack.error.code ?? "?"})`));
    w.resolve({ seq: ack.seq ?? 0, duplicate: ack.duplicate === true });
  }

  function expire(): void {
    const now = Date.now();
    for (const [token, w] of waiting) {
      if (w.until > now) continue;
      waiting.delete(token);
      w.reject(new Error(`no acknowledgement within ${w.timeoutMs} ms`));
    }
    if (waiting.size === 0) {
      clearInterval(sweep);
      sweep = undefined;
    }
  }

  const sub = nc.subscribe(`${prefix}*`, { callback: (err, m) => (err ? undefined : settle(m)) });

  return {
    publish(subject, data, msgId, timeoutMs) {
      return new Promise<PubAck>((resolve, reject) => {
        const token = (next++).toString(36);
        waiting.set(token, { resolve, reject, until: Date.now() + timeoutMs, timeoutMs });
        if (!sweep) {
          sweep = setInterval(expire, SWEEP_MS);
          sweep.unref();
        }
        const h = headers();
        h.set("Nats-Msg-Id", msgId);
        try {
          nc.publish(subject, data, { reply: prefix + token, headers: h });
        } catch (e) {
          waiting.delete(token);
          reject(e as Error);
        }
      });
    },
    close() {
      clearInterval(sweep);
      sweep = undefined;
      for (const w of waiting.values()) w.reject(new Error("job bus closed before the publish was acknowledged"));
      waiting.clear();
      sub.unsubscribe();
    },
  };
}
