// The in-memory MongoDB stand-in (de.bwaldvogel:mongo-java-server) on a
// loopback port. Its jars and launcher are built once into a cache dir by
// scripts/ci/mongo-java-server/build.sh; each start is then about a second.
// Its launcher answers a query with an equality on _id from the _id index, as
// MongoDB does (the stand-in alone scans the collection for it: Launcher.java).
import { execFile } from "node:child_process";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { atExit, captureTail, spawnTracked, stopChild } from "./child-servers.js";

export interface LocalServer {
  url: string;
  stop(): Promise<void>;
}

const BUILD = join(dirname(fileURLToPath(import.meta.url)), "../../scripts/ci/mongo-java-server/build.sh");

let built: Promise<string> | undefined;
function buildLauncher(): Promise<string> {
  built ??= promisify(execFile)("bash", [BUILD], { maxBuffer: 1 << 20, timeout: 170_000 }).then(
    ({ stdout }) => stdout.trim().split("\n").pop()!,
    (err: Error & { stderr?: string }) => {
      built = undefined;
      const why = (err.stderr ?? "").trim().split("\n").slice(-3).join(" | ") || err.message;
      throw new Error(`mongo-java-server could not be prepared: ${why}`);
    },
  );
  return built;
}

export async function startMongoServer(): Promise<LocalServer> {
  const dir = await buildLauncher();
  const child = spawnTracked(
    "java",
    ["-Xss1m", "-XX:TieredStopAtLevel=1", "-Dorg.slf4j.simpleLogger.defaultLogLevel=error", "-cp", `${dir}/classes:${dir}/lib/*`, "Launcher", "0"],
    // stdin stays open as a lifeline: the launcher exits when it closes.
    { stdio: ["pipe", "pipe", "pipe"] },
  );
  const tail = captureTail(child);
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`mongo-java-server did not start within 30 s: ${tail()}`));
    }, 30_000);
    let out = "";
    child.stdout!.on("data", (d: Buffer) => {
      out += d.toString();
      const m = /listening (\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
    child.once("error", (e) => {
      clearTimeout(timer);
      reject(new Error(`mongo-java-server could not start: ${e.message}`));
    });
    child.once("exit", (code, sig) => {
      clearTimeout(timer);
      reject(new Error(`mongo-java-server exited (${code ?? sig}) before listening: ${tail()}`));
    });
  });
  const forget = atExit(() => child.stdin?.destroy());
  return {
    url: `mongodb://127.0.0.1:${port}`,
    async stop() {
      forget();
      await stopChild(child);
    },
  };
}
