// Where a rendered revision's files live in the blob store: everything under
// "<articleId>/<revision>/", so takedown and supersession remove a revision's
// files by that prefix (services/articles/audio-files.ts). The audio worker
// writes these keys and the articles service hands out links to them, so the
// names are kept here, once.
export const audioKeys = (articleId: string, revision: number | bigint) => {
  const dir = `${articleId}/${revision}`;
  return {
    full: `${dir}/full.mp3`,
    preview: `${dir}/preview.mp3`,
    /** The timed segments as the API serves them (lib/segments.ts publicSegments). */
    segments: `${dir}/segments.json`,
    vtt: `${dir}/transcript.vtt`,
    srt: `${dir}/transcript.srt`,
    /** Only for articles with headings. */
    chapters: `${dir}/chapters.json`,
    /**
     * Audio on demand while it is made: the full file's audio in playing order, a part per
     * rendered chunk (lib/live-audio.ts), and a marker written after the last part.
     */
    live: (n: number) => `${dir}/live/${n}.mp3`,
    liveEnd: `${dir}/live/end`,
    liveDir: `${dir}/live/`,
  };
};
