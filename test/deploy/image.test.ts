import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { expect } from "chai";

const ROOT = path.resolve(import.meta.dirname, "../..");
const read = (file: string) => readFile(path.join(ROOT, file), "utf8");
const run = promisify(execFile);

/** The Dockerfile's instructions, continuation lines joined, comments dropped. */
function instructions(dockerfile: string): string[] {
  return dockerfile
    .split("\n")
    .filter((line) => !line.trimStart().startsWith("#"))
    .join("\n")
    .replace(/\\\n/g, " ")
    .split("\n")
    .map((line) => line.trim())
    .filter(Boolean);
}

/** `^A.B.C || ^D.E.F` (the only form engines uses) against a version. */
function satisfiesCaretRanges(range: string, version: string): boolean {
  const [major, minor, patch] = version.split(".").map(Number);
  return range.split("||").some((part) => {
    const m = /^\^(\d+)\.(\d+)\.(\d+)$/.exec(part.trim());
    if (!m) throw new Error(`unexpected engines range ${part}`);
    const [a, b, c] = m.slice(1).map(Number);
    return major === a && (minor > b || (minor === b && patch >= c));
  });
}

describe("deploy: container image and Node.js versions", () => {
  let imageNode: string;

  before(async () => {
    const m = /^ARG NODE_IMAGE=node:(\d+\.\d+\.\d+)-bookworm-slim$/m.exec(await read("Dockerfile"));
    expect(m, "Dockerfile: ARG NODE_IMAGE=node:<exact version>-bookworm-slim").to.not.equal(null);
    imageNode = m![1];
  });

  it("builds on an exact Node.js 24 LTS base, the version CI tests and the fallback base is built with", async () => {
    expect(imageNode.split(".")[0], "Node.js 20 is past its end of life").to.equal("24");
    expect(/NODE24_VERSION:-([\d.]+)\}/.exec(await read("scripts/ci/node24.sh"))?.[1], "scripts/ci/node24.sh").to.equal(imageNode);
    expect(/NODE_VERSION:-([\d.]+)\}/.exec(await read("deploy/build-node-base.sh"))?.[1], "deploy/build-node-base.sh").to.equal(imageNode);
  });

  it("checks the installed tree right after every npm ci, in the same RUN", async () => {
    const runs = instructions(await read("Dockerfile")).filter((i) => /^RUN\b.*\bnpm ci\b/.test(i));
    expect(runs).to.have.length(2);
    for (const instruction of runs) {
      const omitDev = /npm ci[^&;|]*--omit=dev/.test(instruction);
      const after = instruction.slice(instruction.indexOf("npm ci"));
      // Chained with && only: a ";" or "||" would let a failed check pass the step.
      expect(after, instruction).to.not.match(/;|\|\|/);
      const ls = after.split("&&").map((s) => s.trim()).find((s) => s.startsWith("npm ls"));
      expect(ls, `${instruction}: npm ls after npm ci`).to.be.a("string");
      expect(ls, instruction).to.include("--all");
      expect(ls!.includes("--omit=dev"), `${instruction}: npm ls checks the tree npm ci made`).to.equal(omitDev);
      const check = after.split("&&").map((s) => s.trim()).find((s) => s.includes("check-node-modules.mjs"));
      expect(check, `${instruction}: check-node-modules.mjs after npm ci`).to.match(/^node /);
      expect(check!.includes("--omit=dev"), instruction).to.equal(omitDev);
    }
  });

  it("npm ci installs the prebuilt SQLite binding without compiling it, so no compiler is needed on Node.js 24 or in the image", async () => {
    // npm ci takes from the lock whether to run its default `node-gyp rebuild` for a package with a
    // binding.gyp; the lock npm writes drops better-sqlite3's "gypfile": false (scripts/complete-lock.py).
    const lock = JSON.parse(await read("package-lock.json")) as { packages: Record<string, { version?: string; gypfile?: boolean; optional?: boolean }> };
    const binding = lock.packages["node_modules/better-sqlite3"];
    expect(Number(binding.version!.split(".")[0]), "better-sqlite3 on Node.js 22+ is the Node-API build").to.be.at.least(13);
    expect(binding.gypfile, "node_modules/better-sqlite3: gypfile false in the lock").to.equal(false);
    expect(lock.packages["node_modules/better-sqlite3-node20"]?.optional, "Node.js 20's build is optional").to.equal(true);
    const docker = await read("Dockerfile");
    expect(docker).to.not.match(/\bg\+\+|\bpython3\b/);
    for (const run of instructions(docker).filter((i) => /\bnpm ci\b/.test(i))) expect(run, "the image leaves Node.js 20's build out").to.include("--omit=optional");
  });

  it("bakes in Kokoro's and Pico's files, each checked against its pin, and keeps only this platform's ONNX Runtime", async () => {
    const steps = instructions(await read("Dockerfile"));
    const deps = steps.find((i) => /^RUN\b.*npm ci --omit=dev/.test(i))!;
    // install-voices.mjs --check exits non-zero on a missing or wrong Kokoro file; installPico throws.
    expect(deps).to.match(/&&\s+node scripts\/install-voices\.mjs --check\s+&&/);
    expect(deps).to.match(/installPico\(\{ from: "[^"]+\/usr\/share\/pico\/lang" \}\)/);
    // The Debian package the pins were taken from, at that version.
    const debian = /libttspico-data (\S+) /.exec(JSON.parse(await read("services/audio/engine/pico/lingware.json")).comment)?.[1];
    expect(debian, "lingware.json names the Debian version").to.be.a("string");
    expect(deps).to.include(`apt-get download -qq libttspico-data=${debian} `);
    expect(deps).to.include("find node_modules/onnxruntime-node/bin -mindepth 2 -maxdepth 2 -type d ! -name linux -exec rm -rf {} +");
    expect(deps).to.include('find node_modules/onnxruntime-node/bin -mindepth 3 -maxdepth 3 -type d ! -name "$arch" -exec rm -rf {} +');
    // The runtime stage takes node_modules (with node_modules/.article-audio/pico) and .voices from there.
    expect(steps).to.include("COPY --from=deps /app/node_modules ./node_modules");
    expect(steps).to.include("COPY --from=deps /app/.voices ./.voices");
  });

  it("carries the licences of the model, the voices, the engines and the runtime (docs/voices.md) in the image", async () => {
    expect(instructions(await read("Dockerfile"))).to.include("COPY docs/voices.md ./docs/voices.md");
    const ignored = (await read(".dockerignore")).split("\n");
    expect(ignored.indexOf("!docs/voices.md"), ".dockerignore lets docs/voices.md through").to.be.greaterThan(ignored.indexOf("docs"));
    const voices = await read("docs/voices.md");
    const licences = voices.slice(voices.indexOf("## Licences and provenance"));
    const row = (name: string) => licences.split("\n").find((line) => line.startsWith(`| ${name}`)) ?? "";
    expect(row("Kokoro-82M weights")).to.include("Apache-2.0").and.to.match(/commercial/);
    expect(row("The int8 model file")).to.match(/sha256/);
    expect(row("SVOX Pico")).to.include("Apache-2.0");
    expect(row("ONNX Runtime")).to.include("MIT");
    expect(row("eSpeak NG")).to.include("GPL-3.0");
  });

  it("package.json engines names the Node.js lines CI tests, and this run's Node.js is one of them", async () => {
    const engines = JSON.parse(await read("package.json")).engines.node as string;
    expect(engines).to.match(/^\^20\.\d+\.\d+ \|\| \^24\.\d+\.\d+$/);
    expect(satisfiesCaretRanges(engines, imageNode), `the image's ${imageNode}`).to.equal(true);
    expect(satisfiesCaretRanges(engines, process.versions.node), `this Node.js ${process.versions.node}`).to.equal(true);
  });
});

