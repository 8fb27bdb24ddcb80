// Protobuf articles → the spec's JSON shapes. The two shapes differ on
// purpose (externalId vs external_id) because the spec says so.
import { ArticleStatus, type Article } from "../gen/articles/v1/articles_pb.js";
import { publicUrl } from "./public-links.js";

/** ARTICLE_STATUS_NO_MONEY → "no_money"; an unset status reads as waiting. */
export function statusName(status: ArticleStatus): string {
  const name = ArticleStatus[status];
  if (!name || status === ArticleStatus.UNSPECIFIED) return "waiting";
  return name.toLowerCase();
}

/** "no_money" → ARTICLE_STATUS_NO_MONEY (a name the request schema admitted); undefined for none. */
export function statusFromName(name: string | undefined): ArticleStatus | undefined {
  return name === undefined ? undefined : ArticleStatus[name.toUpperCase() as keyof typeof ArticleStatus];
}

const orNull = <T>(v: T | undefined): T | null => (v === undefined ? null : v);
const seconds = (v: bigint | undefined): number | null => (v === undefined ? null : Number(v));

/** `base`: where root-relative audio URLs point (public-links.ts). */
function audioFields(a: Article, base: string): Record<string, string | number> {
  if (a.status !== ArticleStatus.READY) return {};
  const out: Record<string, string | number> = {};
  if (a.audio?.url) {
    out.audio = publicUrl(base, a.audio.url);
    out.audio_duration = a.audio.duration;
  }
  if (a.audioPreview?.url) {
    out.audio_preview = publicUrl(base, a.audioPreview.url);
    out.audio_preview_duration = a.audioPreview.duration;
  }
  return out;
}

export function articleJson(a: Article, base: string): Record<string, unknown> {
  const out: Record<string, unknown> = {
    id: a.id,
    externalId: orNull(a.externalId),
    title: a.title,
    text: a.text,
    prompt: orNull(a.prompt),
    added: Number(a.added),
    updated: seconds(a.updated),
    status: statusName(a.status),
    url: orNull(a.url),
    isRaw: a.isRaw,
    voice: a.voice,
    lang: a.lang,
    labels: a.labels,
    published: orNull(a.published),
  };
  if (a.warning) out.warning = a.warning;
  if (a.types.length > 0) out.type = a.types.map((t) => ({ Name: t.name, Score: t.score }));
  Object.assign(out, audioFields(a, base));
  if (a.status === ArticleStatus.ERRORED) {
    out.error = a.error ?? a.errors.at(-1)?.error ?? "";
    out.errors = a.errors.map((e) => ({ error: e.error, date: e.date }));
  }
  return out;
}

export function listItemJson(a: Article, base: string): Record<string, unknown> {
  return {
    id: a.id,
    external_id: orNull(a.externalId),
    title: a.title,
    text: a.text,
    added: Number(a.added),
    updated: seconds(a.updated),
    status: statusName(a.status),
    url: orNull(a.url),
    isRaw: a.isRaw,
    voice: a.voice,
    lang: a.lang,
    labels: a.labels,
    published: orNull(a.published),
    ...audioFields(a, base),
  };
}
