// The import engine on its own (gateway/import-stream.ts): line splitting
// across chunks, flow control both ways, a service that fails midway.
import { Code, ConnectError } from "@connectrpc/connect";
import { expect } from "chai";
import { mapError } from "../../gateway/errors.js";
import { runImport, type CreateOutcome, type ImportOptions, type ImportSink } from "../../gateway/import-stream.js";

const row = (i: number) => JSON.stringify({ title: `T${i}`, text: "x" });

/** Yields the text in chunks of `size` bytes, counting what was pulled. */
function chunked(text: string, size: number) {
  const buf = Buffer.from(text);
  const state = { pulled: 0 };
  async function* gen() {
    for (let i = 0; i < buf.length; i += size) {
      state.pulled = Math.min(buf.length, i + size);
      yield buf.subarray(i, i + size);
    }
  }
  return { input: gen(), state };
}

function collector(): ImportSink & { text: () => string; lines: () => any[] } {
  let out = "";
  return {
    write: (t) => {
      out += t;
      return true;
    },
    drain: async () => {},
    text: () => out,
    lines: () => out.split("\n").filter(Boolean).map((l) => JSON.parse(l)),
  };
}

const okSend: ImportOptions["send"] = async (items, lines) => items.map((_, i): CreateOutcome => ({ id: `id-${lines[i]}` }));
const failureOf = (err: unknown) => mapError(err, "req-1");

