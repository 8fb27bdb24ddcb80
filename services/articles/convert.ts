// Stored article → protobuf message.
import { ArticleStatus, type Article, type AudioFile, type TextFile, type Transcript } from "../../gen/articles/v1/articles_pb.js";
import { audioKeys } from "../../lib/revision-files.js";
import type { ArticleStatus as StoreStatus, ListedArticle, StoredArticle, StoredAudio } from "./store/port.js";

export function statusToProto(s: StoreStatus): ArticleStatus {
  return ArticleStatus[s.toUpperCase() as keyof typeof ArticleStatus] ?? ArticleStatus.UNSPECIFIED;
}

export function statusFromProto(s: ArticleStatus): StoreStatus | undefined {
  const name = ArticleStatus[s];
  return name && s !== ArticleStatus.UNSPECIFIED ? (name.toLowerCase() as StoreStatus) : undefined;
}

const TRAILING_SLASHES = /\/+$/;
// One base per process in practice: trim it once, not per article of every read.
let lastBase = "";
let lastTrimmed = "";

// Keys are made of ids and file names; only unusual ones need encoding.
const URL_SAFE_KEY = /^[A-Za-z0-9._~/-]*$/;

export function audioUrl(baseUrl: string, key: string): string {
  if (baseUrl !== lastBase) {
    lastTrimmed = baseUrl.replace(TRAILING_SLASHES, "");
    lastBase = baseUrl;
  }
  return `${lastTrimmed}/${URL_SAFE_KEY.test(key) ? key : key.split("/").map(encodeURIComponent).join("/")}`;
}

export function audioFile(f: StoredAudio | undefined, audioBaseUrl: string): AudioFile | undefined {
  if (!f) return undefined;
  return { $typeName: "articles.v1.AudioFile", key: f.key, duration: Math.round(f.duration * 1000) / 1000, url: audioUrl(audioBaseUrl, f.key) };
}

const textFile = (key: string, audioBaseUrl: string): TextFile => ({ $typeName: "articles.v1.TextFile", key, url: audioUrl(audioBaseUrl, key) });

/**
 * The timed text files of the article's ready revision: the audio is the current revision's
 * (a new revision drops both), so its keys follow from id and revision.
 */
export function transcriptFiles(a: Pick<StoredArticle, "id" | "revision" | "transcript">, audioBaseUrl: string): Transcript | undefined {
  if (!a.transcript) return undefined;
  const keys = audioKeys(a.id, a.revision);
  return {
    $typeName: "articles.v1.Transcript",
    segments: textFile(keys.segments, audioBaseUrl),
    vtt: textFile(keys.vtt, audioBaseUrl),
    srt: textFile(keys.srt, audioBaseUrl),
    chapters: a.transcript.chapters ? textFile(keys.chapters, audioBaseUrl) : undefined,
  };
}

/**
 * Built as a complete message literal rather than through create(): every
 * field is given here (the type checker holds us to it), and create()'s
 * reflective walk over the schema was a tenth of the CPU of a list page.
 * Stored documents may hold null where a field is unset; create() skipped
 * those, so `?? undefined` does here.
 */
export function toProtoArticle(a: StoredArticle | ListedArticle, audioBaseUrl: string): Article {
  // The public contract shows audio only when ready and errors only when errored.
  const ready = a.status === "ready";
  const errored = a.status === "errored";
  return {
    $typeName: "articles.v1.Article",
    id: a.id,
    projectId: a.projectId,
    externalId: a.externalId ?? undefined,
    title: a.title,
    text: a.text,
    prompt: a.prompt ?? undefined,
    added: BigInt(a.added),
    updated: a.updated === null ? undefined : BigInt(a.updated),
    status: statusToProto(a.status),
    url: a.url ?? undefined,
    isRaw: a.isRaw,
    parse: a.parse,
    voice: a.voice,
    lang: a.lang,
    types: a.types.map((t) => ({ $typeName: "articles.v1.ContentType", name: t.name, score: t.score })),
    audio: ready ? audioFile(a.audio, audioBaseUrl) : undefined,
    audioPreview: ready ? audioFile(a.audioPreview, audioBaseUrl) : undefined,
    error: errored ? (a.error ?? undefined) : undefined,
    errors: errored ? a.errors.map((e) => ({ $typeName: "articles.v1.ArticleError", error: e.error, date: e.date })) : [],
    labels: a.labels,
    revision: BigInt(a.revision),
    transcript: ready ? transcriptFiles(a, audioBaseUrl) : undefined,
    published: a.published ?? undefined,
    warning: a.warning ?? undefined,
  };
}
