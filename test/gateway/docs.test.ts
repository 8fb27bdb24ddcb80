import { Validator } from "@seriousme/openapi-schema-validator";
import { validateSource } from "../../gateway/source-schemas.js";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import { expect } from "chai";
import { buildOpenApi } from "../../gateway/openapi.js";
import { ArticleCreateRequest, ArticleUpdateRequest, SCHEMAS, validate, VoiceLangRule, validatePronunciations, requestValidator, validateBulk } from "../../gateway/schemas.js";
import { PronunciationPreviewRequest } from "../../gateway/routes/pronunciation-preview.js";
import { validateListener } from "../../gateway/listener-schemas.js";
import { addCharacterRules } from "../../lib/text-rules.js";
import { call, FULL, startHarness, type Harness } from "./support.js";

const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (a: Ajv2020) => Ajv2020;

type Json = Record<string, any>;

function refsIn(value: unknown, out: string[] = []): string[] {
  if (Array.isArray(value)) value.forEach((v) => refsIn(v, out));
  else if (value && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) {
      if (k === "$ref" && typeof v === "string") out.push(v);
      else refsIn(v, out);
    }
  }
  return out;
}

function resolvePointer(doc: Json, ref: string): unknown {
  return ref
    .replace(/^#\//, "")
    .split("/")
    .reduce<unknown>((node, part) => (node as Json | undefined)?.[part.replace(/~1/g, "/").replace(/~0/g, "~")], doc);
}

describe("gateway: docs and OpenAPI", function () {
  let h: Harness;
  let doc: Json;
  before(async () => {
    h = await startHarness();
    const res = await call(h, "GET", "/api/openapi.json");
    expect(res.status).to.equal(200);
    doc = res.body;
  });
  after(async () => {
    await h.close();
  });

  it("GET /api redirects to the docs without a token and without a body", async () => {
    const res = await call(h, "GET", "/api");
    expect(res.status).to.equal(302);
    expect(res.headers.get("location")).to.equal("/api/docs");
    expect(res.text).to.equal("");
  });

  it("serves the docs page and every asset it references from the gateway itself", async () => {
    const page = await call(h, "GET", "/api/docs");
    expect(page.status).to.equal(200);
    expect(page.headers.get("content-type")).to.match(/^text\/html/);
    expect(page.text).to.include('<div id="docs">');
    const refs = [...page.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
    expect(refs.some((r) => r.endsWith("swagger-ui-bundle.js"))).to.equal(true);
    for (const ref of refs) {
      expect(ref, "no CDN").to.match(/^\//);
      const asset = await fetch(h.url(ref));
      expect(asset.status, ref).to.equal(200);
      expect((await asset.arrayBuffer()).byteLength, ref).to.be.greaterThan(0);
    }
    const init = await (await fetch(h.url("/api/docs/init.js"))).text();
    expect(init).to.include("/api/openapi.json");
    const bundle = await fetch(h.url(refs.find((r) => r.endsWith("swagger-ui-bundle.js"))!));
    expect(bundle.headers.get("content-type")).to.match(/javascript/);
    expect(await bundle.text()).to.include("SwaggerUIBundle");
  });

  it("does not serve arbitrary files from the asset folder", async () => {
    const page = await call(h, "GET", "/api/docs");
    const css = [...page.text.matchAll(/href="([^"]+swagger-ui\.css)"/g)][0][1];
    const base = css.slice(0, css.lastIndexOf("/"));
    for (const name of ["package.json", "..%2F..%2Fpackage.json", "index.js"]) {
      expect((await call(h, "GET", `${base}/${name}`)).status, name).to.equal(404);
    }
  });

  it("openapi.json is a valid OpenAPI 3.1 document, version 1.0.0, needing no token", async () => {
    const validator = new Validator();
    const res = await validator.validate(structuredClone(doc));
    expect(res.valid, JSON.stringify(res.errors)).to.equal(true);
    expect(validator.version).to.match(/^3\.1/);
    expect(doc.openapi).to.match(/^3\.1\.\d+$/);
    expect(doc.info.version).to.equal("1.0.0");
    for (const ref of refsIn(doc)) expect(resolvePointer(doc, ref), ref).not.to.equal(undefined);
  });

  it("documents all nine endpoints with bearer security, except GET /api", () => {
    const ops: [string, string][] = [
      ["get", "/api"],
      ["get", "/api/articles"],
      ["post", "/api/articles"],
      ["get", "/api/articles/{articleId}"],
      ["put", "/api/articles/{articleId}"],
      ["delete", "/api/articles/{articleId}"],
      ["get", "/api/articles_external_id/{externalId}"],
      ["put", "/api/articles_external_id/{externalId}"],
      ["get", "/api/articles_external_url/{externalUrl}"],
    ];
    expect(doc.components.securitySchemes.bearerAuth).to.deep.include({ type: "http", scheme: "bearer" });
    expect(doc.security).to.deep.equal([{ bearerAuth: [] }]);
    for (const [method, path] of ops) {
      const op = doc.paths[path]?.[method];
      expect(op, `${method} ${path}`).to.be.an("object");
      if (path === "/api") {
        expect(op.security).to.deep.equal([]);
        expect(op.responses).to.have.property("302");
      } else {
        expect(op.security, `${method} ${path}`).to.equal(undefined);
        for (const code of ["200", "400", "401", "403", "429", "500", "503"]) expect(op.responses, `${method} ${path} ${code}`).to.have.property(code);
      }
    }
    expect(doc.paths["/api/articles"].post.responses).to.have.property("413");
    expect(doc.paths["/api/articles/{articleId}"].get.responses).to.have.property("404");
    const params = doc.paths["/api/articles"].get.parameters;
    expect(params.find((p: Json) => p.name === "limit").schema).to.include({ type: "integer", minimum: 10, maximum: 100, default: 10 });
    expect(doc.info.description).to.match(/Unknown fields in request bodies are ignored/);
  });

  it("publishes the very schema objects that validate requests", () => {
    for (const [name, schema] of Object.entries(SCHEMAS)) expect(doc.components.schemas, name).to.have.property(name);
    // The shared voice/lang rule is written once and referenced by name.
    const named = (schema: Json, ...rules: string[]) => JSON.parse(JSON.stringify({ ...schema, allOf: rules.map((r) => ({ $ref: `#/components/schemas/${r}` })) }));
    expect(doc.components.schemas.ArticleCreateRequest).to.deep.equal(named(ArticleCreateRequest, "VoiceLangRule", "FromUrlRule"));
    expect(doc.components.schemas.ArticleUpdateRequest).to.deep.equal(named(ArticleUpdateRequest, "VoiceLangRule"));
    expect(doc.components.schemas.VoiceLangRule).to.deep.equal(JSON.parse(JSON.stringify(VoiceLangRule)));
    // An edit to a shared schema shows up in the next document built.
    const props = ArticleCreateRequest.properties as Json;
    const saved = props.title.maxLength;
    props.title.maxLength = 7;
    try {
      expect((buildOpenApi() as Json).components.schemas.ArticleCreateRequest.properties.title.maxLength).to.equal(7);
    } finally {
      props.title.maxLength = saved;
    }
  });

  it("the published request schema and the gateway agree on what is valid", async () => {
    const ajv = new Ajv2020({ strict: false });
    addFormats(ajv);
    // Character rules are the document's x-characters extension (no regex engine agrees on surrogates); a tool that knows it.
    addCharacterRules(ajv);
    ajv.addSchema({ $id: "https://doc.test/openapi.json", components: doc.components });
    const published = ajv.compile({ $ref: "https://doc.test/openapi.json#/components/schemas/ArticleCreateRequest" });
    const bodies: unknown[] = [
      { title: "a", text: "b" },
      { title: "a" },
      { title: "", text: "b" },
      { title: "a", text: "b", voice: "echo", lang: "de-DE" },
      { title: "a", text: "b", voice: "echo" },
      { title: "a", text: "b", voice: "de-DE-KatjaNeural", lang: "en-US" },
      { title: "a", text: "b", voice: "de-DE-KatjaNeural", lang: "de-DE" },
      { title: "a", text: "b", url: "https://x.example/y" },
      { title: "a", text: "b", url: "mailto:a@b.c" },
      { title: "a", text: "b", labels: [] },
      { title: "a", text: "b", labels: [""] },
      { title: "a", text: "b", prompt: null },
      { title: "a", text: "b", isRaw: 1 },
      { title: "a", text: "b", externalId: "x".repeat(600) },
      { title: "a", text: "b", unknownField: true },
      { title: " ", text: "b" },
      { title: "a", text: "\n" },
      { title: "a", text: "b", externalId: "x\u0000" },
      { title: "a", text: "b", externalId: "x\u202Ey" },
      { title: "a", text: "b", externalId: "x\ud800" },
      { title: "a", text: "b", externalId: "x😀" },
      { title: "a", text: "b", labels: ["ok", " "] },
      { title: "a", text: "b", labels: ["\u2067"] },
      { title: "a\u000b", text: "b" },
      { title: "a", text: "b\uffff" },
      { title: "a", text: "b\t\r\n" },
      { url: "https://x.example/y", fetch: true },
      { url: "https://x.example/y", fetch: true, title: "a", labels: ["x"] },
      { url: "https://x.example/y", fetch: true, text: "b" },
      { url: "https://x.example/y", fetch: true, parse: true },
      { fetch: true, title: "a" },
      { url: "https://x.example/y", fetch: false },
      { url: "https://x.example/y", fetch: "yes" },
      ["a"],
    ];
    for (const [i, body] of bodies.entries()) {
      const res = await call(h, "POST", "/api/articles", { headers: FULL, json: body });
      expect(res.status === 200, `body ${i}: ${JSON.stringify(body)} → ${res.status} ${res.text}`).to.equal(published(body));
    }
  });

  it("request bodies render as named objects: their only allOf entries are named components", () => {
    for (const name of ["ArticleCreateRequest", "ArticleUpdateRequest"]) {
      const schema = doc.components.schemas[name];
      expect(schema.type).to.equal("object");
      for (const part of schema.allOf ?? []) expect(Object.keys(part), name).to.deep.equal(["$ref"]);
    }
  });

  const BODY_CHECKS: Record<string, (v: unknown) => void> = {
    "put /api/player": (v) => validateListener.playerSettings(v),
    "post /player/v1/events": (v) => validateListener.events(v),
    "put /api/pronunciations": (v) => void validatePronunciations(v),
    "post /api/pronunciations/preview": (v) => requestValidator(PronunciationPreviewRequest, "body")(v),
    "post /api/articles/bulk": (v) => void validateBulk.body(v),
    "post /api/sources": (v) => validateSource.create(v),
    "put /api/sources/{sourceId}": (v) => validateSource.update(v),
  };

  it("every operation carries examples the server accepts: bodies, path and query parameters", () => {
    const ops = Object.entries(doc.paths as Json).flatMap(([path, item]) =>
      Object.entries(item as Json)
        .filter(([m]) => ["get", "put", "post", "delete"].includes(m))
        .map(([method, op]) => ({ path, method, op: op as Json, params: [...((item as Json).parameters ?? []), ...((op as Json).parameters ?? [])] as Json[] })),
    );
    expect(ops.length).to.be.at.least(10);
    const checks: Record<string, (v: unknown) => void> = {
      articleId: (v) => validate.articleId(v),
      externalId: (v) => validate.externalId(v),
      externalUrl: (v) => validate.externalUrl(v),
      from: (v) => validateListener.statsQuery({ from: v }),
      to: (v) => validateListener.statsQuery({ to: v }),
    };
    for (const { path, method, op, params } of ops) {
      for (const p of params) {
        expect(p.example, `${method} ${path} ${p.name}`).not.to.equal(undefined);
        checks[p.name]?.(p.example);
        if (p.schema.pattern) expect(String(p.example)).to.match(new RegExp(p.schema.pattern, "u"));
      }
      const media = op.requestBody?.content?.["application/json"] ?? op.requestBody?.content?.["text/plain"];
      if (media) {
        expect(media.example, `${method} ${path} body`).to.be.an(Array.isArray(media.example) ? "array" : "object");
        const bodyCheck = BODY_CHECKS[`${method} ${path}`] ?? (method === "post" ? validate.createBody : validate.updateBody);
        bodyCheck(media.example);
      }
    }
  });

  it("the create example works as sent by Try it out", async () => {
    const example = doc.paths["/api/articles"].post.requestBody.content["application/json"].example;
    const res = await call(h, "POST", "/api/articles", { headers: FULL, json: example });
    expect(res.status, res.text).to.equal(200);
    expect(res.body.id).to.be.a("string");
  });

  it("the audio route can be tried: its key works with slashes encoded as a path parameter", async () => {
    const key = doc.paths["/audio/{key}"].parameters[0].example as string;
    expect(key.split("/").length).to.equal(3);
    await h.blobs.put(key, Buffer.from("ID3 fake mp3"), "audio/mpeg");
    for (const path of [`/audio/${key}`, `/audio/${encodeURIComponent(key)}`]) {
      const res = await fetch(h.url(path));
      expect(res.status, path).to.equal(200);
      expect(res.headers.get("content-type")).to.equal("audio/mpeg");
    }
    expect((await fetch(h.url(`/audio/${encodeURIComponent("../etc/passwd")}`))).status).to.equal(404);
  });

  it("query integers are documented as plain decimal digits", () => {
    const params = doc.paths["/api/articles"].get.parameters;
    for (const p of params.filter((x: { schema: { type: string } }) => x.schema.type === "integer")) expect(p.schema.pattern, p.name).to.equal("^[0-9]{1,10}$");
    expect(params.map((p: { name: string }) => p.name)).to.deep.equal(["limit", "offset", "status", "label", "q"]);
  });

  it("documents the list filters: the twelve statuses, the label's limits, and labels on every list item", () => {
    const params = Object.fromEntries(doc.paths["/api/articles"].get.parameters.map((p: { name: string }) => [p.name, p]));
    expect(params.status.schema.enum).to.have.length(12).and.include.members(["ready", "no_money", "recrawling"]);
    expect(params.status.required ?? false).to.equal(false);
    expect(params.label.schema).to.include({ type: "string", minLength: 1, maxLength: 100 });
    const item = doc.components.schemas.ArticleListItem;
    expect(item.required).to.include.members(["external_id", "labels"]);
    expect(item.properties.labels).to.deep.include({ type: "array", items: { type: "string" } });
  });
});
