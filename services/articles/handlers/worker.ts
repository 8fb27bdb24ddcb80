// The audio worker's calls (internal credential only): claim, progress,
// result and failure, each applied only to the revision it names.
import type { ServiceImpl } from "@connectrpc/connect";
import { ArticleStatus as ProtoStatus, type ArticlesService } from "../../../gen/articles/v1/articles_pb.js";
import { requestIdFields, requestIdOf } from "../../../lib/rpc/request-id.js";
import { statusFromProto } from "../convert.js";
import type { StoredAudio } from "../store/port.js";
import * as v from "../validate.js";
import type { HandlerShared } from "./context.js";
import { ruleToProto } from "../../../lib/rpc/pronunciations.js";
import { withoutHeadingMarks } from "../../../lib/headings.js";

type WorkerCalls = Pick<ServiceImpl<typeof ArticlesService>, "claimAudioJob" | "reportAudioStatus" | "completeAudioJob" | "failAudioJob">;

const MAX_ERROR_CHARS = 2_000;
const WORKER_STATUSES = new Set(["processing", "retry", "fallback"] as const);

const trimError = (e: string) => (e.length > MAX_ERROR_CHARS ? `${e.slice(0, MAX_ERROR_CHARS)}…` : e);

export const revisionOf = (r: bigint) => {
  if (r < 1n || r > BigInt(Number.MAX_SAFE_INTEGER)) throw v.invalid("revision must be 1 or more");
  return Number(r);
};

function readAudio(field: string, f: { key: string; duration: number } | undefined, required: boolean): StoredAudio | undefined {
  if (!f) {
    if (required) throw v.invalid(`${field} is required`);
    return undefined;
  }
  if (!f.key) throw v.invalid(`${field}.key is required`);
  if (!Number.isFinite(f.duration) || f.duration < 0) throw v.invalid(`${field}.duration must be a non-negative number of seconds`);
  return { key: f.key, duration: f.duration };
}

export function workerHandlers(s: HandlerShared): WorkerCalls {
  const { store, log, emit, settings, internal, toProto, audioFiles } = s;
  return {
    async claimAudioJob(req, ctx) {
      await internal(ctx);
      const id = v.requiredId("articleId", req.articleId);
      const a = await store.claim(id, revisionOf(req.revision));
      if (!a) return { stale: true };
      emit(a);
      // The worker reads what admission decided to speak (parsed or recrawled text), already plain
      // text, whose h2/h3 paragraphs carry extraction's heading marks (lib/headings.ts). A
      // publisher's own plain text cannot carry them: its two mark characters go as plain spaces.
      const article = toProto(a);
      if (a.spokenText !== undefined) {
        article.text = a.spokenText;
        article.parse = false;
      } else if (!a.parse) article.text = withoutHeadingMarks(article.text);
      return { stale: false, article, pronunciations: (a.pronunciations ?? []).map(ruleToProto), loudness: a.loudness };
    },

    async reportAudioStatus(req, ctx) {
      await internal(ctx);
      const id = v.requiredId("articleId", req.articleId);
      if (req.keepAlive) {
        if (req.status !== ProtoStatus.UNSPECIFIED || req.error || req.audioPreview) throw v.invalid("keepAlive: without status, error or audioPreview");
        return { applied: (await store.keepDue(id, revisionOf(req.revision))) !== null };
      }
      const status = statusFromProto(req.status);
      if (!status || !WORKER_STATUSES.has(status as never)) {
        throw v.invalid(`status must be one of ${[ProtoStatus.PROCESSING, ProtoStatus.RETRY, ProtoStatus.FALLBACK].map((s) => ProtoStatus[s]).join(", ")}`);
      }
      const preview = readAudio("audioPreview", req.audioPreview, false);
      if (preview && status !== "processing") throw v.invalid("audioPreview: only with status PROCESSING");
      const changed = preview
        ? await store.reportPreview(id, revisionOf(req.revision), preview)
        : await store.reportStatus(id, revisionOf(req.revision), status as "processing" | "retry" | "fallback", req.error ? trimError(req.error) : undefined);
      // A preview changes no status: no event for it.
      if (changed && !preview) emit(changed);
      return { applied: changed !== null };
    },

    async completeAudioJob(req, ctx) {
      await internal(ctx);
      const id = v.requiredId("articleId", req.articleId);
      const revision = revisionOf(req.revision);
      const audio = readAudio("audio", req.audio, true)!;
      const preview = readAudio("audioPreview", req.audioPreview, false);
      const transcript = req.transcript ? { chapters: req.transcript.chapters } : undefined;
      const changed = await store.complete(id, revision, { audio, preview, transcript });
      const applied = changed !== null;
      if (changed) emit(changed);
      else if (audioFiles) {
        // The files were written for a deleted article or a superseded revision: garbage.
        const now = await store.getById(id).catch(() => null);
        if (now?.status === "deleted") await audioFiles.removeAll(id);
        else if (now && now.revision > revision) audioFiles.supersede(id, now.revision);
      }
      log.info({ articleId: id, revision, applied, provider: req.provider || undefined, ...requestIdFields(requestIdOf(ctx)) }, applied ? "audio ready" : "late audio result discarded");
      return { applied };
    },

    async failAudioJob(req, ctx) {
      await internal(ctx);
      const id = v.requiredId("articleId", req.articleId);
      const revision = revisionOf(req.revision);
      const a = await store.fail(id, revision, trimError(req.error || "Audio generation failed"));
      const applied = a !== null;
      if (a) {
        emit(a);
        // A synthesis that ended errored gives its characters back, once.
        if (a.reservedChars && (await store.takeReservation(id, revision, a.reservedChars))) {
          await settings.refund(a.projectId, a.reservedChars).catch((err: unknown) => log.error({ err, articleId: id, chars: a.reservedChars }, "refund failed"));
        }
      }
      log.info({ articleId: id, revision, applied, ...requestIdFields(requestIdOf(ctx)) }, applied ? "audio failed" : "late failure discarded");
      return { applied };
    },
  };
}
