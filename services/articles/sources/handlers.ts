// SourcesService: a project's sources, scoped by the caller's token (read
// scope lists and reads, full scope writes). Every field is checked here as
// well as at the gateway: this service is where the data lives.
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, type HandlerContext, type ServiceImpl } from "@connectrpc/connect";
import { SourceSchema, type Source, type SourceFields, type SourcesService } from "../../../gen/articles/v1/sources_pb.js";
import type { Logger } from "../../../lib/log.js";
import { checkTarget, UnsafeUrlError, type SafeFetchOptions } from "../../../lib/net/safe-fetch.js";
import { requirePublisher, type CallerResolver } from "../../../lib/rpc/caller.js";
import { newArticleId } from "../ids.js";
import * as v from "../validate.js";
import { BACKFILL_MAX, POLL_SECONDS, SOURCE_KINDS, SOURCE_MODES, type SourceKind } from "../../../lib/sources.js";
import type { SourcePoller } from "./poller.js";
import { SourceLimitError, type SourceDoc, type SourceMode, type SourceSettings, type SourceStore } from "./port.js";


export interface SourceHandlerDeps {
  store: SourceStore;
  poller: SourcePoller;
  resolveCaller: CallerResolver;
  log: Logger;
  /** Sources one project may follow. */
  maxPerProject: number;
  /** The allow-list of private targets (FETCH_ALLOW_PRIVATE); a source URL is checked as a fetch would be. */
  fetchOptions?: SafeFetchOptions;
}

const notFound = (id: string) => new ConnectError(`Source '${id}' not found`, Code.NotFound);
const seconds = (ms: number | undefined) => (ms === undefined ? undefined : BigInt(ms));

export function toProtoSource(d: SourceDoc): Source {
  return create(SourceSchema, {
    id: d._id,
    url: d.url,
    kind: d.kind ?? d.detected ?? "",
    kindGiven: d.kind !== undefined,
    pollSeconds: d.pollSeconds,
    paused: d.paused,
    labels: d.labels,
    voice: d.voice,
    lang: d.lang,
    mode: d.mode,
    backfill: d.backfill,
    added: BigInt(d.added),
    since: BigInt(d.since),
    state: {
      lastPoll: seconds(d.lastPoll),
      lastSuccess: seconds(d.lastSuccess),
      nextPoll: BigInt(d.nextPoll),
      seen: BigInt(d.seen),
      created: BigInt(d.created),
      updated: BigInt(d.updated),
      error: d.error ?? "",
    },
  });
}

/** The fields a request sets, checked; on create the absent ones take their defaults. */
async function settingsOf(f: SourceFields | undefined, deps: SourceHandlerDeps, base?: SourceSettings): Promise<SourceSettings> {
  const fields = f ?? ({} as SourceFields);
  let url = base?.url;
  if (fields.url !== undefined) {
    url = v.optionalUrl(fields.url);
    try {
      await checkTarget(url!, { allowPrivate: deps.fetchOptions?.allowPrivate, resolve: deps.fetchOptions?.resolve });
    } catch (err) {
      if (err instanceof UnsafeUrlError) throw v.invalid(`url: ${err.message}`);
      throw err;
    }
  }
  if (!url) throw v.invalid("url is required: the address of an RSS, Atom or JSON feed or a sitemap");
  let kind = base?.kind;
  if (fields.kind !== undefined) {
    if (!(SOURCE_KINDS as readonly string[]).includes(fields.kind)) throw v.invalid(`kind must be one of ${SOURCE_KINDS.join(", ")}`);
    kind = fields.kind as SourceKind;
  }
  const pollSeconds = fields.pollSeconds ?? base?.pollSeconds ?? POLL_SECONDS.default;
  if (!Number.isInteger(pollSeconds) || pollSeconds < POLL_SECONDS.min || pollSeconds > POLL_SECONDS.max) {
    throw v.invalid(`pollSeconds must be a whole number from ${POLL_SECONDS.min} to ${POLL_SECONDS.max}`);
  }
  const mode = (fields.mode ?? base?.mode ?? "text") as SourceMode;
  if (!(SOURCE_MODES as readonly string[]).includes(mode)) throw v.invalid("mode must be text or page");
  const backfill = fields.backfill ?? base?.backfill ?? 0;
  if (!Number.isInteger(backfill) || backfill < 0 || backfill > BACKFILL_MAX) throw v.invalid(`backfill must be a whole number from 0 to ${BACKFILL_MAX}`);
  const voiceLang = fields.voice !== undefined || fields.lang !== undefined ? v.voiceAndLang(fields.voice, fields.lang) : base?.voice && base.lang ? { voice: base.voice, lang: base.lang } : undefined;
  return {
    url,
    ...(kind ? { kind } : {}),
    pollSeconds,
    labels: fields.labels ? v.labelList(fields.labels.values) : (base?.labels ?? []),
    ...(voiceLang ?? {}),
    mode,
    backfill,
    paused: fields.paused ?? base?.paused ?? false,
  };
}

