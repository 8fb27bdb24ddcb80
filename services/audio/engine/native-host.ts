// The native speech host: a small child process that runs eSpeak and LAME for the service that
// started it (native-host-client.ts) and streams their PCM through the leveler and the edge
// shaper. The service's event loop then only sends a text and receives an MP3: spawning from a
// process of a few hundred MB, the PCM's chunks and the leveler were the stretches that held up
// its requests while articles rendered (bench/README.md, issue 22). The host lowers its own
// priority, so the programs it spawns inherit it, and it leaves when its parent does.
import { nativeSynthesize, SPEECH_NICENESS } from "./native.js";
import type { HostReply, NativeHostRequest } from "./native-host-protocol.js";
import { runBelowService } from "./priority.js";

runBelowService(SPEECH_NICENESS);

const [espeak, lame] = process.argv.slice(2);
const programs = { espeak, lame };
const running = new Map<number, AbortController>();
// Started with --expose-gc: a render leaves tens of MB of dead PCM buffers outside the V8 heap,
// which a heap of a few MB would not collect for many renders; a full collection of that heap
// after each render costs a few ms here, at this host's priority.
const collect = (globalThis as { gc?: () => void }).gc;
const send = (reply: HostReply) => process.send?.(reply);

process.on("message", (msg: NativeHostRequest) => {
  if (msg.type === "cancel") {
    running.get(msg.id)?.abort();
    return;
  }
  const controller = new AbortController();
  running.set(msg.id, controller);
  nativeSynthesize(programs, msg.voice, msg.text, controller.signal).then(
    (mp3) => {
      if (!controller.signal.aborted) send({ type: "done", id: msg.id, mp3 });
    },
    (err: unknown) => {
      if (controller.signal.aborted) return;
      const code = (err as { code?: unknown } | null)?.code;
      send({ type: "failed", id: msg.id, message: err instanceof Error ? err.message : String(err), code: code === undefined ? undefined : String(code) });
    },
  ).finally(() => {
    running.delete(msg.id);
    collect?.();
  });
});

// The parent is gone (stopped, or killed): so is the work it asked for.
process.on("disconnect", () => {
  for (const c of running.values()) c.abort();
  process.exit(0);
});

send({ type: "ready" });
