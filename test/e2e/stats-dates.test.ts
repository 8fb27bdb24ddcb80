// Statistics dates are calendar days: impossible ones (2026-11-31,
// 9001-29-08) are a 400 naming the parameter on both statistics endpoints
// and InvalidArgument on direct RPC, never a 500 and never silently moved to
// another day. Embedded default.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Code, ConnectError } from "@connectrpc/connect";
import { expect } from "chai";
import { ListenerService } from "../../gen/articles/v1/listener_pb.js";
import { startEmbedded, type Embedded } from "../../launch/embedded.js";
import { rpcClient } from "../../lib/rpc/client.js";
import { api } from "../support/http.js";
import { sink } from "../support/sink.js";

const TOKEN = "stats-dates-full-0123456789";
const NOT_DAYS = ["2026-11-31", "9001-29-08", "0654-49-05", "2026-02-29", "2026-13-01", "2026-00-10", "2026-04-00", "2026-1-01", "２０２６-01-01", "2026-01-01T00:00:00Z"];

describe("statistics dates are real calendar days (embedded)", function () {
  this.timeout(120_000);
  let dir: string;
  let sys: Embedded;
  let A: ReturnType<typeof api>;
  let id: string;

  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "e2e-stats-dates-"));
    sys = await startEmbedded(
      { PORT: "0", HOST: "127.0.0.1", DATA_DIR: dir, AUDIO_ENGINE: process.env.AUDIO_ENGINE, RATE_LIMIT_ENABLED: "false", SEED_TOKENS: JSON.stringify([{ token: TOKEN, project: "dates", scope: "full" }]) },
      sink(),
    );
    A = api(sys.url, TOKEN);
    const r = await A("POST", "/api/articles", { title: "Dated", text: "A short story." });
    expect(r.status).to.equal(200);
    id = r.body.id;
  });
  after(async () => {
    await sys?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("answers 400 naming the parameter for every impossible day, on both endpoints", async () => {
    for (const base of ["/api/stats", `/api/articles/${id}/stats`]) {
      for (const day of NOT_DAYS) {
        for (const [param, query] of [["to", `to=${encodeURIComponent(day)}`], ["from", `from=${encodeURIComponent(day)}&to=2026-11-26`]]) {
          const r = await A("GET", `${base}?${query}`);
          expect(r.status, `${base}?${query}: ${r.text}`).to.equal(400);
          expect(r.body.message, `${base}?${query}`).to.match(new RegExp(`^${param}: `));
        }
      }
    }
  });

  it("accepts real days, leap days included, and says which days it covers", async () => {
    for (const base of ["/api/stats", `/api/articles/${id}/stats`]) {
      const leap = await A("GET", `${base}?from=2024-02-01&to=2024-02-29`);
      expect(leap.status, leap.text).to.equal(200);
      expect([leap.body.from, leap.body.to]).to.deep.equal(["2024-02-01", "2024-02-29"]);
      const far = await A("GET", `${base}?to=9999-12-31`);
      expect(far.status, far.text).to.equal(200);
      expect(far.body.to).to.equal("9999-12-31");
    }
  });

  it("refuses them on direct RPC with InvalidArgument naming the field", async () => {
    const listener = rpcClient(ListenerService, sys.services.find((s) => s.name === "articles")!.url);
    const as = { headers: { authorization: `Bearer ${TOKEN}` } };
    for (const day of NOT_DAYS) {
      for (const [field, req] of [["to", { to: day }], ["from", { from: day, to: "2026-11-26" }]] as const) {
        const e = await listener.getProjectStats(req, as).then(() => undefined, (err: unknown) => ConnectError.from(err));
        expect(e?.code, `${field}=${day}: ${e?.message}`).to.equal(Code.InvalidArgument);
        expect(e?.rawMessage).to.match(new RegExp(`^${field}: `));
        const a = await listener.getArticleStats({ articleId: id, ...req }, as).then(() => undefined, (err: unknown) => ConnectError.from(err));
        expect(a?.code, `article ${field}=${day}`).to.equal(Code.InvalidArgument);
      }
    }
  });
});
