// A throwaway nats-server with JetStream on a loopback port. restart() keeps
// the port and the storage dir, so streams and unacked messages survive it
// as they would a real broker restart.
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnSync, type ChildProcess } from "node:child_process";
import { atExit, captureTail, freePort, spawnTracked, stopChild, waitForPort } from "./child-servers.js";

export interface LocalNatsServer {
  url: string;
  port: number;
  stop(): Promise<void>;
  /** Starts it again after stop() on the same port and storage. */
  restart(): Promise<void>;
}

const BINARY = process.env.NATS_SERVER_BIN ?? "nats-server";

// nats-server cannot watch its parent, so a small shell does: SIGTERM stops
// the server (stop/restart); the end of stdin, which also comes when the test
// process is killed outright, stops it too.
const WATCHDOG = `
exec 3<&0
"$0" "$@" </dev/null & c=$!
{ cat <&3 >/dev/null; kill $c 2>/dev/null; } & w=$!
trap 'kill $c $w 2>/dev/null; wait $c; exit 0' TERM INT
wait $c
kill $w 2>/dev/null
`;

// Storage dirs are named after the owning pid so a later run can remove the
// ones left behind by a test process that was killed outright.
const STORE_ROOT = join(tmpdir(), "article-audio-nats");

function removeStaleStores(): void {
  let names: string[] = [];
  try {
    names = readdirSync(STORE_ROOT);
  } catch {
    return;
  }
  for (const name of names) {
    const pid = Number(name.split("-")[0]);
    if (!Number.isInteger(pid) || pid === process.pid || alive(pid)) continue;
    rmSync(join(STORE_ROOT, name), { recursive: true, force: true });
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

function installed(bin: string): boolean {
  return spawnSync("sh", ["-c", 'command -v "$0"', bin]).status === 0;
}

export async function startNatsServer(): Promise<LocalNatsServer> {
  if (!installed(BINARY)) throw new Error(`${BINARY} is not installed (apt-get install nats-server)`);
  removeStaleStores();
  mkdirSync(STORE_ROOT, { recursive: true });
  const storeDir = mkdtempSync(join(STORE_ROOT, `${process.pid}-`));
  const forget = atExit(() => rmSync(storeDir, { recursive: true, force: true }));
  const port = await freePort();
  let child: ChildProcess | undefined;

  const launch = async () => {
    const c = spawnTracked("sh", ["-c", WATCHDOG, BINARY, "-a", "127.0.0.1", "-p", String(port), "-js", "-sd", storeDir], {
      // stdin is the lifeline: it closes however this process ends.
      stdio: ["pipe", "pipe", "pipe"],
    });
    child = c;
    const tail = captureTail(c);
    await waitForPort(port, c, "nats-server", 15_000, tail);
  };

  try {
    await launch();
  } catch (err) {
    rmSync(storeDir, { recursive: true, force: true });
    forget();
    throw err;
  }

  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    async stop() {
      if (child) await stopChild(child);
    },
    async restart() {
      if (child) await stopChild(child);
      await launch();
    },
  };
}
