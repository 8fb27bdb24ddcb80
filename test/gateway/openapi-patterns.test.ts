// Every regular expression in the served OpenAPI document must mean the same
// thing to every JSON Schema tool: ECMA-262 (ajv, Swagger UI), Python's `re`
// (schemathesis, hypothesis-jsonschema, jsonschema) and Rust's `regex` crate
// (jsonschema-rs, Rust clients). A pattern one of them refuses makes that
// tool give up on the whole operation.
import { spawnSync } from "node:child_process";
import { expect } from "chai";
import { call, startHarness, type Harness } from "./support.js";

/** Every `pattern` of every schema, with where it is. */
function patternsIn(value: unknown, at = "#", out: Array<{ at: string; pattern: string }> = []): Array<{ at: string; pattern: string }> {
  if (Array.isArray(value)) value.forEach((v, i) => patternsIn(v, `${at}/${i}`, out));
  else if (value && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) {
      if (k === "pattern" && typeof v === "string") out.push({ at: `${at}/pattern`, pattern: v });
      else patternsIn(v, `${at}/${k.replace(/~/g, "~0").replace(/\//g, "~1")}`, out);
    }
  }
  return out;
}

const PYTHON_COMPILE = `
import json, re, sys
out = []
for p in json.load(sys.stdin):
    try:
        re.compile(p)
        out.append(None)
    except re.error as e:
        out.append(str(e))
print(json.dumps(out))
`;

/** What Python's re says of each pattern: null when it compiles. */
function pythonProblems(patterns: string[]): Array<string | null> {
  const run = spawnSync("python3", ["-c", PYTHON_COMPILE], { input: JSON.stringify(patterns), encoding: "utf8" });
  if (run.status !== 0) throw new Error(`python3 failed: ${run.stderr || run.error?.message}`);
  return JSON.parse(run.stdout) as Array<string | null>;
}

/**
 * The Rust regex crate's syntax limits that ECMA-262 and Python do not share:
 * no lookaround, no backreferences, no atomic groups, and escapes name
 * Unicode scalar values only (never a surrogate).
 */
export function rustRegexProblem(p: string): string | null {
  for (let i = 0; i < p.length; i++) {
    const c = p[i];
    if (c === "\\") {
      const next = p[i + 1] ?? "";
      if (/[1-9]/.test(next) || next === "k") return `backreference \\${next} at ${i}`;
      if (next === "u") {
        const hex = /^\{?([0-9a-fA-F]{4,6})/.exec(p.slice(i + 2))?.[1];
        const cp = hex ? parseInt(hex, 16) : NaN;
        if (cp >= 0xd800 && cp <= 0xdfff) return `surrogate escape \\u${hex} at ${i}`;
      }
      i++; // the escaped character is taken literally by the scan
      continue;
    }
    if (c === "(" && p[i + 1] === "?") {
      const rest = p.slice(i + 2);
      if (/^(=|!|<=|<!)/.test(rest)) return `lookaround at ${i}`;
      if (rest.startsWith(">")) return `atomic group at ${i}`;
    }
  }
  return null;
}

describe("gateway: the OpenAPI document's patterns work in every JSON Schema tool", function () {
  let h: Harness;
  let found: Array<{ at: string; pattern: string }>;
  before(async () => {
    h = await startHarness();
    const res = await call(h, "GET", "/api/openapi.json");
    expect(res.status).to.equal(200);
    found = patternsIn(res.body);
  });
  after(async () => {
    await h.close();
  });

  it("finds the document's patterns (the walk is not vacuous)", () => {
    // Query integers, URLs, keys, dates, hosts, categories, e-mail, rule languages...
    expect(found.length).to.be.greaterThan(10);
  });

  it("compiles every pattern as ECMA-262 with the u flag, as ajv does", () => {
    const bad = found.filter(({ pattern }) => {
      try {
        new RegExp(pattern, "u");
        return false;
      } catch {
        return true;
      }
    });
    expect(bad).to.deep.equal([]);
  });

  it("compiles every pattern with Python's re (schemathesis, hypothesis-jsonschema)", () => {
    const problems = pythonProblems(found.map((f) => f.pattern));
    const bad = found.map((f, i) => ({ ...f, problem: problems[i] })).filter((f) => f.problem !== null);
    expect(bad).to.deep.equal([]);
  });

  it("keeps every pattern within the Rust regex crate's syntax (no lookaround, backreferences or surrogates)", () => {
    const bad = found.map((f) => ({ ...f, problem: rustRegexProblem(f.pattern) })).filter((f) => f.problem !== null);
    expect(bad).to.deep.equal([]);
  });

  it("the Rust syntax check itself catches what the crate refuses", () => {
    expect(rustRegexProblem("[\\u0000\\ud800-\\udfff]")).to.match(/surrogate/);
    expect(rustRegexProblem("^(?=.{1,253}$)[a-z]+$")).to.match(/lookaround/);
    expect(rustRegexProblem("(a)\\1")).to.match(/backreference/);
    expect(rustRegexProblem("^[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*$")).to.equal(null);
    expect(rustRegexProblem("\\\\1")).to.equal(null); // an escaped backslash, then a digit
  });
});
