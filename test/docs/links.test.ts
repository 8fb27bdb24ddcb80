// Every relative link in the repository's Markdown resolves inside a clone:
// the file exists, and a #fragment names a heading of the file it points at.
import { expect } from "chai";
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, statSync } from "node:fs";
import path from "node:path";

const ROOT = path.resolve(import.meta.dirname ?? path.dirname(new URL(import.meta.url).pathname), "../..");

/** GitHub's heading anchors: lowercase, punctuation dropped, spaces to hyphens, repeats numbered. */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of withoutFences(markdown).split("\n")) {
    const m = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const base = m[1]
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "")
      .replace(/ /g, "-");
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n ? `${base}-${n}` : base);
  }
  return anchors;
}

const withoutFences = (markdown: string) => markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, "");

/** Code blocks and inline code hold examples, not links. */
const withoutCode = (markdown: string) => withoutFences(markdown).replace(/`[^`\n]*`/g, "``");

function relativeLinks(markdown: string): string[] {
  const out: string[] = [];
  for (const m of withoutCode(markdown).matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
    const target = m[1];
    if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith("//")) continue; // http:, mailto:, …
    out.push(target);
  }
  return out;
}

const markdownFiles = () =>
  execFileSync("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard", "*.md"], { cwd: ROOT, encoding: "utf8" })
    .split("\0")
    .filter((f) => f && !f.includes("node_modules/") && existsSync(path.join(ROOT, f)));

describe("documentation links", () => {
  it("finds GitHub's anchors for headings", () => {
    const anchors = headingAnchors("# Limits and isolation\n## 1. Embedded default: `npm start`\n## Notes\n## Notes\n```\n# not a heading\n```\n");
    expect([...anchors]).to.deep.equal(["limits-and-isolation", "1-embedded-default-npm-start", "notes", "notes-1"]);
  });

  it("resolves every relative link of every Markdown file inside the repository", () => {
    const files = markdownFiles();
    expect(files).to.include.members(["README.md", "docs/api.md"]);
    const broken: string[] = [];
    let checked = 0;
    for (const file of files) {
      const text = readFileSync(path.join(ROOT, file), "utf8");
      for (const link of relativeLinks(text)) {
        checked++;
        const [target, fragment] = link.split("#", 2) as [string, string | undefined];
        const resolved = target ? path.resolve(path.dirname(path.join(ROOT, file)), decodeURIComponent(target)) : path.join(ROOT, file);
        if (path.relative(ROOT, resolved).startsWith("..")) {
          broken.push(`${file}: ${link} points outside the repository`);
          continue;
        }
        if (!existsSync(resolved)) {
          broken.push(`${file}: ${link} does not exist`);
          continue;
        }
        if (fragment && statSync(resolved).isFile() && resolved.endsWith(".md") && !headingAnchors(readFileSync(resolved, "utf8")).has(decodeURIComponent(fragment))) {
          broken.push(`${file}: ${link} names no heading of ${path.relative(ROOT, resolved)}`);
        }
      }
    }
    expect(checked).to.be.greaterThan(50);
    expect(broken, broken.join("\n")).to.deep.equal([]);
  });
});
