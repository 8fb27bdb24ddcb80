// Timed segments of a rendered revision: where the title, each paragraph and
// each sentence are heard in the full MP3. The audio service records them
// while it renders (services/audio/segments/), stores them beside the MP3s
// and derives the transcripts and chapters from them; the gateway serves them
// to publishers and to the player, which follows the text with them.

/** A sentence as the listener reads it (the article's own words), with its times in the full audio (seconds, ms precision). */
export interface TimedSentence {
  text: string;
  start: number;
  end: number;
}

export interface TimedSegment {
  /** "heading": an h2 or h3 of an article sent as HTML with `parse: true`; each starts a chapter. */
  kind: "title" | "heading" | "paragraph";
  /** The paragraph's text as shown: its sentences joined with spaces. */
  text: string;
  start: number;
  end: number;
  sentences: TimedSentence[];
  /** The heading's level (kind "heading"). Not part of the public answer. */
  heading?: 2 | 3;
}

/** The public form (API answer and the stored `segments.json`): without the internal heading marks. */
export function publicSegments(segments: readonly TimedSegment[]): { result: "ok"; segments: Array<Omit<TimedSegment, "heading">> } {
  return { result: "ok", segments: segments.map(({ heading: _, ...s }) => s) };
}
