// A voice's sample (GET /api/voices/{voice}/sample) is rendered once and kept, and a render
// outlives the request that started it: on a busy machine the local engines, below the service's
// priority, can take longer than the gateway waits, and the client's retry must then find it.
import { expect } from "chai";
import { ConnectError, Code } from "@connectrpc/connect";
import type { SpeechRouter } from "../../services/audio/providers/index.js";
import { sampleRenderer } from "../../services/audio/voice-status.js";

const LEVEL = { lufs: -19, truePeak: -1 };

/** A router whose one provider renders when the test says so. */
function slowRouter() {
  const renders: Array<{ resolve(mp3: Buffer): void; reject(err: Error): void; signal: AbortSignal }> = [];
  const router = {
    chain: (voice: string) => [{ provider: { name: "local", label: "espeak-ng" }, voice }],
    synthesize: (_step: unknown, _req: unknown, signal: AbortSignal) => new Promise<Buffer>((resolve, reject) => renders.push({ resolve, reject, signal })),
  } as unknown as SpeechRouter;
  return { router, renders };
}

describe("voice samples", () => {
  it("keeps rendering past a caller's deadline, and the retry gets that render", async () => {
    const { router, renders } = slowRouter();
    const sample = sampleRenderer(router, LEVEL);
    const caller = new AbortController();
    const first = sample("alloy", "en-US", caller.signal).catch((e: unknown) => e);
    caller.abort(new ConnectError("the operation timed out", Code.DeadlineExceeded));
    const err = await first;
    expect(err).to.be.instanceOf(ConnectError);
    expect((err as ConnectError).code).to.equal(Code.DeadlineExceeded);
    expect(renders).to.have.length(1);
    expect(renders[0].signal.aborted, "the render itself").to.equal(false);

    const retry = sample("alloy", "en-US", new AbortController().signal);
    renders[0].resolve(Buffer.from("mp3"));
    expect(await retry).to.deep.equal({ mp3: Buffer.from("mp3"), engine: "espeak" });
    expect(await sample("alloy", "en-US", new AbortController().signal)).to.deep.equal({ mp3: Buffer.from("mp3"), engine: "espeak" });
    expect(renders, "rendered once").to.have.length(1);
  });

  it("does not keep a failed render: the next request renders again", async () => {
    const { router, renders } = slowRouter();
    const sample = sampleRenderer(router, LEVEL);
    const first = sample("alloy", "en-US", new AbortController().signal).catch((e: Error) => e);
    renders[0].reject(new Error("engine died"));
    expect(((await first) as Error).message).to.equal("engine died");
    const second = sample("alloy", "en-US", new AbortController().signal);
    expect(renders).to.have.length(2);
    renders[1].resolve(Buffer.from("ok"));
    expect((await second).mp3.toString()).to.equal("ok");
  });
});
