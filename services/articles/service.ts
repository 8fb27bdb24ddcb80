// ArticlesService: publisher calls scoped by the caller's project, and the
// audio worker's calls that move an article through its lifecycle. Each
// concern lives in its own module under handlers/.
import type { ServiceImpl } from "@connectrpc/connect";
import type { ArticlesService } from "../../gen/articles/v1/articles_pb.js";
import { createHandlerShared, type ArticlesServiceDeps, type HandlerShared } from "./handlers/context.js";
import { articleCreator } from "./handlers/create.js";
import { operatorHandlers } from "./handlers/operator.js";
import { pronunciationHandlers } from "./handlers/pronunciations.js";
import { publisherReadHandlers } from "./handlers/publisher-reads.js";
import { publisherWriteHandlers } from "./handlers/publisher-writes.js";
import { workerHandlers } from "./handlers/worker.js";

export type { ArticlesServiceDeps } from "./handlers/context.js";

export function createArticlesHandlers(deps: ArticlesServiceDeps): ServiceImpl<typeof ArticlesService> {
  return createArticlesParts(deps).handlers;
}

/** The handlers and what they share, for the parts of the service built on the same (bulk jobs). */
export function createArticlesParts(deps: ArticlesServiceDeps): { handlers: ServiceImpl<typeof ArticlesService>; shared: HandlerShared } {
  const shared = createHandlerShared(deps);
  deps.onCreateFromPage?.(articleCreator(shared).createFromPage);
  const handlers: ServiceImpl<typeof ArticlesService> = {
    ...publisherReadHandlers(shared),
    ...publisherWriteHandlers(shared),
    ...workerHandlers(shared),
    ...operatorHandlers(shared),
    ...pronunciationHandlers(shared),
  };
  return { handlers, shared };
}
