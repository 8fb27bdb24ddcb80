// The console without a browser: message files complete, every key the source
// uses defined, the build within its budgets. The pronunciation preview endpoint
// it calls is tested in test/gateway/pronunciation-preview.test.ts.
import { expect } from "chai";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
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

describe("publisher console: messages and build", function () {
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
    const counted = [...text.matchAll(/\btn\("([a-zA-Z]+\.[a-zA-Z0-9_.]+)"/g)].map((m) => m[1]);
    for (const k of counted) used.delete(k);
    for (const k of used) expect(en, k).to.have.property(k);
    // Counted messages (tn) have at least the forms "one" and "other", chosen by Intl.PluralRules.
    expect(counted.length).to.be.greaterThan(0);
    for (const k of counted) for (const form of ["one", "other"]) expect(en, `${k}.${form}`).to.have.property(`${k}.${form}`);
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
});
