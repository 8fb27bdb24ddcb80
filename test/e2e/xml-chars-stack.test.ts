// XML-forbidden characters on the full stack (MongoDB, NATS, one process per
// service): the separate gateway and auth processes refuse them with a 400
// naming the field, and rows that hold them in MongoDB (as an older release
// could have written them) still give a feed a strict parser accepts.
import { expect } from "chai";
import { TOKENS, startTestStack, withMongo, type TestStack } from "./stack-harness.js";
import { api, waitFor } from "../support/http.js";
import { requireMongo, requireNats } from "../support/servers.js";
import { strictXmlProblems } from "../support/strict-xml.js";

const C0 = Array.from({ length: 32 }, (_, i) => String.fromCharCode(i)).filter((c) => !"\t\n\r".includes(c));
const FORBIDDEN = [...C0, "\uFFFE", "\uFFFF", "\uD800"];
// BSON strings are UTF-8: MongoDB cannot hold an unpaired surrogate (the driver writes U+FFFD), so stored rows carry the rest.
const STORED = FORBIDDEN.filter((c) => c !== "\uD800").join("");

describe("XML-forbidden characters on the full stack (MongoDB, NATS)", function () {
  this.timeout(240_000);
  let t: TestStack;

  before(async function () {
    t = await startTestStack({ mongoUrl: await requireMongo(this), natsUrl: await requireNats(this), env: { AUDIO_REPLICAS: "1" } });
  });
  afterEach(function () {
    if (this.currentTest?.state === "failed" && t) console.log(`--- last stack output ---\n${t.logs.tail()}`);
  });
  after(async () => t?.cleanup());

  it("refuses them in titles, text and feed settings, and feeds stay well-formed over rows that hold them", async () => {
    const A = api(t.stack.url, TOKENS.aFull);
    for (const c of FORBIDDEN) {
      for (const [method, url, body, field] of [
        ["POST", "/api/articles", { title: `a${c}b`, text: "Fine." }, "title"],
        ["POST", "/api/articles", { title: "Fine", text: `a${c}b` }, "text"],
        ["PUT", "/api/player", { feed: { title: `a${c}b` } }, "feed.title"],
      ] as const) {
        const r = await A(method, url, body);
        expect(r.status, `${url} ${field} U+${c.charCodeAt(0).toString(16)}`).to.equal(400);
        expect(r.body.message).to.match(new RegExp(`^${field.replace(".", "\\.")}: `));
      }
    }

    const created = await A("POST", "/api/articles", { title: "Stack title", text: "A story on the full stack. It is short.", url: "https://news.example/xml-stack" });
    expect(created.status).to.equal(200);
    const id = created.body.id;
    await waitFor("ready", async () => ((await A("GET", `/api/articles/${id}`)).body?.article?.status === "ready" ? true : undefined), 120_000, 200);
    const key = (await A("PUT", "/api/player", { feed: { title: "Stack show", author: "Desk" } })).body.publicKey;

    await withMongo(t.mongoUrl, t.db, async (c) => {
      const db = c.db(t.db);
      expect((await db.collection("articles").updateOne({ _id: id as never }, { $set: { title: `Stack${STORED} title` } })).matchedCount).to.equal(1);
      const projects = await db.collection("auth_projects").updateMany({}, { $set: { "player.feed.title": `Stack${STORED} show`, "player.feed.author": `De${STORED}sk` } });
      expect(projects.matchedCount).to.be.greaterThan(0);
    });

    // Rendered feeds are reused for a few seconds: wait for one built from the rows as they are now.
    let last = "";
    const feed = await waitFor("a feed from the changed rows", async () => {
      const res = await fetch(`${t.stack.url}/feeds/${key}.xml`);
      const bytes = new Uint8Array(await res.arrayBuffer());
      last = Buffer.from(bytes).toString("utf8");
      return last.includes("Stack show") && res.status === 200 ? bytes : undefined;
    }, 30_000, 500).catch((e: Error) => {
      throw new Error(`${e.message}; the last feed: ${last.slice(0, 3000)}`);
    });
    expect(strictXmlProblems([feed])).to.deep.equal([null]);
    const text = Buffer.from(feed).toString("utf8");
    expect(text).to.include("<title>Stack title</title>").and.include("<title>Stack show</title>").and.include("Desk");
  });
});
