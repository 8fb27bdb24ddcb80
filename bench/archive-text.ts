// The made-up archive of the scale benches (scale.ts, search.ts): the same articles in both, so
// their figures describe the same data.

/**
 * A deterministic article of about `textChars` characters (article `i` of the archive). Prose-like, so that the data size
 * means something for stores that compress: word ranks follow a Zipf-like law over the 149
 * commonest English words and a long tail of made-up words. 1,000-character texts deflate to
 * 0.53 of their size; 1,000-character chunks of our own docs and of the GPL deflate to 0.50,
 * so this text is, if anything, harder to compress than real writing.
 */
const COMMON =
  "the of and to a in that is was he for it with as his on be at by i this had not are but from or have an they which one you were her all she there would their we him been has when who will more no if out so said what up its about into than them can only other new some could time these two may then do first any my now such like our over man me even most made after also did many before must through back years where much your way well down should because each just those people how too little state good very make world still own see men work long get here between both life being under never day same another know while last might us great old year off come since against go came right used take three".split(
    " ",
  );
const SYLLABLES =
  "qua zem wix jor bly fen gru hap oct ulm ny ez yat vok pru dre sku thi amp orn ba ri ton mel sa dor ke lin ver pa mo tes gan li ra chu sel po dan fi ker no vel ta shi ro men ci bal te".split(" ");
export function archiveArticle(i: number, textChars: number): Record<string, unknown> {
  let x = ((i + 1) * 2654435761) >>> 0;
  const random = () => (x = (x * 1103515245 + 12345) >>> 0) / 4294967296;
  const word = () => {
    const rank = Math.floor(Math.exp(random() * Math.log(400_000)));
    if (rank <= COMMON.length) return COMMON[rank - 1];
    let w = "";
    for (let y = (rank * 2654435761) >>> 0, k = 0; k < 2 + (y % 3); k++, y = (y * 1103515245 + 12345) >>> 0) w += SYLLABLES[y % SYLLABLES.length];
    return w;
  };
  const sentences: string[] = [];
  let length = 0;
  while (length < textChars) {
    const s = Array.from({ length: 8 + Math.floor(random() * 14) }, word).join(" ");
    const sentence = `${s[0].toUpperCase()}${s.slice(1)}.`;
    sentences.push(sentence);
    length += sentence.length + 1;
  }
  const a: Record<string, unknown> = { title: `Archive story ${i}: ${word()} ${word()} ${word()}`, text: sentences.join(" "), externalId: `archive-${i}` };
  if (i % 2 === 0) a.url = `https://news.example/archive/${i}`;
  return a;
}

