// Pronunciation rules through the public API: the real gateway in front of
// the real ArticlesService (SQLite store, fake auth). Validation names the rule
// and field and changes nothing; read tokens read, full tokens write; each
// project has its own list; the list an article is admitted with is what
// the audio worker gets when it claims the job.
import { expect } from "chai";
import { Code, ConnectError, type Client } from "@connectrpc/connect";
import { ArticlesService } from "../../gen/articles/v1/articles_pb.js";
import { AuthService } from "../../gen/auth/v1/auth_pb.js";
import { buildOpenApi } from "../../gateway/openapi.js";
import { compileSchema, ErrorResult, PronunciationsResult } from "../../gateway/schemas.js";
import { startGateway } from "../../gateway/app.js";
import { logger } from "../../lib/log.js";
import { ruleFromProto } from "../../lib/rpc/pronunciations.js";
import { closeRpcClients, rpcClient } from "../../lib/rpc/client.js";
import type { RpcServer } from "../../lib/rpc/server.js";
import type { RunningService } from "../../lib/service.js";
import { startArticlesService } from "../../services/articles/app.js";
import { openEmbeddedArticleStore } from "../../services/articles/store/open.js";
import type { ArticleStore } from "../../services/articles/store/port.js";
import { MemoryBlobs } from "../gateway/support.js";
import { startFakeAuth } from "../support/fake-auth.js";
import { recordingBus, type RecordingBus } from "../support/recording-bus.js";

const INTERNAL = "internal-token-for-tests-0123456789";
const TOKENS: Record<string, { projectId: string; scope: "full" | "read" }> = {
  "a-full-token": { projectId: "proj-a", scope: "full" },
  "a-read-token": { projectId: "proj-a", scope: "read" },
  "b-full-token": { projectId: "proj-b", scope: "full" },
};
const FULL = { authorization: "Bearer a-full-token" };
const READ = { authorization: "Bearer a-read-token" };
const OTHER = { authorization: "Bearer b-full-token" };

const isResult = compileSchema(PronunciationsResult);
const isError = compileSchema(ErrorResult);

const RULES = [
  { match: "Nguyen", ipa: "ŋwiən" },
  { match: "BASF", spell: true, lang: "de" },
  { match: "Saoirse", say: "Sur-sha", caseSensitive: true },
  { match: "Köln", say: "Kölle", lang: "de-DE" },
];

