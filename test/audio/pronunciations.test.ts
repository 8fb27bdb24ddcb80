// Pronunciation rules on the audio side: matched as whole words before
// normalisation, rendered by every provider its own way (Azure SSML, OpenAI
// respelling, local eSpeak phonemes or respelling), and part of the chunk
// cache key only where a chunk holds them.
import { expect } from "chai";
import type { PronunciationRule } from "../../lib/pronunciations.js";
import { chunkKey } from "../../services/audio/cache/key.js";
import { createLocalEngine, type SpeechEngine } from "../../services/audio/engine/index.js";
import { findNativePrograms } from "../../services/audio/engine/native.js";
import { defusePhonemes } from "../../services/audio/engine/text.js";
import { mp3Duration } from "../../services/audio/mp3/index.js";
import { renderWithProviders } from "../../services/audio/pipeline.js";
import { createAzureProvider, createOpenAiProvider, createSpeechRouter, localProvider } from "../../services/audio/providers/index.js";
import { engineText } from "../../services/audio/providers/local.js";
import { prepareText } from "../../services/audio/text/index.js";
import { ipaToEspeak, markPronunciations, respellMarks } from "../../services/audio/text/pronounce.js";
import { FAKE_AZURE_KEY, FAKE_OPENAI_KEY, startFakeProvidersOnEngine, type FakeProviders } from "../support/fake-providers.js";

const signal = () => new AbortController().signal;

const RULES: PronunciationRule[] = [
  { match: "Nguyen", ipa: "ŋwiən", say: "Win" },
  { match: "BASF", spell: true },
  { match: "Saoirse Ronan", say: "Sur-sha Ro-nan" },
  { match: "Reading", caseSensitive: true, say: "Redding", lang: "en" },
  { match: "Köln", say: "Kölle", lang: "de-DE" },
];

const spoken = (text: string, lang = "en-US", isRaw = false) => prepareText({ title: "T", text, lang, isRaw, pronunciations: RULES })[1];

describe("pronunciation rules: matching and rendering", () => {
  it("matches whole words and phrases, ignoring case unless the rule says otherwise", () => {
    const t = spoken("Mr. Nguyen met nguyen, not Nguyenville; Saoirse  Ronan and BASF's chief came to Reading, reading notes.");
    expect(respellMarks(t, RULES, "en-US")).to.equal("Mister Win met Win, not Nguyenville; Sur-sha Ro-nan and B A S F's chief came to Redding, reading notes.");
  });

  it("applies only the rules of the article's language, and German spelling uses German letter names", () => {
    expect(respellMarks(spoken("In Köln sprach BASF-Chef Nguyen in Reading.", "de-DE"), RULES, "de-DE")).to.equal("In Kölle sprach Beh Ah Ess Eff-Chef Win in Reading.");
    expect(respellMarks(spoken("Köln is in Germany.", "en-US"), RULES, "en-US")).to.equal("Köln is in Germany.");
  });

  it("keeps the mark through normalisation and applies to raw text too", () => {
    const t = spoken("Nguyen paid $5 on 11/22/2026.");
    expect(respellMarks(t, RULES, "en-US")).to.equal("Win paid five dollars on November twenty-second, twenty twenty-six.");
    expect(respellMarks(spoken("Nguyen paid $5.", "en-US", true), RULES, "en-US")).to.equal("Win paid $5.");
  });

  it("leaves text without rules untouched", () => {
    expect(markPronunciations("Nguyen", [], "en-US")).to.equal("Nguyen");
    expect(prepareText({ title: "T", text: "Nguyen spoke.", lang: "en-US" })[1]).to.equal("Nguyen spoke.");
  });

  it("converts common IPA to eSpeak phonemes and refuses symbols it does not know", () => {
    expect(ipaToEspeak("ŋwiən")).to.equal("Nwi@n");
    expect(ipaToEspeak("ˈʃɪkəɡoʊ")).to.equal("'SIk@goU");
    expect(ipaToEspeak("ʕ")).to.equal(undefined);
  });

  it("gives the native engine phoneme input for IPA rules and the WASM engine the respelling", () => {
    const t = spoken("Nguyen and BASF.");
    const native = engineText(t, RULES, "en-US", true);
    expect(defusePhonemes(native)).to.equal("[[Nwi@n]] and B A S F.");
    expect(engineText(t, RULES, "en-US", false)).to.equal("Win and B A S F.");
    // Article text can still never switch eSpeak to phoneme input by itself.
    expect(defusePhonemes("a [[h@l'oU]] b")).to.equal("a [ [h@l'oU] ] b");
  });
});

describe("pronunciation rules: chunk cache key", () => {
  const id = { provider: "openai", model: "tts-1", voice: "alloy", lang: "en-US" };
  const marked = spoken("Nguyen spoke.");
  const plain = spoken("Smith spoke.");

  it("changes when a rule the chunk holds changes, and not for rules it does not hold", () => {
    const base = chunkKey({ ...id, text: marked, pronunciations: RULES });
    const changedOwn = RULES.map((r, i) => (i === 0 ? { ...r, ipa: "nwiən" } : r));
    const changedOther = RULES.map((r, i) => (i === 2 ? { ...r, say: "Ser-sha" } : r));
    expect(chunkKey({ ...id, text: marked, pronunciations: changedOwn })).not.to.equal(base);
    expect(chunkKey({ ...id, text: marked, pronunciations: changedOther })).to.equal(base);
  });

  it("is the key of old for a chunk without marks, whatever the rules", () => {
    expect(chunkKey({ ...id, text: plain, pronunciations: RULES })).to.equal(chunkKey({ ...id, text: plain }));
  });
});

