// A strict XML well-formedness check. fast-xml-parser's XMLValidator (and
// sax in strict mode) let characters through that XML 1.0 forbids, which is
// exactly what made podcast apps refuse our feeds; Python's expat refuses
// them the way those apps do ("not well-formed (invalid token)"). Both run:
// XMLValidator for structure, expat for the characters.
import { spawnSync } from "node:child_process";
import { XMLValidator } from "fast-xml-parser";

const EXPAT = `
import base64, json, sys
import xml.parsers.expat
out = []
for doc in json.load(sys.stdin):
    p = xml.parsers.expat.ParserCreate()
    try:
        p.Parse(base64.b64decode(doc), True)
        out.append(None)
    except xml.parsers.expat.ExpatError as e:
        out.append(str(e))
print(json.dumps(out))
`;

/** For each document (the bytes as served), null when well-formed, else what the parsers said. */
export function strictXmlProblems(docs: Array<Uint8Array | string>): Array<string | null> {
  const bytes = docs.map((d) => (typeof d === "string" ? Buffer.from(d, "utf8") : Buffer.from(d)));
  const run = spawnSync("python3", ["-c", EXPAT], { input: JSON.stringify(bytes.map((b) => b.toString("base64"))), encoding: "utf8" });
  if (run.status !== 0) throw new Error(`python3 expat check failed: ${run.stderr || run.error?.message}`);
  const expat = JSON.parse(run.stdout) as Array<string | null>;
  return bytes.map((b, i) => {
    const structure = XMLValidator.validate(b.toString("utf8"));
    const problems = [structure === true ? null : `XMLValidator: ${structure.err.msg} (line ${structure.err.line})`, expat[i] === null ? null : `expat: ${expat[i]}`].filter(Boolean);
    return problems.length ? problems.join("; ") : null;
  });
}
