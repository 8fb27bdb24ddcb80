// The server under test for `connectconformance --mode server`: reads one
// size-delimited ServerCompatRequest from stdin, starts ConformanceService on
// our own server stack (startRpcServer: one port, HTTP/1.1 + h2c, the unary
// fast path in front of connect-node), answers with a size-delimited
// ServerCompatResponse on stdout and serves until SIGTERM.
//
// On exit it reports which path answered how many requests on stderr and, when
// CONFORMANCE_SERVED_DIR is set, in a JSON file there, so the run can prove
// that the fast path carried its share (test/conformance/run.sh).
import { writeFileSync } from "node:fs";
import path from "node:path";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { pino } from "pino";
import { startRpcServer } from "../../lib/rpc/server.js";
import { ServerCompatRequestSchema, ServerCompatResponseSchema } from "./gen/connectrpc/conformance/v1/server_compat_pb.js";
import { ConformanceService } from "./gen/connectrpc/conformance/v1/service_pb.js";
import { conformanceRegistry, conformanceRoutes } from "./service.js";

// stdout belongs to the runner's protocol: logs go to stderr.
const log = pino({ level: process.env.LOG_LEVEL ?? "warn", base: { service: "conformance" } }, pino.destination(2));

async function readDelimited(stream: NodeJS.ReadableStream): Promise<Uint8Array> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    chunks.push(chunk as Buffer);
    size += (chunk as Buffer).length;
    if (size >= 4) {
      const all = Buffer.concat(chunks, size);
      const length = all.readUInt32BE(0);
      if (size >= 4 + length) return all.subarray(4, 4 + length);
    }
  }
  throw new Error("stdin ended before a complete ServerCompatRequest arrived");
}

function writeDelimited(bytes: Uint8Array): void {
  const prefix = Buffer.alloc(4);
  prefix.writeUInt32BE(bytes.byteLength, 0);
  process.stdout.write(Buffer.concat([prefix, bytes]));
}

const request = fromBinary(ServerCompatRequestSchema, await readDelimited(process.stdin));
if (request.useTls) throw new Error("TLS is not configured for this server (supports_tls: false in config.yaml)");

const server = await startRpcServer({
  name: "conformance",
  services: [ConformanceService.typeName],
  routes: conformanceRoutes,
  log,
  readMaxBytes: request.messageReceiveLimit > 0 ? request.messageReceiveLimit : undefined,
  jsonOptions: { registry: conformanceRegistry },
});
writeDelimited(toBinary(ServerCompatResponseSchema, create(ServerCompatResponseSchema, { host: "127.0.0.1", port: server.port })));

let stopping = false;
async function stop(): Promise<void> {
  if (stopping) return;
  stopping = true;
  const served = server.served();
  process.stderr.write(`conformance server ${process.pid}: fast path answered ${served.fastPath}, connect-node ${served.connect}\n`);
  const dir = process.env.CONFORMANCE_SERVED_DIR;
  if (dir) writeFileSync(path.join(dir, `served-${process.pid}.json`), JSON.stringify(served));
  await server.close();
  process.exit(0);
}
process.on("SIGTERM", () => void stop());
process.on("SIGINT", () => void stop());
