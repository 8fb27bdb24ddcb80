// One create of a publisher's article, as CreateArticle, CreateArticles (the
// gateway's group commit, imports) and the service's own callers (a source's
// feed items) make it: validated, stored, admitted. With `fetch` the article
// is created from its URL: stored `recrawling` with no text yet, answered at
// once, and its page read in the background (pages/fetch-page.ts).
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { AudioTiming, CreateArticleRequestSchema, type CreateArticleRequest } from "../../../gen/articles/v1/articles_pb.js";
import { eventLoopTurn } from "../../../lib/fair-turns.js";
import { requestIdFields } from "../../../lib/rpc/request-id.js";
import { newArticleId } from "../ids.js";
import { DuplicateExternalIdError, DuplicateIdError, type PageKept } from "../store/port.js";
import { nextSeq } from "../store/order.js";
import * as v from "../validate.js";
import { voiceForText, type VoiceChoice } from "../voice-choice.js";
import { duplicate, type CreateFromPage, type HandlerShared } from "./context.js";

/** Stores one article of the project and admits it (or queues its page fetch); answers its id. */
export type CreateArticle = (projectId: string, req: CreateArticleRequest, requestId?: string) => Promise<string>;
/**
 * CreateArticle answering also what the publisher should know about the article (its `warning`).
 * `beforeStore`: awaited once the create is checked and its voice chosen, before it is stored (a
 * batch's creates take their detection turns one by one and are stored together).
 */
export type CreateArticleAnswered = (projectId: string, req: CreateArticleRequest, requestId?: string, beforeStore?: () => Promise<void>) => Promise<{ id: string; warning?: string }>;

/** What a page's id is made of before its title is known: the URL's last path segment ("…/harbour-works.html"), else its host. */
function slugSourceOf(url: string): string {
  const u = new URL(url);
  const last = u.pathname.split("/").filter(Boolean).pop();
  return last ? decodeURIComponent(last).replace(/\.[a-z0-9]{2,5}$/i, "") : u.hostname;
}

