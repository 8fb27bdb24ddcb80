// GET /api/token: a token says what it is (scope and project), 401 for a bad
// one, and never its secret.
import { createHash } from "node:crypto";
import { expect } from "chai";
import { compileSchema, ErrorResult } from "../../gateway/schemas.js";
import { TokenResult } from "../../gateway/routes/token.js";
import { call, FULL, OTHER, READ, startHarness, type Harness } from "./support.js";

const isTokenResult = compileSchema(TokenResult);
const isError = compileSchema(ErrorResult);

describe("gateway: GET /api/token", () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(async () => {
    await h.close();
  });

  it("answers a full token's scope and project", async () => {
    const res = await call(h, "GET", "/api/token", { headers: FULL });
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({ result: "ok", scope: "full", project: "p1" });
    expect(isTokenResult(res.body), JSON.stringify(isTokenResult.errors)).to.equal(true);
    expect(res.headers.get("cache-control")).to.equal("no-store");
    // Another project's token names its own project.
    expect((await call(h, "GET", "/api/token", { headers: OTHER })).body).to.deep.equal({ result: "ok", scope: "full", project: "p2" });
  });

  it("answers a read token as read, which the write endpoints then refuse", async () => {
    const res = await call(h, "GET", "/api/token", { headers: READ });
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({ result: "ok", scope: "read", project: "p1" });
    expect(isTokenResult(res.body)).to.equal(true);
    expect((await call(h, "POST", "/api/articles", { headers: READ, json: { title: "t", text: "x" } })).status).to.equal(403);
  });

  it("is 401 for a missing, malformed, unknown or player-key token, with the API's error body", async () => {
    for (const headers of [{} as Record<string, string>, { authorization: "full-token" }, { authorization: "Bearer " }, { authorization: "Bearer nope-0123456789" }, { authorization: "Bearer pk_0123456789abcdef" }]) {
      const res = await call(h, "GET", "/api/token", { headers });
      expect(res.status, JSON.stringify(headers)).to.equal(401);
      expect(res.body.result).to.equal("fail");
      expect(isError(res.body)).to.equal(true);
    }
  });

  it("never answers the token, its hash or its id", async () => {
    for (const [headers, token] of [
      [FULL, "full-token"],
      [READ, "read-token"],
      [{ authorization: "Bearer unknown-secret-0123456789" }, "unknown-secret-0123456789"],
    ] as const) {
      const res = await call(h, "GET", "/api/token", { headers });
      const digest = createHash("sha256").update(token).digest();
      // The fake auth service uses the token itself as its id, so this also covers the id.
      for (const secret of [token, digest.toString("hex"), digest.toString("base64"), digest.toString("base64url")]) {
        expect(res.text).not.to.include(secret);
        for (const [name, value] of res.headers) expect(value, name).not.to.include(secret);
      }
    }
  });

  it("shares the gateway's token cache with the write check: asking first costs a write no extra lookup", async () => {
    await call(h, "GET", "/api/token", { headers: OTHER });
    const calls = h.fake.authCalls;
    const res = await call(h, "POST", "/api/articles", { headers: OTHER, json: { title: "Cached", text: "Known token." } });
    expect(res.status).to.equal(200);
    expect(h.fake.authCalls).to.equal(calls);
  });

  it("is in the OpenAPI document with the schema the answers match", async () => {
    const doc = (await call(h, "GET", "/api/openapi.json")).body;
    const op = doc.paths["/api/token"].get;
    expect(op.responses["200"].content["application/json"].schema).to.deep.equal({ $ref: "#/components/schemas/TokenResult" });
    expect(op.responses["401"]).to.deep.equal({ $ref: "#/components/responses/Unauthorized" });
    expect(doc.components.schemas.TokenResult.properties.scope.enum).to.deep.equal(["full", "read"]);
  });
});
