// The long-form English article the audio benchmarks speak: numbered paragraphs of seven or
// eight newsroom sentences (~760 characters), cut to the requested length.
const SENTENCES = [
  "The city council approved the new budget on Tuesday after a debate that lasted well into the night.",
  "Dr. Alvarez, who chairs the finance committee, said the plan would cost about 3.5 million dollars over five years.",
  "Critics argued that the money should go to schools first, while supporters pointed to the state of the roads.",
  "The mayor is expected to sign it next week, and the first projects could start in the spring.",
  "Residents who spoke at the meeting asked for more bus routes and longer library hours.",
  "A second vote on the harbour project was postponed until the auditors finish their report.",
];

/** About `chars` characters; `sentencesPerParagraph` shapes the paragraphs (default 7-8). */
export function benchArticle(chars: number, sentencesPerParagraph?: number): string {
  const paras: string[] = [];
  let total = 0;
  for (let p = 0; total < chars; p++) {
    const n = sentencesPerParagraph ?? 7 + (p % 2);
    // Numbered, so that no two paragraphs are the same text, as in a real article.
    let para = `Update ${p + 1}. ${Array.from({ length: n }, (_, i) => SENTENCES[(p + i) % SENTENCES.length]).join(" ")}`;
    if (total + para.length > chars) para = para.slice(0, Math.max(1, chars - total)).replace(/\s+\S*$/, ".");
    paras.push(para);
    total += para.length + 2;
  }
  return paras.join("\n\n");
}
