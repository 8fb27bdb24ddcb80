// eSpeak treats some character sequences as markup; article text must always be read as text.

/** "[[...]]" switches eSpeak to raw phoneme input in both builds; a space defuses it. */
export function defusePhonemes(text: string): string {
  return text.replace(/\[\[/g, "[ [").replace(/\]\]/g, "] ]");
}

/**
 * The WASM build parses SSML (tags and entities), so "<", ">" and "&" are escaped to be read
 * aloud the way the native CLI, which does not parse SSML, reads them.
 */
export function escapeSsml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}
