// Characters that have no business in identifiers, URLs and labels: control
// characters (NUL included), unpaired UTF-16 surrogates (they cannot be
// encoded, so a stored id could never be read back), the Unicode bidi
// controls (they make an id display as something it is not) and the
// noncharacters U+FFFE/U+FFFF. Free text (titles, body text, prompts) may
// hold anything XML 1.0 can carry, since titles end up in podcast feeds and
// text in SSML. Shared by the gateway's JSON Schemas (as the x-characters
// keyword, checked in code: a pattern for this would need surrogate ranges,
// which Python's and Rust's regex engines refuse) and the services' own
// checks, so direct RPC callers meet the same rules as REST clients.
import type { KeywordDefinition, SchemaValidateFunction } from "ajv";
import { hasXmlForbidden } from "./xml-text.js";

/** Pattern a value must match to be more than whitespace. */
export const NOT_BLANK = "\\S";

const unsafeId = /[\u0000-\u001f\u007f\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff\ufffe\uffff]/u;

export const UNSAFE_ID_MESSAGE = "must not contain control characters, unpaired surrogates, bidirectional-text controls or U+FFFE/U+FFFF";
export const UNSAFE_TEXT_MESSAGE = "must not contain control characters other than tab and line breaks, unpaired surrogates or U+FFFE/U+FFFF";

/** Null when the value is acceptable as an id, URL or label; otherwise why not. */
export function unsafeIdProblem(value: string): string | null {
  return unsafeId.test(value) ? UNSAFE_ID_MESSAGE : null;
}

/** Null when the value is acceptable as free text (anything XML 1.0 can carry); otherwise why not. */
export function unsafeTextProblem(value: string): string | null {
  return hasXmlForbidden(value) ? UNSAFE_TEXT_MESSAGE : null;
}

/** JSON Schema keyword (an OpenAPI "x-" extension): `"x-characters": "id"` or `"text"` applies the rule of that name to a string. */
export const CHARACTERS_KEYWORD = "x-characters";
export type CharacterRule = "id" | "text";

const checkCharacters: SchemaValidateFunction = (rule: CharacterRule, data: string) => {
  const problem = rule === "id" ? unsafeIdProblem(data) : unsafeTextProblem(data);
  checkCharacters.errors = problem ? [{ keyword: CHARACTERS_KEYWORD, message: problem, params: { rule } }] : undefined;
  return problem === null;
};

/** Teaches an ajv instance the x-characters keyword. */
export function addCharacterRules(ajv: { addKeyword(def: KeywordDefinition): unknown }): void {
  ajv.addKeyword({ keyword: CHARACTERS_KEYWORD, type: "string", schemaType: "string", errors: true, validate: checkCharacters });
}
