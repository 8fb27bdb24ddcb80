import { pino } from "pino";
import { startRpcServer } from "../../lib/rpc/server.js";
import { conformanceRoutes } from "./service.js";
const server = await startRpcServer({ name: "c", services: [], routes: conformanceRoutes, log: pino({ level: "silent" }), readMaxBytes: 1000 });
console.log(server.port);
setTimeout(() => process.exit(0), 30000);
