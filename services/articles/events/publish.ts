// Status-change events: on the bus (articles.events.<project>) for internal
// consumers and, when the project configured one, as a signed webhook.
// Publishing never fails or delays the change itself.
import type { JobBus } from "../../../lib/bus/port.js";
import type { Logger } from "../../../lib/log.js";
import type { ProjectSettingsSource } from "../admission/settings.js";
import type { StoredArticle } from "../store/port.js";
import type { WebhookDispatcher } from "./webhook.js";

export interface ArticleStatusEvent {
  type: "article.status";
  projectId: string;
  articleId: string;
  externalId?: string;
  status: string;
  revision: number;
  /** ISO 8601. */
  at: string;
}

export type StatusEmitter = (a: Pick<StoredArticle, "id" | "projectId" | "externalId" | "status" | "revision">) => void;

export const eventSubject = (projectId: string) => `articles.events.${projectId}`;

export function createStatusEmitter(opts: { bus: JobBus; settings: ProjectSettingsSource; webhooks?: WebhookDispatcher; log: Logger }): StatusEmitter {
  const { bus, settings, webhooks, log } = opts;
  return (a) => {
    const event: ArticleStatusEvent = {
      type: "article.status",
      projectId: a.projectId,
      articleId: a.id,
      ...(a.externalId !== undefined ? { externalId: a.externalId } : {}),
      status: a.status,
      revision: a.revision,
      at: new Date().toISOString(),
    };
    bus.publishEvent(eventSubject(a.projectId), event).catch((err: unknown) => log.warn({ err, articleId: a.id }, "status event not published"));
    if (!webhooks) return;
    settings.get(a.projectId).then(
      (s) => {
        if (s.webhook) webhooks.deliver(s.webhook.url, s.webhook.secret, event, a.projectId);
      },
      (err: unknown) => log.warn({ err, articleId: a.id }, "webhook skipped: project settings unavailable"),
    );
  };
}
