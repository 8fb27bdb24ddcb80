// The console without a browser: message files complete, every key the source
// uses defined, the build within its budgets, the pronunciation preview endpoint
// (full token, the rule's own messages, an MP3) and how it applies a rule.
import { expect } from "chai";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Writable } from "node:stream";
import { startEmbedded, type Embedded } from "../../launch/embedded.js";
import { applyRule, defaultSample } from "../../gateway/routes/pronunciation-preview.js";
import { buildConsole } from "../build.js";

const MESSAGES = path.resolve("console/messages");
const SRC = path.resolve("console/src");

async function sources(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...(await sources(p)));
    else if (e.name.endsWith(".ts")) out.push(await readFile(p, "utf8"));
  }
  return out;
}

describe("publisher console: messages, build and the pronunciation preview", function () {
  this.timeout(120_000);

  it("every language has exactly the English keys, with the same placeholders", async () => {
    const en = JSON.parse(await readFile(path.join(MESSAGES, "en.json"), "utf8")) as Record<string, string>;
    const files = (await readdir(MESSAGES)).filter((f) => f.endsWith(".json"));
    expect(files).to.include.members(["en.json", "de.json"]);
    for (const f of files) {
      const m = JSON.parse(await readFile(path.join(MESSAGES, f), "utf8")) as Record<string, string>;
      expect(Object.keys(m).sort(), f).to.deep.equal(Object.keys(en).sort());
      for (const [k, v] of Object.entries(m)) {
        const vars = (s: string) => [...s.matchAll(/\{(\w+)\}/g)].map((x) => x[1]).sort();
        expect(vars(v), `${f} ${k}`).to.deep.equal(vars(en[k]));
        expect(v.trim(), `${f} ${k}`).not.to.equal("");
      }
    }
  });

  it("every message key the source names exists", async () => {
    const en = JSON.parse(await readFile(path.join(MESSAGES, "en.json"), "utf8")) as Record<string, string>;
    const text = (await sources(SRC)).join("\n");
    const used = new Set([...text.matchAll(/\bt\("([a-zA-Z]+\.[a-zA-Z0-9_.]+)"/g)].map((m) => m[1]));
    for (const m of text.matchAll(/"((?:col|stats|pron|player|import)\.[a-zA-Z0-9_]+)"/g)) used.add(m[1]);
    for (const k of used) expect(en, k).to.have.property(k);
    for (const s of ["waiting", "parsed", "processing", "retry", "fallback", "ready", "errored", "rejected", "limit_reached", "no_money", "recrawling", "deleted"]) {
      expect(en).to.have.property(`status.${s}`);
      expect(en).to.have.property(`status.${s}.meaning`);
    }
  });

  it("builds within the budgets: under 60 KB gzipped for the first page, 120 KB in all, charts in a chunk of their own", () => {
    const { manifest, files } = buildConsole();
    expect(manifest.firstPageJsGzip).to.be.below(60 * 1024);
    expect(manifest.totalJsGzip).to.be.below(120 * 1024);
    const entry = files.find((f) => f.name === manifest.entry)!;
    expect(Buffer.from(entry.contents).toString()).not.to.include("uPlot");
    expect(files.some((f) => f.name.endsWith(".js") && Buffer.from(f.contents).toString().includes("u-legend"))).to.equal(true);
    const html = Buffer.from(files.find((f) => f.name === "index.html")!.contents).toString();
    expect(html).not.to.match(/<script(?![^>]*\bsrc=)/);
    expect(html).not.to.match(/\sstyle=/);
    for (const f of files.filter((x) => x.name !== "index.html")) expect(f.name).to.match(/^assets\/[\w-]+-[A-Z0-9]{8}\.(js|css)$/);
  });

  it("applies a rule to the sample as a provider without phoneme input reads it", () => {
    expect(applyRule("Our reporter Nguyen's story; nguyen again, not Nguyenville.", { match: "Nguyen", say: "Win" })).to.equal("Our reporter Win's story; Win again, not Nguyenville.");
    expect(applyRule("BASF and basf", { match: "BASF", spell: true, caseSensitive: true })).to.equal("B A S F and basf");
    expect(applyRule("Saoirse   Ronan won.", { match: "Saoirse Ronan", say: "Sur-sha Ro-nan" })).to.equal("Sur-sha Ro-nan won.");
    expect(applyRule("Hi Nguyen", { match: "Nguyen", ipa: "ŋwiən" })).to.equal("Hi Nguyen");
    expect(applyRule("A+B rocks", { match: "A+B", say: "A plus B" })).to.equal("A plus B rocks");
    expect(defaultSample("BASF", "de-DE")).to.include("BASF");
  });

  describe("POST /api/pronunciations/preview", () => {
    let dataDir: string;
    let sys: Embedded;
    const FULL = "preview-full-0123456789";
    const READ = "preview-read-0123456789";
    const post = (token: string | undefined, body: unknown) =>
      fetch(`${sys.url}/api/pronunciations/preview`, { method: "POST", headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), "content-type": "application/json" }, body: JSON.stringify(body) });

    before(async () => {
      dataDir = await mkdtemp(path.join(tmpdir(), "console-preview-"));
      sys = await startEmbedded(
        {
          PORT: "0",
          HOST: "127.0.0.1",
          DATA_DIR: dataDir,
          SEED_TOKENS: JSON.stringify([
            { token: FULL, project: "preview", scope: "full" },
            { token: READ, project: "preview", scope: "read" },
          ]),
          AUDIO_ENGINE: process.env.AUDIO_ENGINE,
        },
        new Writable({ write: (_c, _e, cb) => cb() }),
      );
    });
    after(async () => {
      await sys?.close();
      if (dataDir) await rm(dataDir, { recursive: true, force: true });
    });

    it("answers an MP3 of the sample for a full token, and changes no rule", async () => {
      const res = await post(FULL, { rule: { match: "Nguyen", say: "Win" }, text: "Our reporter Nguyen was there.", voice: "alloy", lang: "en-US" });
      expect(res.status).to.equal(200);
      expect(res.headers.get("content-type")).to.equal("audio/mpeg");
      expect(Number(res.headers.get("x-audio-duration"))).to.be.greaterThan(0.5);
      const mp3 = Buffer.from(await res.arrayBuffer());
      expect(mp3.length).to.equal(Number(res.headers.get("content-length")));
      expect(mp3.subarray(0, 3).toString("latin1") === "ID3" || (mp3[0] === 0xff && (mp3[1] & 0xe0) === 0xe0)).to.equal(true);
      const rules = await (await fetch(`${sys.url}/api/pronunciations`, { headers: { authorization: `Bearer ${FULL}` } })).json();
      expect(rules.pronunciations).to.deep.equal([]);
      // A German rule without a voice is spoken in German by default.
      expect((await post(FULL, { rule: { match: "BASF", spell: true, lang: "de" } })).status).to.equal(200);
    });

    it("refuses what PUT /api/pronunciations refuses, naming rule.<field>, and bad sample text or voice", async () => {
      const cases: Array<[unknown, RegExp]> = [
        [{ rule: { match: "Nguyen", say: "Win", spell: true } }, /^rule\.spell: only one of say, spell or ipa/],
        [{ rule: { match: "<b>", say: "x" } }, /^rule\.match: /],
        [{}, /rule/],
        [{ rule: { match: "Nguyen", say: "Win" }, text: "x".repeat(201) }, /text/],
        [{ rule: { match: "Nguyen", say: "Win" }, text: "   " }, /^text: must not be blank/],
        [{ rule: { match: "Nguyen", say: "Win" }, text: "bad \u0001 text" }, /^text: /],
        [{ rule: { match: "Nguyen", say: "Win" }, voice: "de-DE-KatjaNeural", lang: "en-US" }, /lang/],
        [{ rule: { match: "Nguyen", say: "Win" }, voice: "alloy" }, /lang/],
      ];
      for (const [body, message] of cases) {
        const res = await post(FULL, body);
        const json = await res.json();
        expect(res.status, JSON.stringify(body)).to.equal(400);
        expect(json.result).to.equal("fail");
        expect(json.message, JSON.stringify(body)).to.match(message);
      }
    });

    it("needs a full token: 401 without one, 403 for a read token", async () => {
      expect((await post(undefined, { rule: { match: "Nguyen", say: "Win" } })).status).to.equal(401);
      const ro = await post(READ, { rule: { match: "Nguyen", say: "Win" } });
      expect(ro.status).to.equal(403);
      expect((await ro.json()).message).to.match(/read-only/);
    });
  });
});
