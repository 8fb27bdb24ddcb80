// A store that could not write reaches the public API as 507 (full volume) or
// 503 (read-only, database down) with an ErrorResult naming the cause, over
// a real RPC hop: the failure travels as Unavailable plus a metadata key.
import { expect } from "chai";
import Koa from "koa";
import type { AddressInfo } from "node:net";
import { ArticlesService } from "../../gen/articles/v1/articles_pb.js";
import { errorMiddleware } from "../../gateway/errors.js";
import { requestContext } from "../../gateway/request-context.js";
import { logger } from "../../lib/log.js";
import { rpcClient, closeRpcClients } from "../../lib/rpc/client.js";
import { startRpcServer } from "../../lib/rpc/server.js";
import { StorageError, type StorageFailure } from "../../lib/store/errors.js";

describe("storage failures at the gateway", () => {
  it("answers 507 for a full volume and 503 for read-only or an unavailable database, naming the cause", async () => {
    const log = logger("storage-errors-test");
    let failure: StorageFailure = "full";
    // A handler whose store throws, as the articles service's would.
    const rpc = await startRpcServer({
      name: "failing",
      services: [ArticlesService.typeName],
      log,
      routes: (router) =>
        router.service(ArticlesService, {
          getArticle() {
            throw new StorageError(failure, `the articles store's volume failed at /srv/secret (${failure})`);
          },
        }),
    });
    const client = rpcClient(ArticlesService, rpc.url);
    const app = new Koa();
    app.use(requestContext(log));
    app.use(errorMiddleware());
    app.use(async () => {
      await client.getArticle({});
    });
    const server = app.listen(0, "127.0.0.1");
    await new Promise((r) => server.once("listening", r));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const answers: Array<[number, { result: string; message: string }]> = [];
      for (const f of ["full", "read-only", "unavailable"] as const) {
        failure = f;
        const res = await fetch(`${base}/x`);
        answers.push([res.status, await res.json()]);
      }
      expect(answers.map(([s]) => s)).to.deep.equal([507, 503, 503]);
      expect(answers.map(([, b]) => b.result)).to.deep.equal(["error", "error", "error"]);
      expect(answers[0][1].message).to.match(/^Insufficient storage: the data volume is full/);
      expect(answers[1][1].message).to.match(/^Storage is read-only: nothing was written/);
      expect(answers[2][1].message).to.match(/^The database is unavailable: nothing was written/);
      for (const [, b] of answers) expect(b.message).to.not.include("/srv/secret");
    } finally {
      server.close();
      closeRpcClients();
      await rpc.close();
    }
  });
});
