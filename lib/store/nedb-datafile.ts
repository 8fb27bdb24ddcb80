// Reads the datafiles the NeDB release wrote, without NeDB (it has left the
// dependencies), so an old DATA_DIR can be carried over (nedb-upgrade.ts).
//
// A datafile is an append-only log of JSON lines: the last line of an _id is
// the document, a {"$$deleted":true,"_id":…} line removes it, and
// {"$$indexCreated":…} / {"$$indexRemoved":…} lines only describe indexes.
// Dates are written as {"$$date": epoch ms}. A crash can leave the last line
// torn; NeDB dropped such lines when it loaded the file, and so do we.
//
// NeDB held the whole file in memory; an archive's file can be larger than the
// heap. The first pass keeps only the number of each _id's last line, the
// second reads the file again and yields the winning lines in file order, so
// memory grows with the number of documents, not with their size.
import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import { createInterface } from "node:readline";

export type NedbDocument = Record<string, unknown> & { _id: string };

export interface NedbDatafile {
  filename: string;
  bytes: number;
  /** Documents the file holds (after superseded and deleted ones). */
  documents: number;
  /** Unreadable lines NeDB would have skipped too (a torn last line among them). */
  unreadableLines: number;
  /** The documents in the order of their last line; each call reads the file again. */
  read(): AsyncIterable<NedbDocument>;
}

/** NeDB's encoding of a Date, the only special value the stores wrote. */
function revive(this: unknown, _key: string, value: unknown): unknown {
  if (value !== null && typeof value === "object" && !Array.isArray(value)) {
    const keys = Object.keys(value);
    if (keys.length === 1 && keys[0] === "$$date") return new Date((value as { $$date: number }).$$date);
  }
  return value;
}

function parseLine(line: string): Record<string, unknown> | undefined {
  try {
    const v = JSON.parse(line, revive);
    return v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

async function* lines(filename: string): AsyncGenerator<string> {
  const input = createReadStream(filename, { encoding: "utf8", highWaterMark: 1 << 20 });
  const rl = createInterface({ input, crlfDelay: Infinity });
  try {
    for await (const line of rl) yield line;
  } finally {
    rl.close();
    input.destroy();
  }
}

/** Scans `filename` once; throws ENOENT when it does not exist. */
export async function openNedbDatafile(filename: string): Promise<NedbDatafile> {
  const { size } = await stat(filename);
  // _id → number of its last line, or -1 once deleted.
  const last = new Map<string, number>();
  let unreadableLines = 0;
  let n = -1;
  for await (const line of lines(filename)) {
    n++;
    if (line === "") continue;
    const doc = parseLine(line);
    if (!doc) {
      unreadableLines++;
      continue;
    }
    if (doc.$$indexCreated !== undefined || doc.$$indexRemoved !== undefined) continue;
    if (typeof doc._id !== "string") {
      unreadableLines++;
      continue;
    }
    last.set(doc._id, doc.$$deleted === true ? -1 : n);
  }
  const winners = new Uint8Array(n + 1);
  let documents = 0;
  for (const line of last.values()) {
    if (line < 0) continue;
    winners[line] = 1;
    documents++;
  }
  last.clear();

  return {
    filename,
    bytes: size,
    documents,
    unreadableLines,
    async *read() {
      let i = -1;
      for await (const line of lines(filename)) {
        i++;
        // Lines appended after the scan (nothing writes these files any more) are not ours to read.
        if (i >= winners.length) break;
        if (winners[i]) yield parseLine(line) as NedbDocument;
      }
    },
  };
}
