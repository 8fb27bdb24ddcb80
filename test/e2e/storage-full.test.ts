// A full disk end to end on the embedded default: DATA_DIR on a small tmpfs
// that is filled up. Creates and updates answer 507 with an ErrorResult that
// names the cause, leave no phantom article (list, GET and the externalId
// stay as they were), and the same requests succeed once space is freed,
// without a restart.
import { expect } from "chai";
import { startEmbedded, type Embedded } from "../../launch/embedded.js";
import { api } from "../support/http.js";
import { smallVolumeOrSkip, type SmallVolume } from "../support/tmpfs.js";
import { sink } from "../support/sink.js";

const TOKEN = "storage-full-token-0123456789";
const SEED = JSON.stringify([{ token: TOKEN, project: "tight", scope: "full" }]);
/** Longer than a page, so the create cannot slip into the slack of the datafile's last one. */
const TEXT = "The council met again today to discuss the budget. ".repeat(200);

describe("full disk (embedded default)", function () {
  this.timeout(120_000);
  let volume: SmallVolume | undefined;
  let sys: Embedded | undefined;

  after(async () => {
    await sys?.close();
    volume?.free();
    volume?.unmount();
  });

  it("answers 507, keeps no phantom article, and works again once space returns", async function () {
    volume = smallVolumeOrSkip(this, 16 * 1024 * 1024);
    sys = await startEmbedded({ PORT: "0", HOST: "127.0.0.1", DATA_DIR: volume.dir, SEED_TOKENS: SEED, AUDIO_ENGINE: process.env.AUDIO_ENGINE }, sink());
    const A = api(sys.url, TOKEN);
    const kept = await A("POST", "/api/articles", { title: "Before", text: "Written while there was space.", externalId: "before-1" });
    expect(kept.status).to.equal(200);

    volume.fill();
    const refused = await A("POST", "/api/articles", { title: "Budget", text: TEXT, externalId: "full-1" });
    expect(refused.status).to.equal(507);
    expect(refused.body.result).to.equal("error");
    expect(refused.body.message).to.match(/^Insufficient storage: the data volume is full, nothing was written; retry once space is freed \(request id \S+\)$/);
    const edit = await A("PUT", `/api/articles/${kept.body.id}`, { title: "Edited", text: TEXT });
    expect(edit.status).to.equal(507);

    // Nothing of the failed writes is visible.
    const list = await A("GET", "/api/articles?limit=50&offset=0");
    expect(list.body.count).to.equal(1);
    expect(list.body.articles.map((a: { id: string }) => a.id)).to.deep.equal([kept.body.id]);
    expect((await A("GET", "/api/articles_external_id/full-1")).status).to.equal(404);
    expect((await A("GET", `/api/articles/${kept.body.id}`)).body.article).to.include({ title: "Before" });

    volume.free();
    const retried = await A("POST", "/api/articles", { title: "Budget", text: TEXT, externalId: "full-1" });
    expect(retried.status, retried.text).to.equal(200);
    expect((await A("GET", "/api/articles_external_id/full-1")).body.article).to.include({ id: retried.body.id });
    expect((await A("PUT", `/api/articles/${kept.body.id}`, { title: "Edited", text: TEXT })).status).to.equal(200);
  });
});
