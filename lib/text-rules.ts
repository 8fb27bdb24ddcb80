// Characters that have no business in identifiers, URLs and labels: control
// characters (NUL included), unpaired UTF-16 surrogates (they cannot be
// encoded, so a stored id could never be read back) and the Unicode bidi
// controls (they make an id display as something it is not). Shared by the
// gateway's JSON Schemas (as pattern text) and the services' own checks, so
// direct RPC callers meet the same rules as REST clients.

/** ECMAScript pattern (for JSON Schema `pattern`, evaluated with the `u` flag) matching one refused character. */
export const UNSAFE_ID_CHAR = "[\\u0000-\\u001f\\u007f\\u200e\\u200f\\u202a-\\u202e\\u2066-\\u2069\\ud800-\\udfff]";
/** Pattern matching a NUL or an unpaired surrogate: refused in free text such as titles. */
export const UNSAFE_TEXT_CHAR = "[\\u0000\\ud800-\\udfff]";
/** Pattern a value must match to be more than whitespace. */
export const NOT_BLANK = "\\S";

const unsafeId = new RegExp(UNSAFE_ID_CHAR, "u");
const unsafeText = new RegExp(UNSAFE_TEXT_CHAR, "u");

export const UNSAFE_ID_MESSAGE = "must not contain control characters, unpaired surrogates or bidirectional-text controls";
export const UNSAFE_TEXT_MESSAGE = "must not contain NUL characters or unpaired surrogates";

/** Null when the value is acceptable as an id, URL or label; otherwise why not. */
export function unsafeIdProblem(value: string): string | null {
  return unsafeId.test(value) ? UNSAFE_ID_MESSAGE : null;
}

export function unsafeTextProblem(value: string): string | null {
  return unsafeText.test(value) ? UNSAFE_TEXT_MESSAGE : null;
}