export function articleCreator(s: HandlerShared): { createOne: CreateArticle; createAnswered: CreateArticleAnswered; createFromPage: CreateFromPage } {
  const { store, log, emit, admission, admitNow, projectDefaultVoice, settings, pages } = s;

  /** The request's choice, else the project's setting. Unreadable settings store nothing: on-demand projects must not be charged by a fallback. */
  async function onDemand(projectId: string, timing: AudioTiming): Promise<boolean> {
    if (timing === AudioTiming.ON_DEMAND) return true;
    if (timing === AudioTiming.IMMEDIATE) return false;
    if (timing !== AudioTiming.UNSPECIFIED) throw v.invalid("audio: must be immediate or onDemand");
    try {
      return (await settings.get(projectId)).audio === "onDemand";
    } catch (err) {
      log.warn({ err, projectId }, "project settings unavailable; create refused");
      throw new ConnectError("project settings are unavailable; try again", Code.Unavailable);
    }
  }

  /** A create from a URL: the text comes from the page, so none may be sent; the title is optional. */
  function fromPage(req: CreateArticleRequest): { title: string; text: string; url: string; keeps: PageKept[] } {
    if (req.text !== "") throw v.invalid("text must be absent when fetch is true: the text comes from the page");
    if (req.parse || req.isRaw) throw v.invalid("parse and isRaw do not go with fetch: the page's article is extracted as text");
    const url = v.optionalUrl(req.url);
    if (url === undefined) throw v.invalid("url is required when fetch is true");
    const keeps: PageKept[] = [];
    if (req.title.trim() !== "") keeps.push("title");
    if (req.voice !== undefined || req.lang !== undefined) keeps.push("voice");
    // Until the page is read the URL stands in for the title; the text is filled in with it.
    const title = keeps.includes("title") ? v.requiredText("title", req.title, v.LIMITS.title) : url.slice(0, v.LIMITS.title);
    return { title, text: "", url, keeps };
  }

  /** Detection is synchronous work: it waits for the project's turn on the event loop (lib/fair-turns.ts), so an import's lines take turns with other projects' creates. */
  async function detectedVoice(projectId: string, title: string, text: string, html: boolean): Promise<VoiceChoice> {
    return voiceForText(await projectDefaultVoice(projectId), title, text, html, log, (step) => eventLoopTurn(projectId, step));
  }

  const createAnswered: CreateArticleAnswered = async (projectId, req, requestId, beforeStore) => {
    // Taken before the first await: the creates of one batch (an import's lines) keep the order they were sent in.
    const seq = nextSeq();
    const page = req.fetch ? fromPage(req) : undefined;
    const title = page?.title ?? v.requiredText("title", req.title, v.LIMITS.title);
    const text = page?.text ?? v.requiredText("text", req.text, v.LIMITS.text);
    const url = page?.url ?? v.optionalUrl(req.url);
    const externalId = v.optionalExternalId("externalId", req.externalId);
    const published = v.optionalPublished(req.published);
    const given = v.voiceAndLang(req.voice, req.lang);
    // No voice and lang: the project's default voice in the language the text is written in (a page's, once it is read).
    const { voice, lang, warning }: VoiceChoice = given ?? (page ? await projectDefaultVoice(projectId) : await detectedVoice(projectId, title, text, req.parse));
    const labels = v.labelList(req.labels);
    const prompt = req.prompt ? v.promptValue(req.prompt) : undefined;
    // Parked: stored waiting, neither admitted nor queued (nothing charged) until its audio is asked for.
    // A page to fetch is read first either way; it then stays parsed until its audio is asked for.
    const parked = await onDemand(projectId, req.audio);
    await beforeStore?.();

    const base = { projectId, title, text, url, externalId, voice, lang, labels, prompt, published, warning, seq, isRaw: req.isRaw, parse: req.parse, ...(parked ? { parked: true as const } : {}) };
    const draft = page ? { ...base, pageFetch: "pending" as const, ...(page.keeps.length ? { pageKeeps: page.keeps } : {}) } : { ...base, admission: "pending" as const };
    // A clash of the random suffix is astronomically rare; a second draw settles it.
    for (let attempt = 0; ; attempt++) {
      try {
        // Stored with the admission lease held: admitted right below without a claim.
        const held = !page && !parked ? { admittingUntil: admission.leaseUntil() } : {};
        const a = await store.insert({ ...draft, id: newArticleId(page && !page.keeps.includes("title") ? slugSourceOf(page.url) : title), ...held });
        log.info({ articleId: a.id, projectId: a.projectId, ...(parked ? { audio: "onDemand" } : {}), ...(page ? { from: "page" } : {}), ...requestIdFields(requestId) }, "article created");
        emit(a);
        if (page) pages.add(a.projectId, a.id);
        else if (!parked) await admitNow(a, requestId, true);
        return warning ? { id: a.id, warning } : { id: a.id };
      } catch (e) {
        // The holder's id lets an importer reconcile a re-run; the store does not name it, one lookup does.
        if (e instanceof DuplicateExternalIdError) throw duplicate(e.externalId, (await store.getByExternalId(projectId, e.externalId))?.id);
        if (e instanceof DuplicateIdError && attempt < 3) continue;
        throw e;
      }
    }
  };

  const createOne: CreateArticle = async (projectId, req, requestId) => (await createAnswered(projectId, req, requestId)).id;

  const createFromPage: CreateFromPage = async (projectId, p, requestId) =>
    (await createAnswered(projectId, create(CreateArticleRequestSchema, { ...p, title: p.title ?? "", labels: p.labels ?? [], audio: p.audio ?? AudioTiming.UNSPECIFIED, fetch: true }), requestId)).id;

  return { createOne, createAnswered, createFromPage };
}
