// scripts/install-pico.mjs, the offline way (--from a directory, as an air-gapped site or an
// unpacked Debian package provides the files): it installs exactly the pinned files, refuses a
// file that is not the pinned one without writing anything, and leaves a complete install alone.
// The engine then finds the files through PICO_DIR before anywhere else.
import { expect } from "chai";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { loadLingware, picoDirs } from "../../services/audio/engine/pico/index.js";
// @ts-expect-error: a plain ES module script without types
import { installPico } from "../../scripts/install-pico.mjs";
import { picoFilesOrSkip } from "./pico-support.js";

const install = installPico as (opts: { target?: string; from?: string }) => string;

describe("Pico language files: install step and offline directory", function () {
  let tmp: string;
  let source: string;
  beforeEach(function () {
    const installed = picoFilesOrSkip(this);
    tmp = mkdtempSync(path.join(os.tmpdir(), "pico-install-"));
    source = path.join(tmp, "from");
    mkdirSync(source);
    for (const name of readdirSync(installed).filter((n) => n.endsWith(".bin"))) copyFileSync(path.join(installed, name), path.join(source, name));
  });
  afterEach(() => tmp && rmSync(tmp, { recursive: true, force: true }));

  it("installs the pinned files from a directory, and the engine's loader accepts them", () => {
    const target = path.join(tmp, "target");
    expect(install({ target, from: source })).to.match(/installed/);
    expect(readdirSync(target).sort()).to.deep.equal(["de-DE_gl0_sg.bin", "de-DE_ta.bin", "en-GB_kh0_sg.bin", "en-GB_ta.bin", "en-US_lh0_sg.bin", "en-US_ta.bin"]);
    expect(loadLingware("de-DE", [target]).dir).to.equal(target);
    expect(install({ target, from: path.join(tmp, "nowhere") })).to.match(/already/);
  });

  it("refuses a file that is not the pinned one and writes nothing", () => {
    writeFileSync(path.join(source, "de-DE_ta.bin"), Buffer.alloc(440732, 7));
    const target = path.join(tmp, "target");
    expect(() => install({ target, from: source })).to.throw(/de-DE_ta\.bin .*sha256/);
    expect(existsSync(target)).to.equal(false);
  });

  it("looks in PICO_DIR first, then the installed copy, then Debian's directory", () => {
    const dirs = picoDirs({ PICO_DIR: source });
    expect(dirs[0]).to.equal(source);
    expect(dirs.at(-1)).to.equal("/usr/share/pico/lang");
    expect(loadLingware("de-DE", dirs).dir).to.equal(source);
  });
});
