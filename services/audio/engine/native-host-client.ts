// The service's side of the native speech host (native-host.ts): the child process that runs
// every native render of this engine (child-host.ts).
import { childEntry } from "../../../lib/threads/worker-entry.js";
import { ChildHost } from "./child-host.js";
import type { NativePrograms } from "./native.js";
import type { EspeakVoice } from "./voices.js";

export class NativeHost extends ChildHost<{ voice: EspeakVoice; text: string }> {
  constructor(programs: NativePrograms) {
    super({
      name: "native speech host",
      entry: () => childEntry(new URL("./native-host.ts", import.meta.url)),
      args: [programs.espeak, programs.lame],
      // Not the service's loader or flags: a small young generation, a collection after each render
      // (native-host.ts), one malloc arena. Its RSS then stays near a bare Node's (bench/README.md).
      execArgv: ["--max-semi-space-size=1", "--expose-gc"],
      env: { ...process.env, MALLOC_ARENA_MAX: "1" },
    });
  }

  synthesize(voice: EspeakVoice, text: string, signal?: AbortSignal): Promise<Buffer> {
    return this.run({ voice, text }, signal);
  }
}
