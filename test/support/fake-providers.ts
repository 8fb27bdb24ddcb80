// Local stand-ins for the OpenAI and Azure speech APIs. They check requests
// against the published contracts (method, path, headers, body, limits),
// answer like the real services (JSON errors, Retry-After) and can be told to
// misbehave: throttle, fail, hang, cut bodies short or answer in the wrong format.
import http from "node:http";
import type { AddressInfo, Socket } from "node:net";
import type { SpeechEngine } from "../../services/audio/engine/index.js";

export type FakeName = "openai" | "azure";

export type Fault =
  | { kind: "status"; status: number; retryAfter?: string; message?: string }
  | { kind: "timeout" }
  | { kind: "truncate" }
  | { kind: "wav" }
  | { kind: "json200" };

export interface FakeCall {
  provider: FakeName;
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** OpenAI: the parsed JSON body. */
  json?: { model?: unknown; voice?: unknown; input?: unknown; response_format?: unknown; instructions?: unknown };
  /** Azure: what the SSML said; `elements` are the pronunciation elements (sub, say-as, phoneme) as sent. */
  ssml?: { lang: string; voice: string; text: string; elements?: string[] };
  /** Set when the request broke the contract; the fake answered 400/401/415. */
  violation?: string;
  fault?: Fault["kind"];
}

export interface FakeProviderOptions {
  openaiKey?: string;
  azureKey?: string;
  /** MP3 to answer for a text; tests pass audio from the local engine. */
  audio(text: string, voice: string, provider: FakeName): Buffer | Promise<Buffer>;
  /** Answer delay for a text (the benchmark's "1 s + 0.1 ms per character"). */
  latencyMs?(text: string): number;
  /**
   * Streams the MP3 as a TTS API does: after the latency, in pieces of `streamPieceBytes` spread
   * evenly over this many ms (chunked, no content-length). Default 0: all at once.
   */
  streamMs?(text: string, mp3: Buffer): number;
  /** Default 8 KiB (about 1.4 s of 48 kbps audio). */
  streamPieceBytes?: number;
}

export interface FakeProviders {
  /** OPENAI_BASE_URL value. */
  openaiBaseUrl: string;
  /** AZURE_SPEECH_ENDPOINT value. */
  azureEndpoint: string;
  calls: FakeCall[];
  callsTo(provider: FakeName): FakeCall[];
  /** The next requests to `provider` get these faults, one each, in order. */
  failNext(provider: FakeName, ...faults: Fault[]): void;
  /** Every request to `provider` gets this fault until cleared with undefined. */
  failAlways(provider: FakeName, fault: Fault | undefined): void;
  /** Requests in flight right now, and the most seen at once. */
  inFlight(): { now: number; max: number };
  /** performance.now() when the last byte of the latest MP3 answer was handed to the socket (0: none yet). */
  lastByteAt(): number;
  close(): Promise<void>;
}

export const OPENAI_VOICES = ["alloy", "ash", "ballad", "coral", "echo", "fable", "onyx", "nova", "sage", "shimmer", "verse"];
export const OPENAI_MODELS = ["tts-1", "tts-1-hd", "gpt-4o-mini-tts"];
export const AZURE_VOICES = ["de-DE-KatjaNeural", "de-DE-ConradNeural", "en-US-JennyNeural", "en-US-GuyNeural"];
const AZURE_FORMATS = ["audio-24khz-48kbitrate-mono-mp3", "audio-24khz-96kbitrate-mono-mp3", "audio-16khz-32kbitrate-mono-mp3"];

