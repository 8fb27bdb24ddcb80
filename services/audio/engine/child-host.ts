// The service's side of a speech host: one child process, started with the first render (or on
// purpose, to learn early whether it can start) and again after it died, that runs every render
// of one engine at a lower priority than the service (the native eSpeak host, native-host.ts;
// the Kokoro host, kokoro/host.ts). While renders are in flight the host keeps the service's
// process alive; an idle one does not.
import { fork, type ChildProcess } from "node:child_process";
import type { HostReply, HostRequest, HostStartTiming, RenderTiming } from "./native-host-protocol.js";

/** How to start a host: its module, arguments and Node options. */
export interface HostSpec {
  /** For messages: "native speech host", "Kokoro speech host". */
  name: string;
  /** The file to fork; `dispose` once the child has loaded it. */
  entry(): Promise<{ file: string; dispose(): void }>;
  args: string[];
  execArgv: string[];
  env?: NodeJS.ProcessEnv;
  /**
   * false: the host stays in the service's session (and so its autogroup, where the kernel weighs
   * the service's threads against the host's directly) and keeps the terminal's Ctrl-C away from
   * itself and its programs on its own. Default true: a session of its own.
   */
  ownSession?: boolean;
  /** Where a host that reports them says its start's and each render's time went (the Kokoro host). */
  onStarted?(timing: HostStartTiming): void;
  onRendered?(timing: RenderTiming): void;
}

/** How long close() lets a host leave by itself before it is killed. */
export const HOST_LEAVE_MS = 2_000;

interface Pending {
  resolve(mp3: Buffer): void;
  reject(err: unknown): void;
}

export class ChildHost<Job extends object> {
  private child: ChildProcess | undefined;
  private starting: Promise<ChildProcess> | undefined;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private closed = false;

  constructor(private readonly spec: HostSpec) {}

  /** Starts the host now: rejects with why it cannot start. */
  async start(): Promise<void> {
    await this.host();
  }

  async run(job: Job, signal?: AbortSignal): Promise<Buffer> {
    const child = await this.host();
    if (signal?.aborted) throw signal.reason;
    const id = this.nextId++;
    return new Promise<Buffer>((resolve, reject) => {
      const cancel = () => {
        this.settle(id);
        this.send(child, { type: "cancel", id });
        reject(signal!.reason);
      };
      signal?.addEventListener("abort", cancel, { once: true });
      this.pending.set(id, {
        resolve: (mp3) => {
          signal?.removeEventListener("abort", cancel);
          resolve(mp3);
        },
        reject: (err) => {
          signal?.removeEventListener("abort", cancel);
          reject(err);
        },
      });
      this.hold(child, true);
      this.send(child, { type: "synthesize", id, ...job } as HostRequest);
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    const child = this.child ?? (await this.starting?.catch(() => undefined));
    this.child = undefined;
    this.starting = undefined;
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      // Awaited: an idle host is unreferenced, and a script whose last work this is would end
      // before the exit arrived, with the close still pending.
      child.ref();
      // The host leaves when its channel closes, killing the programs of what it was doing.
      if (child.connected) child.disconnect();
      else child.kill("SIGKILL");
      // Below the service's priority on a busy machine, the host may not get the CPU to leave
      // for seconds: the service's shutdown must not wait out its grace period for it. Its
      // programs end when their pipes to it close.
      const late = setTimeout(() => child.kill("SIGKILL"), HOST_LEAVE_MS);
      await exited;
      clearTimeout(late);
    }
  }

  private host(): Promise<ChildProcess> {
    if (this.closed) return Promise.reject(new Error(`The ${this.spec.name} is closed`));
    if (this.child) return Promise.resolve(this.child);
    if (!this.starting) {
      const starting = this.spawn();
      this.starting = starting;
      starting.then(
        (child) => {
          if (this.starting === starting) this.child = child;
        },
        () => {
          // Not kept: the next render tries to start it again.
          if (this.starting === starting) this.starting = undefined;
        },
      );
    }
    return this.starting;
  }

  private async spawn(): Promise<ChildProcess> {
    const entry = await this.spec.entry();
    try {
      const child = fork(entry.file, this.spec.args, {
        // A process group of its own: a Ctrl-C in the terminal reaches the service, whose graceful
        // stop lets the renders in flight finish, and not the host and its programs, which would
        // end them at once. The host still leaves with the service (its channel closes).
        detached: this.spec.ownSession ?? true,
        execArgv: this.spec.execArgv,
        env: this.spec.env ?? process.env,
        serialization: "advanced",
        stdio: ["ignore", "ignore", "inherit", "ipc"],
      });
      await new Promise<void>((resolve, reject) => {
        const failed = (err: Error) => reject(new Error(`The ${this.spec.name} did not start: ${err.message}`));
        child.once("error", failed);
        child.once("exit", (code, sig) => failed(new Error(`it exited (${sig ?? `code ${code}`})`)));
        child.once("message", (m: HostReply) => {
          if (m.type !== "ready") return failed(new Error(m.type === "init-failed" ? m.message : `unexpected first message ${m.type}`));
          if (m.timing) this.spec.onStarted?.(m.timing);
          resolve();
        });
      });
      child.removeAllListeners("error").removeAllListeners("exit").removeAllListeners("message");
      child.on("message", (m: HostReply) => this.received(m));
      // A failed send or a broken channel also ends in "exit", which fails what was pending.
      child.on("error", () => {});
      child.on("exit", (code, sig) => this.lost(child, code, sig));
      this.hold(child, false);
      return child;
    } finally {
      entry.dispose();
    }
  }

  private received(m: HostReply): void {
    if (m.type === "done") {
      if (m.timing) this.spec.onRendered?.(m.timing);
      const p = this.settle(m.id);
      p?.resolve(Buffer.from(m.mp3.buffer, m.mp3.byteOffset, m.mp3.byteLength));
    } else if (m.type === "failed") {
      const err = Object.assign(new Error(m.message), m.code === undefined ? {} : { code: m.code });
      this.settle(m.id)?.reject(err);
    }
  }

  private lost(child: ChildProcess, code: number | null, sig: NodeJS.Signals | null): void {
    if (this.child === child) {
      this.child = undefined;
      this.starting = undefined;
    }
    const err = new Error(`The ${this.spec.name} exited (${sig ?? `code ${code}`}) during the render`);
    for (const [id, p] of this.pending) {
      this.pending.delete(id);
      p.reject(err);
    }
  }

  /** Removes a pending render; the host is let go once none is left. */
  private settle(id: number): Pending | undefined {
    const p = this.pending.get(id);
    this.pending.delete(id);
    if (this.pending.size === 0 && this.child) this.hold(this.child, false);
    return p;
  }

  private send(child: ChildProcess, msg: HostRequest): void {
    if (child.connected) child.send(msg, (err) => err && msg.type === "synthesize" && this.settle(msg.id)?.reject(err));
  }

  /** While renders are in flight the host keeps this process running. */
  private hold(child: ChildProcess, yes: boolean): void {
    const channel = child.channel as { ref?(): void; unref?(): void } | null | undefined;
    if (yes) {
      child.ref();
      channel?.ref?.();
    } else {
      child.unref();
      channel?.unref?.();
    }
  }
}
