// The timed text of a rendered revision, written beside its MP3s: the
// segments as the API serves them, WebVTT and SRT captions, and JSON chapters
// when the article has headings (docs/transcripts.md). Small files, written
// whole; the blob store makes each write atomic.
import { create } from "@bufbuild/protobuf";
import { TranscriptStoredSchema, type TranscriptStored } from "../../gen/articles/v1/articles_pb.js";
import type { BlobStore } from "../../lib/blob/port.js";
import type { audioKeys } from "../../lib/revision-files.js";
import { publicSegments, type TimedSegment } from "../../lib/segments.js";
import { toChapters, toSrt, toWebVtt } from "../../lib/transcripts.js";

/** Writes the files under the revision's keys; says what CompleteAudioJob reports of them. */
export async function storeTranscript(blobs: BlobStore, keys: ReturnType<typeof audioKeys>, segments: readonly TimedSegment[]): Promise<TranscriptStored> {
  const chapters = toChapters(segments);
  await Promise.all([
    blobs.put(keys.segments, Buffer.from(JSON.stringify(publicSegments(segments))), "application/json"),
    blobs.put(keys.vtt, Buffer.from(toWebVtt(segments)), "text/vtt; charset=utf-8"),
    blobs.put(keys.srt, Buffer.from(toSrt(segments)), "application/x-subrip; charset=utf-8"),
    // application/json+chapters is the type the feed tag names; the file itself is plain JSON.
    chapters && blobs.put(keys.chapters, Buffer.from(JSON.stringify(chapters)), "application/json"),
  ]);
  return create(TranscriptStoredSchema, { chapters: chapters !== undefined });
}
