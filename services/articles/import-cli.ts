// `npm run admin -- import --project <id> --file <ndjson> [--audio onDemand|immediate] [--failures <file>]`:
// an operator's bulk import. The same line handling as POST /api/articles/import
// (gateway/import-stream.ts), sent straight to the articles service with the
// internal token naming the project; no gateway rate limit applies.
import { randomBytes } from "node:crypto";
import { createReadStream, createWriteStream, type WriteStream } from "node:fs";
import type { Client } from "@connectrpc/connect";
import type { ArticlesService } from "../../gen/articles/v1/articles_pb.js";
import { DEFAULT_MAX_BODY_BYTES } from "../../gateway/body.js";
import { articlesSender, audioTimingOf, runImport, summaryLine, type ImportSink } from "../../gateway/import-stream.js";

export interface ImportCommandIo {
  out: (s: string) => void;
  err: (s: string) => void;
}

export interface ImportCommand {
  projectId: string;
  file: string;
  audio?: string;
  /** Where the fail lines go; default: stderr. */
  failures?: string;
  /** The longest line accepted, as the gateway's MAX_BODY_BYTES. */
  maxLineBytes?: number;
  /** How often progress is printed. */
  progressMs?: number;
}

/** `--name value` pairs; anything else is a usage error (thrown as a message). */
export function importArgs(args: string[]): ImportCommand {
  const known: Record<string, keyof ImportCommand> = { "--project": "projectId", "--file": "file", "--audio": "audio", "--failures": "failures" };
  const got: Record<string, string> = {};
  for (let i = 0; i < args.length; i += 2) {
    const key = known[args[i]];
    if (!key) throw new Error(`unexpected argument '${args[i]}'`);
    if (args[i + 1] === undefined) throw new Error(`${args[i]} needs a value`);
    got[key] = args[i + 1];
  }
  if (!got.projectId) throw new Error("--project is required");
  if (!got.file) throw new Error("--file is required");
  return got as unknown as ImportCommand;
}

/** Fail lines of the result text (the CLI keeps only those; ok lines are counted). */
function failuresOf(text: string): string {
  let out = "";
  for (const line of text.split("\n")) if (line.includes('"result":"fail"')) out += `${line}\n`;
  return out;
}

/** Imports the file; resolves to the exit code: 0 every line imported, 1 some failed or the service could not be reached. */
export async function importCommand(client: Client<typeof ArticlesService>, internalToken: string, cmd: ImportCommand, io: ImportCommandIo): Promise<number> {
  const audio = audioTimingOf(cmd.audio);
  const requestId = `import-${randomBytes(6).toString("hex")}`;
  const failures: WriteStream | undefined = cmd.failures ? createWriteStream(cmd.failures) : undefined;
  const sink: ImportSink = failures
    ? { write: (text) => failures.write(failuresOf(text)), drain: () => new Promise((resolve) => failures.once("drain", resolve)) }
    : {
        write: (text) => {
          const f = failuresOf(text);
          if (f) io.err(f.trimEnd());
          return true;
        },
        drain: async () => {},
      };
  const started = performance.now();
  let lastPrint = started;
  const progressMs = cmd.progressMs ?? 2_000;
  const input = createReadStream(cmd.file, { highWaterMark: 1024 * 1024 });
  try {
    const summary = await runImport({
      input,
      out: sink,
      ...articlesSender(client, { authorization: `Bearer ${internalToken}`, requestId, projectId: cmd.projectId }),
      maxLineBytes: cmd.maxLineBytes ?? DEFAULT_MAX_BODY_BYTES,
      audio,
      onProgress: (p) => {
        const now = performance.now();
        if (now - lastPrint < progressMs) return;
        lastPrint = now;
        io.out(`line ${p.lines}: imported ${p.imported}, failed ${p.failed} (${Math.round(((p.imported + p.failed) * 1000) / (now - started))}/s)`);
      },
    });
    const seconds = (performance.now() - started) / 1000;
    io.out(summaryLine(summary).trimEnd());
    io.out(`done in ${seconds.toFixed(1)} s (${Math.round((summary.imported + summary.failed) / Math.max(seconds, 0.001))} lines/s); request id ${requestId}`);
    return summary.failed === 0 ? 0 : 1;
  } finally {
    input.destroy();
    if (failures) await new Promise<void>((resolve) => failures.end(resolve));
  }
}
