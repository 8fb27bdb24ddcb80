// One JSON logger for every process. LOG_LEVEL picks the level; LOG_PRETTY is
// not offered on purpose: logs are for machines first, `jq` reads them fine.
import { pino, type Logger } from "pino";

export type { Logger };

// Asynchronous writes: under load, lines written while a write is in flight
// go out together in one syscall instead of one blocking write per line
// (the gateway's access log is one line per request). pino flushes what is
// left synchronously when the process exits.
const destination = pino.destination({ dest: 1, sync: false });

const root = pino({
  // LOG_LEVEL= (empty) means unset, as for every other variable (lib/config.ts).
  level: process.env.LOG_LEVEL || (process.env.NODE_ENV === "test" ? "silent" : "info"),
  base: { pid: process.pid },
  timestamp: pino.stdTimeFunctions.isoTime,
  // Credentials must never reach a log line, whatever a caller passes in.
  redact: {
    paths: ["token", "*.token", "authorization", "*.authorization", "headers.authorization", "req.headers.authorization"],
    censor: "[redacted]",
  },
}, destination);

export function logger(service: string): Logger {
  return root.child({ service });
}