describe("scripts/ci/check-node-modules.mjs", () => {
  const script = path.join(ROOT, "scripts/ci/check-node-modules.mjs");
  let dir: string;

  const pkg = async (name: string, manifest: Record<string, unknown>, files: string[]) => {
    const at = path.join(dir, "node_modules", name);
    await mkdir(at, { recursive: true });
    await writeFile(path.join(at, "package.json"), JSON.stringify({ name, ...manifest }));
    for (const f of files) {
      await mkdir(path.dirname(path.join(at, f)), { recursive: true });
      await writeFile(path.join(at, f), "");
    }
  };
  const check = async (...args: string[]) => {
    try {
      const { stdout } = await run(process.execPath, [script, ...args], { cwd: dir });
      return { code: 0, out: stdout };
    } catch (err) {
      const e = err as { code: number; stdout: string; stderr: string };
      return { code: e.code, out: e.stdout + e.stderr };
    }
  };

  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "check-node-modules-"));
    await writeFile(
      path.join(dir, "package-lock.json"),
      JSON.stringify({
        lockfileVersion: 3,
        packages: {
          "": { name: "fixture" },
          "node_modules/plain": { version: "1.0.0" },
          "node_modules/@scope/esm": { version: "2.1.0" },
          "node_modules/tool": { version: "3.0.0", dev: true },
          "node_modules/other-platform": { version: "1.0.0", optional: true },
        },
      }),
    );
    await pkg("plain", { version: "1.0.0", main: "lib/index" }, ["lib/index.js"]);
    // Conditions Node.js never resolves (browser, types) may name files a package does not ship.
    await pkg("@scope/esm", {
      version: "2.1.0",
      exports: { ".": { types: "./none.d.ts", browser: "./none.js", import: "./dist/index.mjs", require: "./dist/index.cjs" }, "./extra": "./absent.js" },
      bin: { esm: "bin/cli.js" },
    }, ["dist/index.mjs", "dist/index.cjs", "bin/cli.js"]);
    await pkg("tool", { version: "3.0.0", main: "index.js" }, ["index.js"]);
  });

  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("passes a complete tree, without absent optional packages", async () => {
    expect(await check()).to.include({ code: 0 });
    expect(await check("--omit=dev")).to.include({ code: 0 });
  });

  it("fails on a half-extracted package: its package.json is there, its entry files are not", async () => {
    await rm(path.join(dir, "node_modules/@scope/esm/dist"), { recursive: true });
    const r = await check("--omit=dev");
    expect(r.code).to.equal(1);
    expect(r.out).to.include("node_modules/@scope/esm: ./dist/index.mjs missing");
    expect(r.out).to.include("node_modules/@scope/esm: ./dist/index.cjs missing");
  });

  it("fails on a missing package, a missing main, a missing bin and a version other than the lock's", async () => {
    await rm(path.join(dir, "node_modules/plain/lib"), { recursive: true });
    await rm(path.join(dir, "node_modules/@scope/esm/bin"), { recursive: true });
    await rm(path.join(dir, "node_modules/tool"), { recursive: true });
    await pkg("other-platform", { version: "0.9.0" }, []);
    const r = await check();
    expect(r.code).to.equal(1);
    expect(r.out).to.include("node_modules/plain: main lib/index missing");
    expect(r.out).to.include("node_modules/@scope/esm: bin/cli.js missing");
    expect(r.out).to.include("node_modules/tool: missing");
    expect(r.out).to.include("node_modules/other-platform: version 0.9.0, lock says 1.0.0");
  });

  it("with --omit=dev ignores development packages, as npm ci --omit=dev leaves them out", async () => {
    await rm(path.join(dir, "node_modules/tool"), { recursive: true });
    expect(await check("--omit=dev")).to.include({ code: 0 });
    expect((await check()).code).to.equal(1);
  });
});
