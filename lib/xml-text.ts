// Text bound for XML or HTML (podcast feeds, SSML, embed pages, oEmbed
// HTML). XML 1.0 has no way to write some characters at all, not even as
// character references: one of them anywhere makes the whole document not
// well-formed, and a podcast app then drops every item of the feed. The API
// refuses them (lib/text-rules.ts), but rows written by older releases may
// still hold them, so every writer passes its text through here.

// The complement of XML 1.0's Char production within UTF-16: C0 controls
// other than TAB, LF and CR, the noncharacters U+FFFE and U+FFFF, and
// surrogates (with the u flag only unpaired ones match; a pair is one
// code point and allowed).
const FORBIDDEN = "[\\u0000-\\u0008\\u000B\\u000C\\u000E-\\u001F\\uFFFE\\uFFFF\\uD800-\\uDFFF]";
const forbiddenOne = new RegExp(FORBIDDEN, "u");
const forbiddenAll = new RegExp(FORBIDDEN, "gu");

/** True when `s` holds a character XML 1.0 cannot carry. */
export function hasXmlForbidden(s: string): boolean {
  return forbiddenOne.test(s);
}

/** `s` without the characters XML 1.0 cannot carry (the rest unchanged, not escaped). */
export function xmlText(s: string): string {
  return hasXmlForbidden(s) ? s.replace(forbiddenAll, "") : s;
}

const ENTITIES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&apos;" };

/** `s` as XML or HTML character data or a quoted attribute value: forbidden characters dropped, markup escaped. */
export function escapeXml(s: string): string {
  return xmlText(s).replace(/[&<>"']/g, (c) => ENTITIES[c]);
}
