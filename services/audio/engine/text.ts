// eSpeak treats some character sequences as markup; article text must always be read as text.

/**
 * "[[...]]" switches the native espeak-ng program (which reads its input with phoneme mode on) to
 * raw phoneme input; a space defuses it. The WASM build reads plain text without SSML or phoneme
 * mode, the same way the program reads everything else, so both engines get the same text.
 */
export function defusePhonemes(text: string): string {
  return (
    text
      .replace(/\[\[/g, "[ [")
      .replace(/\]\]/g, "] ]")
      // Phonemes a pronunciation rule asked for (text/pronounce.ts) arrive between two
      // private-use characters no article text holds; only they become phoneme input.
      .replace(/\uF8F0([^\uF8F0\uF8F1[\]]*)\uF8F1/g, "[[$1]]")
  );
}
