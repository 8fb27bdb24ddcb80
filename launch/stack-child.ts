// Runs one service entry point under the stack launcher. The launcher holds
// the other end of this process's stdin: when it ends (the launcher exited,
// or was killed outright) the service shuts down gracefully instead of being
// left behind as an orphan. Being re-parented means the same (a pipe can
// outlive its writer when another process inherited it).
// Usage: node --import tsx launch/stack-child.ts <entry>
import path from "node:path";
import { pathToFileURL } from "node:url";
import { watchParent } from "../lib/service.js";

const entry = process.argv[2];
if (!entry) {
  process.stderr.write("usage: stack-child.ts <service entry point>\n");
  process.exit(2);
}

process.stdin.on("end", () => process.kill(process.pid, "SIGTERM"));
process.stdin.on("error", () => process.kill(process.pid, "SIGTERM"));
process.stdin.resume();
watchParent(() => process.kill(process.pid, "SIGTERM"));

await import(pathToFileURL(path.resolve(entry)).href);