describe("gateway: import engine", () => {
  it("splits lines across chunks of any size, numbers physical lines (CRLF too), and fails an over-long line alone", async () => {
    const long = JSON.stringify({ title: "Long", text: "y".repeat(500) });
    const text = [row(1), "", row(3), long, "\r", row(6)].join("\r\n") + "\r\n" + row(7);
    for (const size of [1, 7, 64, 4096]) {
      const out = collector();
      const { input } = chunked(text, size);
      const summary = await runImport({ input, out, send: okSend, failureOf, maxLineBytes: 200 });
      expect(out.lines().map((l) => [l.line, l.result, l.status])).to.deep.equal(
        [
          [1, "ok", undefined],
          [3, "ok", undefined],
          [4, "fail", 413],
          [6, "ok", undefined],
          [7, "ok", undefined],
        ],
        `chunk size ${size}`,
      );
      expect(summary).to.deep.equal({ imported: 4, failed: 1 });
    }
  });

  it("stops reading the input while the answer is not read, and goes on when it is", async () => {
    const total = 20_000;
    const text = Array.from({ length: total }, (_, i) => row(i + 1)).join("\n");
    const { input, state } = chunked(text, 1024);
    let open = false;
    let release: () => void = () => {};
    const released = new Promise<void>((r) => (release = r));
    let written = 0;
    const out: ImportSink = {
      write: (t) => {
        written += t.split("\n").length - 1;
        return open;
      },
      drain: () => released,
    };
    const done = runImport({ input, out, send: okSend, failureOf, maxLineBytes: 1000, maxOutstanding: 4 });
    await new Promise((r) => setTimeout(r, 300));
    // One batch written and waiting for drain, a few more outstanding: nowhere near the whole input.
    const linesPulled = text.slice(0, state.pulled).split("\n").length;
    expect(linesPulled).to.be.below(6 * 64 + 100);
    expect(written).to.be.at.most(64);
    open = true;
    release();
    const summary = await done;
    expect(summary).to.deep.equal({ imported: total, failed: 0 });
  });

  it("keeps at most maxOutstanding calls in flight, 64 creates each", async () => {
    let inFlight = 0;
    let most = 0;
    const sizes: number[] = [];
    const send: ImportOptions["send"] = async (items, lines) => {
      inFlight++;
      most = Math.max(most, inFlight);
      sizes.push(items.length);
      await new Promise((r) => setTimeout(r, 5));
      inFlight--;
      return okSend(items, lines);
    };
    const text = Array.from({ length: 2000 }, (_, i) => row(i + 1)).join("\n");
    const out = collector();
    const summary = await runImport({ input: chunked(text, 64 * 1024).input, out, send, failureOf, maxLineBytes: 1000, maxOutstanding: 3 });
    expect(summary.imported).to.equal(2000);
    expect(most).to.be.at.most(3);
    expect(Math.max(...sizes)).to.equal(64);
    expect(out.lines().map((l) => l.line)).to.deep.equal(Array.from({ length: 2000 }, (_, i) => i + 1));
  });

  it("a service that fails midway: the lines not done fail with 503, later ones are not sent, the summary still comes", async () => {
    let calls = 0;
    const send: ImportOptions["send"] = async (items, lines) => {
      if (++calls === 3) throw new ConnectError("connect ECONNREFUSED", Code.Unavailable);
      return okSend(items, lines);
    };
    const text = Array.from({ length: 640 }, (_, i) => (i === 600 ? "{oops" : row(i + 1))).join("\n");
    const out = collector();
    const summary = await runImport({ input: chunked(text, 64 * 1024).input, out, send, failureOf, maxLineBytes: 1000, maxOutstanding: 1 });
    const lines = out.lines();
    expect(calls).to.equal(3);
    expect(lines.slice(0, 128).every((l) => l.result === "ok")).to.equal(true);
    const rest = lines.slice(128);
    expect(rest).to.have.length(640 - 128);
    expect(rest.filter((l) => l.status === 503)).to.have.length(640 - 128 - 1);
    expect(rest.find((l) => l.line === 601)).to.include({ status: 400 });
    expect(rest[0].message).to.match(/retry/);
    expect(summary).to.deep.equal({ imported: 128, failed: 512 });
  });

  it("stops reading and sending once aborted (the client left)", async () => {
    const abort = new AbortController();
    let sent = 0;
    const send: ImportOptions["send"] = async (items, lines) => {
      sent += items.length;
      if (sent >= 128) abort.abort();
      return okSend(items, lines);
    };
    const text = Array.from({ length: 5000 }, (_, i) => row(i + 1)).join("\n");
    const { input, state } = chunked(text, 4096);
    await runImport({ input, out: collector(), send, failureOf, maxLineBytes: 1000, signal: abort.signal, maxOutstanding: 1 });
    expect(sent).to.be.below(64 * 3);
    expect(state.pulled).to.be.below(text.length / 4);
  });

  it("a BOM is taken at the start of the body only, even split across chunks; on a later line that line fails", async () => {
    const bom = "\uFEFF";
    const out = collector();
    const { input } = chunked(`${bom}${row(1)}\n${bom}${row(2)}\n${row(3)}\n`, 2);
    const s = await runImport({ input, out, send: okSend, failureOf, maxLineBytes: 1024 });
    const [l1, l2, l3] = out.lines();
    expect(l1).to.deep.equal({ line: 1, result: "ok", id: "id-1" });
    expect(l2).to.include({ line: 2, result: "fail", status: 400 });
    expect(l2.message).to.match(/byte order mark/);
    expect(l3).to.deep.equal({ line: 3, result: "ok", id: "id-3" });
    expect(s).to.deep.equal({ imported: 2, failed: 1 });
  });

  it("every line is paced, blank and invalid ones too, and a repeated bad line gets the same answer", async () => {
    const paced: number[] = [];
    const out = collector();
    const lines = [row(1), "", "x", "x", "{}", "[]", '"a"', "   ", row(2)];
    const { input } = chunked(lines.join("\n") + "\n", 7);
    const s = await runImport({ input, out, send: okSend, failureOf, maxLineBytes: 1024, pace: async (n) => void paced.push(n) });
    expect(paced.reduce((a, b) => a + b, 0)).to.equal(lines.length);
    expect(s).to.deep.equal({ imported: 2, failed: 5 });
    const fails = out.lines().filter((l) => l.result === "fail");
    expect(fails.map((l) => l.line)).to.deep.equal([3, 4, 5, 6, 7]);
    expect(fails[1].message).to.equal(fails[0].message);
  });

  it("a flood of invalid lines in one chunk lets the event loop run in between (a timer set at the start fires long before the end)", async () => {
    // 100,000 distinct invalid lines in a single chunk: nothing in the input itself gives the loop a turn.
    const body = Buffer.from(Array.from({ length: 100_000 }, (_, i) => `x${i}`).join("\n") + "\n");
    async function* input() {
      yield body;
    }
    let timerFiredAt = -1;
    let linesAtTimer = -1;
    let written = 0;
    const out: ImportSink = {
      write: (t) => {
        written += t.split("\n").length - 1;
        return true;
      },
      drain: async () => {},
    };
    setTimeout(() => {
      timerFiredAt = performance.now();
      linesAtTimer = written;
    }, 0);
    const s = await runImport({ input: input(), out, send: okSend, failureOf, maxLineBytes: 1024 });
    expect(s.failed).to.equal(100_000);
    expect(timerFiredAt).to.be.greaterThan(0);
    expect(linesAtTimer).to.be.below(50_000);
  });
});