describe("pronunciation rules API", function () {
  this.timeout(60_000);
  let auth: RpcServer;
  let svc: RunningService;
  let gateway: RunningService;
  let store: ArticleStore;
  let bus: RecordingBus;
  let a: Client<typeof ArticlesService>;
  let worker: Client<typeof ArticlesService>;

  const api = async (method: string, path: string, headers: Record<string, string>, json?: unknown) => {
    const res = await fetch(`${gateway.url}${path}`, {
      method,
      headers: { ...headers, ...(json !== undefined ? { "content-type": "application/json" } : {}) },
      body: json !== undefined ? JSON.stringify(json) : undefined,
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };
  const put = (rules: unknown, headers: Record<string, string> = FULL) => api("PUT", "/api/pronunciations", headers, rules);
  const get = (headers = READ) => api("GET", "/api/pronunciations", headers);

  before(async () => {
    auth = await startFakeAuth(TOKENS);
    store = await openEmbeddedArticleStore();
    bus = recordingBus();
    svc = await startArticlesService({
      store,
      bus,
      auth: rpcClient(AuthService, auth.url),
      internalToken: INTERNAL,
      audioBaseUrl: "https://cdn.example.test/audio",
      log: logger("articles-test"),
      reconcile: false,
    });
    gateway = await startGateway({ articlesUrl: svc.url, healthTargets: [], blobs: new MemoryBlobs(), log: logger("gateway-test"), port: 0, drainMs: 500 });
    a = rpcClient(ArticlesService, svc.url, { token: "a-full-token" });
    worker = rpcClient(ArticlesService, svc.url, { token: INTERNAL });
  });
  after(async () => {
    await gateway?.close();
    await svc?.close();
    await auth?.close();
    closeRpcClients();
    await store?.close();
  });

  it("starts empty, stores the whole list with a full token and gives it back to a read token", async () => {
    expect((await get()).body).to.deep.equal({ result: "ok", pronunciations: [] });
    const saved = await put(RULES);
    expect(saved.status, JSON.stringify(saved.body)).to.equal(200);
    expect(isResult(saved.body)).to.equal(true);
    expect(saved.body.pronunciations).to.deep.equal(RULES);
    const read = await get();
    expect(read.status).to.equal(200);
    expect(isResult(read.body)).to.equal(true);
    expect(read.body.pronunciations).to.deep.equal(RULES);
  });

  it("keeps each project's list to itself", async () => {
    expect((await get(OTHER)).body.pronunciations).to.deep.equal([]);
    await put([{ match: "Zürich", say: "Tsü-rich" }], OTHER);
    expect((await get()).body.pronunciations).to.deep.equal(RULES);
    expect((await get(OTHER)).body.pronunciations).to.deep.equal([{ match: "Zürich", say: "Tsü-rich" }]);
  });

  it("refuses a write with a read token and without a token, and changes nothing", async () => {
    const denied = await put([{ match: "X", say: "ex" }], READ);
    expect(denied.status).to.equal(403);
    expect(isError(denied.body)).to.equal(true);
    expect((await put([{ match: "X", say: "ex" }], {})).status).to.equal(401);
    expect((await get()).body.pronunciations).to.deep.equal(RULES);
  });

  const BAD: Array<[unknown, string]> = [
    [[RULES[0], { match: "Nguyen2" }], "pronunciations[1].say: one of say, spell or ipa is required"],
    [[RULES[0], RULES[1], { match: "X", say: "ex", spell: true }], "pronunciations[2].spell: only one of say, spell or ipa"],
    [[{ match: "X", ipa: "/ŋwiən/" }], "pronunciations[0].ipa: must be an IPA transcription"],
    [[{ match: "X", spell: false }], "pronunciations[0].spell: must be true"],
    [[{ match: "", say: "x" }], "pronunciations[0].match: must not be empty"],
    [[{ match: "<b>X</b>", say: "x" }], "pronunciations[0].match: must be a word or phrase"],
    [[{ match: "X", say: "x", lang: "german" }], "pronunciations[0].lang:"],
    [[{ match: "X", say: "x", caseSensitive: "yes" }], "pronunciations[0].caseSensitive: must be a boolean"],
    [[{ match: "X", say: "x", voice: "alloy" }], "pronunciations[0].voice: is not a rule field"],
    [[{ match: "X", say: "x" }, { match: "x", say: "y" }], "pronunciations[1].match: repeats the match of pronunciations[0]"],
    [[{ match: "X", say: 5 }], "pronunciations[0].say: must be a string"],
    [["X"], "pronunciations[0]: must be an object"],
    [{ pronunciations: [] }, "pronunciations: must be an array"],
  ];
  for (const [body, message] of BAD) {
    it(`answers 400 "${message}"`, async () => {
      const res = await put(body);
      expect(res.status, JSON.stringify(res.body)).to.equal(400);
      expect(isError(res.body)).to.equal(true);
      expect(res.body.message).to.include(message);
      expect((await get()).body.pronunciations).to.deep.equal(RULES);
    });
  }

  it("refuses more than 500 rules", async () => {
    const many = Array.from({ length: 501 }, (_, i) => ({ match: `w${i}`, say: "x" }));
    const res = await put(many);
    expect(res.status).to.equal(400);
    expect(res.body.message).to.include("at most 500");
  });

  it("checks the rules in the service too, so no RPC caller stores a bad one", async () => {
    try {
      await a.setPronunciations({ pronunciations: [{ match: "X", spell: true, say: "ex", caseSensitive: false }] });
      expect.fail("expected InvalidArgument");
    } catch (e) {
      expect(ConnectError.from(e).code).to.equal(Code.InvalidArgument);
      expect(ConnectError.from(e).rawMessage).to.include("pronunciations[0]");
    }
  });

  it("hands the worker the rules of the article's language as they were when the revision was admitted", async () => {
    await put([]);
    const { id: before } = await a.createArticle({ title: "Vorher", text: "Nguyen in Köln.", voice: "de-DE-KatjaNeural", lang: "de-DE" });
    await put(RULES);
    const { id: german } = await a.createArticle({ title: "BASF in Köln", text: "Nguyen sprach.", voice: "de-DE-KatjaNeural", lang: "de-DE" });
    const { id: english } = await a.createArticle({ title: "BASF in Cologne", text: "Nguyen spoke.", voice: "alloy", lang: "en-US" });

    const claimed = async (id: string, revision = 1n) => (await worker.claimAudioJob({ articleId: id, revision })).pronunciations.map(ruleFromProto);
    expect(await claimed(before)).to.deep.equal([]);
    expect(await claimed(german)).to.deep.equal(RULES);
    expect(await claimed(english)).to.deep.equal([RULES[0], RULES[2]]);

    // An update is a new revision, admitted under the list of now.
    await put([{ match: "Nguyen", say: "Win" }]);
    await a.updateArticle({ target: { case: "id", value: before }, title: "Nachher", text: "Nguyen in Köln, neu." });
    expect(await claimed(before, 2n)).to.deep.equal([{ match: "Nguyen", say: "Win" }]);
    // The revision admitted earlier keeps its snapshot.
    expect((await store.getById(german))?.pronunciations).to.deep.equal(RULES);
  });

  it("is documented in the OpenAPI document", () => {
    const doc = buildOpenApi() as any;
    const path = doc.paths["/api/pronunciations"];
    expect(path.get.responses["200"].content["application/json"].schema).to.deep.equal({ $ref: "#/components/schemas/PronunciationsResult" });
    expect(path.put.requestBody.content["application/json"].schema).to.deep.equal({ $ref: "#/components/schemas/PronunciationList" });
    expect(doc.components.schemas.PronunciationList.items).to.deep.equal({ $ref: "#/components/schemas/PronunciationRule" });
    expect(Object.keys(doc.components.schemas.PronunciationRule.properties)).to.deep.equal(["match", "caseSensitive", "lang", "say", "spell", "ipa"]);
  });
});