describe("pronunciation rules: what each provider is sent", function () {
  this.timeout(120_000);
  let engine: SpeechEngine;
  let fake: FakeProviders;

  before(async () => {
    engine = await createLocalEngine({ threads: 2 });
    fake = await startFakeProvidersOnEngine(engine);
  });
  after(async () => {
    await fake?.close();
    await engine?.close();
  });

  const text = () => spoken("Nguyen of BASF met Saoirse Ronan & friends.");

  it("Azure gets SSML phoneme, say-as and sub elements around the words as written", async () => {
    const azure = createAzureProvider({ key: FAKE_AZURE_KEY, endpoint: fake.azureEndpoint });
    await azure.synthesize({ text: text(), voice: "en-US-JennyNeural", lang: "en-US", pronunciations: RULES }, signal());
    const call = fake.callsTo("azure").at(-1)!;
    expect(call.violation).to.equal(undefined);
    expect(call.ssml?.elements).to.deep.equal([
      '<phoneme alphabet="ipa" ph="ŋwiən">Nguyen</phoneme>',
      '<say-as interpret-as="characters">BASF</say-as>',
      '<sub alias="Sur-sha Ro-nan">Saoirse Ronan</sub>',
    ]);
    expect(call.ssml?.text).to.equal("Nguyen of BASF met Saoirse Ronan and friends.");
  });

  it("OpenAI gets the respelling; an IPA rule falls back to its say", async () => {
    const openai = createOpenAiProvider({ apiKey: FAKE_OPENAI_KEY, baseUrl: fake.openaiBaseUrl });
    await openai.synthesize({ text: text(), voice: "alloy", lang: "en-US", pronunciations: RULES }, signal());
    expect(fake.callsTo("openai").at(-1)!.json?.input).to.equal("Win of B A S F met Sur-sha Ro-nan and friends.");
  });

  it("an IPA rule without say reaches OpenAI as the word as written", async () => {
    const openai = createOpenAiProvider({ apiKey: FAKE_OPENAI_KEY, baseUrl: fake.openaiBaseUrl });
    const rules: PronunciationRule[] = [{ match: "Nguyen", ipa: "ŋwiən" }];
    const t = prepareText({ title: "T", text: "Nguyen spoke.", lang: "en-US", pronunciations: rules })[1];
    await openai.synthesize({ text: t, voice: "alloy", lang: "en-US", pronunciations: rules }, signal());
    expect(fake.callsTo("openai").at(-1)!.json?.input).to.equal("Nguyen spoke.");
  });

  it("the whole provider path hands the article's rules to the provider", async () => {
    const openai = createOpenAiProvider({ apiKey: FAKE_OPENAI_KEY, baseUrl: fake.openaiBaseUrl });
    const router = createSpeechRouter({ providers: { openai, local: localProvider(engine) } });
    const before = fake.callsTo("openai").length;
    await renderWithProviders({ title: "BASF results", text: "Nguyen spoke for BASF.", lang: "en-US", voice: "alloy", pronunciations: RULES }, router);
    const inputs = fake.callsTo("openai").slice(before).map((c) => String(c.json?.input));
    expect(inputs.join(" ")).to.include("B A S F results").and.include("Win spoke for B A S F.");
  });
});

describe("pronunciation rules: the local engine", function () {
  this.timeout(120_000);

  /** Seconds of speech for one sentence, with and without a rule, on one engine. */
  async function durations(engine: SpeechEngine, rules: PronunciationRule[], sentence: string): Promise<[number, number]> {
    const p = localProvider(engine);
    const marked = prepareText({ title: "T", text: sentence, lang: "en-US", pronunciations: rules })[1];
    const plain = prepareText({ title: "T", text: sentence, lang: "en-US" })[1];
    const withRule = await p.synthesize({ text: marked, voice: "alloy", lang: "en-US", pronunciations: rules }, signal());
    const without = await p.synthesize({ text: plain, voice: "alloy", lang: "en-US" }, signal());
    return [mp3Duration(withRule), mp3Duration(without)];
  }

  it("reads a respelling rule (WASM engine)", async () => {
    const engine = await createLocalEngine({ native: "never", threads: 1 });
    try {
      const [withRule, without] = await durations(engine, [{ match: "UN", say: "United Nations Organisation of the whole world" }], "The UN met.");
      expect(withRule - without).to.be.greaterThan(1);
    } finally {
      await engine.close();
    }
  });

  it("reads IPA as eSpeak phonemes (native engine)", async function () {
    if (!(await findNativePrograms())) this.skip();
    const engine = await createLocalEngine({ native: "always", threads: 1 });
    try {
      // Phonemes for a long made-up name in place of a short word: the audio gets clearly longer.
      const [withRule, without] = await durations(engine, [{ match: "Ng", ipa: "ŋwiənˌtʃakəˌbɑːlədɪˌmaʊsənˌtɛkəlo" }], "Ng spoke.");
      expect(withRule - without).to.be.greaterThan(1);
    } finally {
      await engine.close();
    }
  });
});
