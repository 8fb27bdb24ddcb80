// Stored article → protobuf message.
import { create } from "@bufbuild/protobuf";
import { ArticleSchema, ArticleStatus, type Article } from "../../gen/articles/v1/articles_pb.js";
import type { ArticleStatus as StoreStatus, StoredArticle, StoredAudio } from "./store/port.js";

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

export function audioUrl(baseUrl: string, key: string): string {
  if (baseUrl !== lastBase) {
    lastTrimmed = baseUrl.replace(TRAILING_SLASHES, "");
    lastBase = baseUrl;
  }
  return `${lastTrimmed}/${key.split("/").map(encodeURIComponent).join("/")}`;
}

export function toProtoArticle(a: StoredArticle, audioBaseUrl: string): Article {
  // The public contract shows audio only when ready and errors only when errored.
  const ready = a.status === "ready";
  const errored = a.status === "errored";
  const file = (f: StoredAudio | undefined) => (ready && f ? { key: f.key, duration: Math.round(f.duration * 1000) / 1000, url: audioUrl(audioBaseUrl, f.key) } : undefined);
  return create(ArticleSchema, {
    id: a.id,
    projectId: a.projectId,
    externalId: a.externalId,
    title: a.title,
    text: a.text,
    prompt: a.prompt,
    added: BigInt(a.added),
    updated: a.updated === null ? undefined : BigInt(a.updated),
    status: statusToProto(a.status),
    url: a.url,
    isRaw: a.isRaw,
    parse: a.parse,
    voice: a.voice,
    lang: a.lang,
    types: a.types.map((t) => ({ name: t.name, score: t.score })),
    audio: file(a.audio),
    audioPreview: file(a.audioPreview),
    error: errored ? a.error : undefined,
    errors: errored ? a.errors.map((e) => ({ error: e.error, date: e.date })) : [],
    labels: a.labels,
    revision: BigInt(a.revision),
  });
}
