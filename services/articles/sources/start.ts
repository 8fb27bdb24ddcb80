// The sources part of the articles service: its store, the poller every
// replica runs, and the SourcesService handlers, built on the same create,
// update and recrawl as a publisher's calls.
import type { ServiceImpl } from "@connectrpc/connect";
import type { SourcesService } from "../../../gen/articles/v1/sources_pb.js";
import type { Logger } from "../../../lib/log.js";
import type { SafeFetchOptions } from "../../../lib/net/safe-fetch.js";
import type { CallerResolver } from "../../../lib/rpc/caller.js";
import type { Admission } from "../admission/admit.js";
import { recrawlArticle } from "../admission/recrawl.js";
import type { ProjectSettingsSource } from "../admission/settings.js";
import type { StatusEmitter } from "../events/publish.js";
import { createArticleWrites } from "../handlers/article-writes.js";
import type { HandlerShared } from "../handlers/context.js";
import { articleCreator } from "../handlers/create.js";
import { sourceHandlers } from "./handlers.js";
import { openEmbeddedSourceStore } from "./open.js";
import { DEFAULT_SOURCE_LIMITS, type SourceLimits, type SourceWrites } from "./poll.js";
import { startSourcePoller } from "./poller.js";
import type { SourceStore } from "./port.js";

export interface SourcesOptions {
  /** Default: in memory (tests). */
  store?: SourceStore;
  /** Sources one project may follow; default 50. */
  maxPerProject?: number;
  limits?: Partial<SourceLimits>;
  /** How often each replica looks for due sources; default 1 s. */
  tickMs?: number;
}

export interface SourcesPart {
  handlers: ServiceImpl<typeof SourcesService>;
  close(): Promise<void>;
}

export async function startSources(o: {
  options?: SourcesOptions;
  shared: HandlerShared;
  admission: Admission;
  settings: ProjectSettingsSource;
  emit: StatusEmitter;
  resolveCaller: CallerResolver;
  fetchOptions?: SafeFetchOptions;
  log: Logger;
}): Promise<SourcesPart> {
  const store = o.options?.store ?? (await openEmbeddedSourceStore());
  const creator = articleCreator(o.shared);
  const revisions = createArticleWrites(o.shared);
  const articles = o.shared.store;
  const writes: SourceWrites = {
    create: creator.createOne,
    createFromPage: creator.createFromPage,
    update: async (projectId, id, patch) => (await revisions.revise(projectId, () => articles.get(projectId, id), `'${id}'`, patch, undefined)).id,
  };
  const poller = startSourcePoller({
    store,
    log: o.log,
    tickMs: o.options?.tickMs,
    poll: {
      store,
      content: o.admission.content,
      writes,
      article: (projectId, id) => articles.get(projectId, id),
      defaultVoice: (projectId) => o.shared.projectDefaultVoice(projectId),
      recrawl: (projectId, id) => recrawlArticle({ store: articles, admission: o.admission, settings: o.settings, emit: o.emit, log: o.log, fetchOptions: o.fetchOptions }, projectId, id),
      fetchOptions: o.fetchOptions,
      limits: { ...DEFAULT_SOURCE_LIMITS, ...o.options?.limits },
      log: o.log,
    },
  });
  const handlers = sourceHandlers({ store, poller, resolveCaller: o.resolveCaller, log: o.log, maxPerProject: o.options?.maxPerProject ?? 50, fetchOptions: o.fetchOptions });
  return {
    handlers,
    async close() {
      await poller.close();
      if (!o.options?.store) await store.close();
    },
  };
}
