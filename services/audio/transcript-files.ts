// The timed text of a rendered revision, written beside its MP3s: the
// segments as the API serves them, WebVTT and SRT captions, and JSON chapters
// when the article has headings (docs/transcripts.md). Small files, written
// whole; the blob store makes each write atomic.
import { create } from "@bufbuild/protobuf";
import { TranscriptStoredSchema, type TranscriptStored } from "../../gen/articles/v1/articles_pb.js";
import type { BlobStore } from "../../lib/blob/port.js";
import type { audioKeys } from "../../lib/revision-files.js";
import type { TimedSegment } from "../../lib/segments.js";
import { inlineTextWork, type TextWork } from "./text/work.js";

/**
 * Writes the files under the revision's keys; says what CompleteAudioJob reports of them. Their
 * text is made where the article's text work runs (a thread, for the worker): a megabyte of text
 * took a quarter of a second to format, which the event loop must not spend.
 */
export async function storeTranscript(
  blobs: BlobStore,
  keys: ReturnType<typeof audioKeys>,
  segments: readonly TimedSegment[],
  where: { work: TextWork; project: string } = { work: inlineTextWork, project: "" },
): Promise<TranscriptStored> {
  const texts = await where.work.transcripts(where.project, segments);
  await Promise.all([
    blobs.put(keys.segments, Buffer.from(texts.segments), "application/json"),
    blobs.put(keys.vtt, Buffer.from(texts.vtt), "text/vtt; charset=utf-8"),
    blobs.put(keys.srt, Buffer.from(texts.srt), "application/x-subrip; charset=utf-8"),
    // application/json+chapters is the type the feed tag names; the file itself is plain JSON.
    texts.chapters !== undefined && blobs.put(keys.chapters, Buffer.from(texts.chapters), "application/json"),
  ]);
  return create(TranscriptStoredSchema, { chapters: texts.chapters !== undefined });
}