const SSML = /^<speak version="1\.0" xmlns="http:\/\/www\.w3\.org\/2001\/10\/synthesis" xml:lang="([^"<>&]+)"><voice name="([^"<>&]+)">([\s\S]*)<\/voice><\/speak>$/;

// The SSML elements our Azure provider may send inside <voice> (pronunciation rules), with escaped
// attribute values and a plain word inside. Anything else with "<" is not accepted.
const PRONUNCIATION_ELEMENT =
  /<sub alias="[^"<>]*">([^<>]*)<\/sub>|<say-as interpret-as="characters">([^<>]*)<\/say-as>|<phoneme alphabet="ipa" ph="[^"<>]*">([^<>]*)<\/phoneme>/g;

function unescapeXml(text: string): string | undefined {
  // Any "<" or bare "&" left in character data makes the document not well-formed.
  if (/[<>]/.test(text) || /&(?!(amp|lt|gt|quot|apos);)/.test(text)) return undefined;
  return text.replace(/&(amp|lt|gt|quot|apos);/g, (_, e: string) => ({ amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" })[e]!);
}

/** A short RIFF/WAVE file: what a misconfigured output format would bring back. */
function wav(): Buffer {
  const data = Buffer.alloc(4800);
  const h = Buffer.alloc(44);
  h.write("RIFF", 0);
  h.writeUInt32LE(36 + data.length, 4);
  h.write("WAVEfmt ", 8);
  h.writeUInt32LE(16, 16);
  h.writeUInt16LE(1, 20);
  h.writeUInt16LE(1, 22);
  h.writeUInt32LE(24000, 24);
  h.writeUInt32LE(48000, 28);
  h.writeUInt16LE(2, 32);
  h.writeUInt16LE(16, 34);
  h.write("data", 36);
  h.writeUInt32LE(data.length, 40);
  return Buffer.concat([h, data]);
}

/** The keys the fakes accept unless told otherwise. */
export const FAKE_OPENAI_KEY = "sk-test-openai-key-0123456789";
export const FAKE_AZURE_KEY = "azure-test-key-0123456789";

/** Fake OpenAI and Azure that speak (the first 200 characters) with our local engine: for tests that compare what each provider kind is sent and says. */
export function startFakeProvidersOnEngine(engine: SpeechEngine): Promise<FakeProviders> {
  return startFakeProviders({
    openaiKey: FAKE_OPENAI_KEY,
    azureKey: FAKE_AZURE_KEY,
    audio: (text, voice, provider) => engine.synthesize({ text: text.slice(0, 200), voice: provider === "azure" ? "de-DE-KatjaNeural" : voice, lang: provider === "azure" ? "de-DE" : "en-US" }),
  });
}

export async function startFakeProviders(opts: FakeProviderOptions): Promise<FakeProviders> {
  const openaiKey = opts.openaiKey ?? FAKE_OPENAI_KEY;
  const azureKey = opts.azureKey ?? FAKE_AZURE_KEY;
  const calls: FakeCall[] = [];
  const queued: Record<FakeName, Fault[]> = { openai: [], azure: [] };
  const always: Record<FakeName, Fault | undefined> = { openai: undefined, azure: undefined };
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  let now = 0;
  let max = 0;
  let lastByteAt = 0;

  const wait = (ms: number) =>
    new Promise<void>((resolve) => {
      const t = setTimeout(() => {
        timers.delete(t);
        resolve();
      }, ms);
      timers.add(t);
    });

  const sendJson = (res: http.ServerResponse, status: number, message: string, headers: Record<string, string> = {}) => {
    res.writeHead(status, { "content-type": "application/json", ...headers });
    res.end(JSON.stringify({ error: { message, type: status === 401 ? "invalid_request_error" : "server_error" } }));
  };

  function checkOpenAi(req: http.IncomingMessage, call: FakeCall): { status: number; message: string } | { text: string; voice: string } {
    if (req.method !== "POST") return { status: 405, message: `method ${req.method} not allowed` };
    if (call.path !== "/v1/audio/speech") return { status: 404, message: `unknown path ${call.path}` };
    if (req.headers.authorization !== `Bearer ${openaiKey}`) return { status: 401, message: `Incorrect API key provided: ${String(req.headers.authorization).slice(7)}` };
    if (!String(req.headers["content-type"]).startsWith("application/json")) return { status: 415, message: "content-type must be application/json" };
    let j: FakeCall["json"];
    try {
      j = JSON.parse(call.body);
    } catch {
      return { status: 400, message: "body is not JSON" };
    }
    call.json = j;
    if (typeof j?.model !== "string" || !OPENAI_MODELS.includes(j.model)) return { status: 400, message: `invalid model ${String(j?.model)}` };
    if (typeof j.voice !== "string" || !OPENAI_VOICES.includes(j.voice)) return { status: 400, message: `Invalid value for 'voice': ${String(j.voice)}` };
    if (typeof j.input !== "string" || j.input.length === 0) return { status: 400, message: "input must be a non-empty string" };
    if (j.input.length > 4096) return { status: 400, message: `input is longer than 4096 characters (${j.input.length})` };
    if (j.response_format !== "mp3") return { status: 400, message: `expected response_format mp3, got ${String(j.response_format)}` };
    if (j.instructions !== undefined && (typeof j.instructions !== "string" || j.model !== "gpt-4o-mini-tts")) return { status: 400, message: `instructions are not supported by ${j.model}` };
    return { text: j.input, voice: j.voice };
  }

  function checkAzure(req: http.IncomingMessage, call: FakeCall): { status: number; message: string } | { text: string; voice: string } {
    if (req.method !== "POST") return { status: 405, message: `method ${req.method} not allowed` };
    if (call.path !== "/cognitiveservices/v1") return { status: 404, message: `unknown path ${call.path}` };
    if (req.headers["ocp-apim-subscription-key"] !== azureKey) return { status: 401, message: "Access denied due to invalid subscription key" };
    if (req.headers["content-type"] !== "application/ssml+xml") return { status: 415, message: "content-type must be application/ssml+xml" };
    if (!AZURE_FORMATS.includes(String(req.headers["x-microsoft-outputformat"]))) return { status: 400, message: "unsupported X-Microsoft-OutputFormat" };
    if (!req.headers["user-agent"]) return { status: 400, message: "User-Agent is required" };
    if (Buffer.byteLength(call.body) > 64 * 1024) return { status: 400, message: "SSML is larger than 64 KB" };
    const m = SSML.exec(call.body);
    const elements = m ? [...m[3].matchAll(PRONUNCIATION_ELEMENT)].map((e) => e[0]) : [];
    const text = m ? unescapeXml(m[3].replace(PRONUNCIATION_ELEMENT, (_e, a?: string, b?: string, c?: string) => a ?? b ?? c ?? "")) : undefined;
    if (!m || text === undefined) return { status: 400, message: "SSML is not well-formed" };
    call.ssml = { lang: m[1], voice: m[2], text, ...(elements.length ? { elements } : {}) };
    if (!AZURE_VOICES.includes(m[2])) return { status: 400, message: `unknown voice ${m[2]}` };
    if (!m[2].startsWith(`${m[1]}-`)) return { status: 400, message: `voice ${m[2]} does not speak ${m[1]}` };
    return { text, voice: m[2] };
  }

  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const url = new URL(req.url ?? "/", "http://fake");
    const provider: FakeName = url.pathname.startsWith("/v1/") ? "openai" : "azure";
    const call: FakeCall = { provider, method: req.method ?? "", path: url.pathname, headers: req.headers, body: Buffer.concat(chunks).toString("utf8") };
    calls.push(call);
    now++;
    max = Math.max(max, now);
    try {
      const checked = provider === "openai" ? checkOpenAi(req, call) : checkAzure(req, call);
      if ("status" in checked) {
        call.violation = checked.message;
        return sendJson(res, checked.status, checked.message);
      }
      const fault = queued[provider].shift() ?? always[provider];
      call.fault = fault?.kind;
      if (opts.latencyMs) await wait(opts.latencyMs(checked.text));
      if (fault?.kind === "status") {
        return sendJson(res, fault.status, fault.message ?? `fake ${fault.status}`, fault.retryAfter ? { "retry-after": fault.retryAfter } : {});
      }
      if (fault?.kind === "timeout") {
        await wait(60_000);
        return void res.destroy();
      }
      if (fault?.kind === "wav") {
        res.writeHead(200, { "content-type": "audio/wav" });
        return void res.end(wav());
      }
      if (fault?.kind === "json200") {
        res.writeHead(200, { "content-type": "application/json" });
        return void res.end(JSON.stringify({ audio: null }));
      }
      const mp3 = await opts.audio(checked.text, checked.voice, provider);
      if (fault?.kind === "truncate") {
        // Headers promise the whole file, then the connection drops halfway through a frame.
        res.writeHead(200, { "content-type": "audio/mpeg", "content-length": String(mp3.length) });
        res.write(mp3.subarray(0, Math.floor(mp3.length / 2) + 7));
        return void setImmediate(() => res.destroy());
      }
      const overMs = opts.streamMs?.(checked.text, mp3) ?? 0;
      if (overMs > 0) {
        res.writeHead(200, { "content-type": "audio/mpeg" });
        const size = opts.streamPieceBytes ?? 8192;
        const pieces = Math.max(1, Math.ceil(mp3.length / size));
        for (let k = 0; k < pieces; k++) {
          if (k > 0) await wait(overMs / pieces);
          if (res.destroyed) return;
          res.write(mp3.subarray(k * size, (k + 1) * size));
        }
      } else {
        res.writeHead(200, { "content-type": "audio/mpeg", "content-length": String(mp3.length) });
        res.write(mp3);
      }
      res.end();
      lastByteAt = performance.now();
    } catch (e) {
      if (!res.headersSent) sendJson(res, 500, `fake failed: ${(e as Error).message}`);
      else res.destroy();
    } finally {
      now--;
    }
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    openaiBaseUrl: `${base}/v1`,
    azureEndpoint: `${base}/cognitiveservices/v1`,
    calls,
    callsTo: (p) => calls.filter((c) => c.provider === p),
    failNext: (p, ...faults) => void queued[p].push(...faults),
    failAlways: (p, fault) => void (always[p] = fault),
    inFlight: () => ({ now, max }),
    lastByteAt: () => lastByteAt,
    async close() {
      for (const t of timers) clearTimeout(t);
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * The benchmark's fake: both APIs answer after 1 s + 0.1 ms per character with `mp3`
 * (any valid clip; the pipeline does not care what it says).
 */
export function startSlowFakeProviders(mp3: Buffer, opts: { perRequestMs?: number; perCharMs?: number } = {}): Promise<FakeProviders> {
  const fixed = opts.perRequestMs ?? 1000;
  const perChar = opts.perCharMs ?? 0.1;
  return startFakeProviders({ audio: () => mp3, latencyMs: (text) => fixed + perChar * text.length });
}