export function sourceHandlers(deps: SourceHandlerDeps): ServiceImpl<typeof SourcesService> {
  const { store, poller, log } = deps;
  const publisher = async (ctx: HandlerContext, scope: "read" | "full") => requirePublisher(await deps.resolveCaller(ctx.requestHeader), scope);
  const existing = async (projectId: string, id: string) => {
    const src = await store.get(projectId, v.requiredId("id", id));
    if (!src) throw notFound(id);
    return src;
  };

  return {
    async createSource(req, ctx) {
      const { projectId } = await publisher(ctx, "full");
      const settings = await settingsOf(req.fields, deps);
      const now = Date.now();
      const id = newArticleId(`source ${new URL(settings.url).hostname}`);
      const doc: SourceDoc = { _id: id, projectId, ...settings, added: now, since: now, nextPoll: now, seen: 0, created: 0, updated: 0, failures: 0, leaseUntil: 0 };
      try {
        await store.insert(doc, deps.maxPerProject);
      } catch (err) {
        if (err instanceof SourceLimitError) throw new ConnectError(err.message, Code.ResourceExhausted);
        throw err;
      }
      log.info({ sourceId: id, projectId, url: settings.url }, "source added");
      // The first poll runs now, in the background: the answer does not wait for the feed.
      if (!settings.paused) poller.wake();
      return { id };
    },
    async listSources(_req, ctx) {
      const { projectId } = await publisher(ctx, "read");
      return { sources: (await store.list(projectId)).map(toProtoSource) };
    },
    async getSource(req, ctx) {
      const { projectId } = await publisher(ctx, "read");
      return { source: toProtoSource(await existing(projectId, req.id)) };
    },
    async updateSource(req, ctx) {
      const { projectId } = await publisher(ctx, "full");
      const before = await existing(projectId, req.id);
      const settings = await settingsOf(req.fields, deps, before);
      const set: Partial<SourceDoc> = { ...settings };
      // Another feed: its validators and baseline are not this one's; it is polled now.
      if (settings.url !== before.url) Object.assign(set, { etag: "", lastModified: "", primed: false, baseline: [], since: Date.now(), nextPoll: Date.now(), failures: 0 });
      // Resumed: polled now rather than at a next poll that may lie in the past or far ahead.
      if (before.paused && !settings.paused) set.nextPoll = Date.now();
      const after = await store.update(projectId, before._id, set);
      if (!after) throw notFound(req.id);
      log.info({ sourceId: after._id, projectId }, "source updated");
      if (!after.paused) poller.wake();
      return { source: toProtoSource(after) };
    },
    async deleteSource(req, ctx) {
      const { projectId } = await publisher(ctx, "full");
      if (!(await store.remove(projectId, v.requiredId("id", req.id)))) throw notFound(req.id);
      log.info({ sourceId: req.id, projectId }, "source deleted; its articles are kept");
      return {};
    },
    async pollSource(req, ctx) {
      const { projectId } = await publisher(ctx, "full");
      const after = await poller.pollNow(projectId, v.requiredId("id", req.id));
      if (!after) throw notFound(req.id);
      return { source: toProtoSource(after) };
    },
  };
}
