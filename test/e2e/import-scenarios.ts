// Bulk import through the public API (docs/import.md), the same checks on
// the embedded default and on the full stack.
import { randomBytes } from "node:crypto";
import { expect } from "chai";
import { compileSchema, ImportLineResult, ImportSummary } from "../../gateway/schemas.js";
import { api } from "../support/http.js";
import { ndjson, openImport, postImport } from "../support/import.js";

export interface ImportTarget {
  url: string;
  full: string;
  read: string;
  /** MAX_BODY_BYTES the gateway runs with. */
  maxBodyBytes: number;
}

const tag = () => randomBytes(4).toString("hex");

export function importScenarios(target: () => ImportTarget): void {
  it("mixed lines: each good line is created, each bad one fails alone with its line number, in input order, then the summary", async () => {
    const { url, full, maxBodyBytes } = target();
    const A = api(url, full);
    const t = tag();
    const earlier = await A("POST", "/api/articles", { title: "Posted before", text: "Already here.", externalId: `pre-${t}` });
    expect(earlier.status, earlier.text).to.equal(200);
    const badPost = await A("POST", "/api/articles", { title: "", text: "x" });
    expect(badPost.status).to.equal(400);

    const lines = [
      /* 1 */ JSON.stringify({ title: "First", text: "One.", externalId: `one-${t}`, url: `HTTPS://News.Example.COM:443/import/${t}` }),
      /* 2 */ "",
      /* 3 */ "   \t",
      /* 4 */ "{not json",
      /* 5 */ JSON.stringify({ title: "", text: "x" }),
      /* 6 */ JSON.stringify({ title: "Again", text: "Two.", externalId: `one-${t}` }),
      /* 7 */ JSON.stringify({ title: "Too long", text: "x".repeat(maxBodyBytes + 10) }),
      /* 8 */ JSON.stringify({ title: "Nulls", text: "Null means absent.", url: null, voice: null, labels: null }),
      /* 9 */ JSON.stringify({ title: "Taken", text: "Three.", externalId: `pre-${t}` }),
      /* 10 */ JSON.stringify({ title: "Last", text: "No newline after me." }),
    ];
    const r = await postImport(url, full, lines.join("\n"));
    expect(r.status, r.text).to.equal(200);
    expect(r.headers.get("content-type")).to.match(/^application\/x-ndjson/);
    const [l1, l4, l5, l6, l7, l8, l9, l10, summary] = r.lines;
    expect(r.lines.map((l) => l.line)).to.deep.equal([1, 4, 5, 6, 7, 8, 9, 10, undefined]);
    expect(l1).to.deep.equal({ line: 1, result: "ok", id: l1.id });
    expect(l4).to.deep.equal({ line: 4, result: "fail", status: 400, message: l4.message });
    expect(l4.message).to.match(/JSON/);
    // Exactly what POST /api/articles answers for the same body.
    expect(l5).to.deep.equal({ line: 5, result: "fail", status: 400, message: badPost.body.message });
    expect(l6).to.deep.equal({ line: 6, result: "fail", status: 400, message: `externalId 'one-${t}' is already used`, id: l1.id });
    expect(l7.status).to.equal(413);
    expect(l7.message).to.contain(String(maxBodyBytes));
    expect(l8).to.deep.equal({ line: 8, result: "ok", id: l8.id });
    expect(l9).to.include({ line: 9, result: "fail", status: 400, id: earlier.body.id });
    expect(l10).to.deep.equal({ line: 10, result: "ok", id: l10.id });
    expect(summary).to.deep.equal({ result: "ok", imported: 3, failed: 5 });
    // Every line as the OpenAPI document describes it.
    const lineSchema = compileSchema(ImportLineResult);
    for (const l of r.lines.slice(0, -1)) expect(lineSchema(l), JSON.stringify(lineSchema.errors)).to.equal(true);
    expect(compileSchema(ImportSummary)(summary)).to.equal(true);

    // Stored as POST stores it: the URL normalised the same way.
    const viaImport = await A("GET", `/api/articles/${l1.id}`);
    const posted = await A("POST", "/api/articles", { title: "Compare", text: "Same URL.", url: `HTTPS://News.Example.COM:443/import/${t}` });
    const viaPost = await A("GET", `/api/articles/${posted.body.id}`);
    expect(viaImport.body.article.url).to.equal(viaPost.body.article.url);
    expect(viaImport.body.article.externalId).to.equal(`one-${t}`);
    expect((await A("GET", `/api/articles/${l8.id}`)).body.article.title).to.equal("Nulls");
  });

  it("many batches come back in input order, one result per line", async () => {
    const { url, full } = target();
    const t = tag();
    const rows = Array.from({ length: 300 }, (_, i) => (i % 7 === 3 ? "[1,2]" : { title: `Bulk ${i}`, text: `Article number ${i}.`, externalId: `bulk-${t}-${i}` }));
    const r = await postImport(url, full, ndjson(rows));
    expect(r.status, r.text.slice(0, 500)).to.equal(200);
    const results = r.lines.slice(0, -1);
    expect(results.map((l) => l.line)).to.deep.equal(rows.map((_, i) => i + 1));
    expect(results.filter((l) => l.result === "fail").map((l) => l.line)).to.deep.equal(rows.map((_, i) => i + 1).filter((n) => (n - 1) % 7 === 3));
    const ids = results.filter((l) => l.result === "ok").map((l) => l.id);
    expect(new Set(ids).size).to.equal(ids.length);
    expect(r.lines.at(-1)).to.deep.equal({ result: "ok", imported: ids.length, failed: 300 - ids.length });
  });

  it("streams: results arrive while the client is still sending", async () => {
    const { url, full } = target();
    const t = tag();
    const row = (i: number) => JSON.stringify({ title: `Streamed ${i}`, text: "Hello.", externalId: `st-${t}-${i}` }) + "\n";
    const imp = openImport(url, full);
    let first = "";
    for (let i = 1; i <= 80; i++) first += row(i);
    await imp.write(first);
    // The upload is not finished: the first result lines must already be here.
    const early = await imp.waitForLines(1);
    expect(imp.status()).to.equal(200);
    expect(early[0]).to.include({ line: 1, result: "ok" });
    let rest = "";
    for (let i = 81; i <= 120; i++) rest += row(i);
    await imp.write(rest);
    imp.end();
    await imp.ended;
    expect(imp.received.slice(0, -1).map((l) => l.line)).to.deep.equal(Array.from({ length: 120 }, (_, i) => i + 1));
    expect(imp.received.at(-1)).to.deep.equal({ result: "ok", imported: 120, failed: 0 });
  });

  it("a bad or missing token, a read token, a wrong content type and an unknown ?audio fail the whole request, and nothing is created", async () => {
    const { url, full, read } = target();
    const A = api(url, full);
    const t = tag();
    const body = ndjson([{ title: "Never", text: "Not stored.", externalId: `never-${t}` }]);
    const cases: Array<[number, Promise<{ status: number; lines: any[] }>]> = [
      [401, postImport(url, undefined, body)],
      [401, postImport(url, "not-a-real-token-0123456789", body)],
      [403, postImport(url, read, body)],
      [415, postImport(url, full, body, { contentType: "application/json" })],
      [400, postImport(url, full, body, { query: "audio=bogus" })],
    ];
    for (const [status, p] of cases) {
      const r = await p;
      expect(r.status).to.equal(status);
      expect(r.lines).to.have.length(1);
      expect(r.lines[0].result).to.equal("fail");
      expect(r.lines[0].message).to.be.a("string");
    }
    const audio = await postImport(url, full, body, { query: "audio=bogus" });
    expect(audio.lines[0].message).to.match(/^audio: /);
    expect((await A("GET", `/api/articles_external_id/never-${t}`)).status).to.equal(404);
  });

  it("?audio=onDemand and ?audio=immediate are accepted", async () => {
    const { url, full } = target();
    const t = tag();
    for (const audio of ["onDemand", "immediate"]) {
      const r = await postImport(url, full, ndjson([{ title: `Timing ${audio}`, text: "Later or now.", externalId: `tm-${t}-${audio}` }]), { query: `audio=${audio}` });
      expect(r.status, r.text).to.equal(200);
      expect(r.lines.at(-1)).to.deep.equal({ result: "ok", imported: 1, failed: 0 });
    }
  });
}
