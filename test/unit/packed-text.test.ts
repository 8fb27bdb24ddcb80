import { expect } from "chai";
import { docOf } from "../../lib/store/sqlite-packed-text.js";
import { toJson } from "../../lib/store/sqlite-json.js";

// A row of the embedded store is its document's JSON plus its long text fields packed apart; a read
// joins them (docOf, one parse of both). These are the cases where a join could go wrong.
describe("a stored row read back (docOf)", () => {
  it("joins the document and its packed fields, the packed ones winning over a stale copy in the document", () => {
    const d = docOf({ _id: "a1", doc: JSON.stringify({ status: "ready", title: "old", n: 3 }) }, JSON.stringify({ title: "new", text: "Body, with } and { inside." }));
    expect(d).to.deep.equal({ _id: "a1", status: "ready", title: "new", n: 3, text: "Body, with } and { inside." });
  });

  it("reads rows whose document or packed part is empty, and rows without a packed part", () => {
    expect(docOf({ _id: "a", doc: "{}" }, JSON.stringify({ text: "t" }))).to.deep.equal({ _id: "a", text: "t" });
    expect(docOf({ _id: "b", doc: JSON.stringify({ x: 1 }) }, "{}")).to.deep.equal({ _id: "b", x: 1 });
    expect(docOf({ _id: "c", doc: JSON.stringify({ x: 1 }) }, null)).to.deep.equal({ _id: "c", x: 1 });
    expect(docOf({ _id: "d", doc: "{}" }, "{}")).to.deep.equal({ _id: "d" });
  });

  it("gives back dates of either part as dates, and the row's id over one left in the document", () => {
    const at = new Date("2026-12-07T10:00:00.000Z");
    const d = docOf({ _id: "row", doc: toJson({ _id: "stale", added: at }) }, toJson({ text: "plain text", published: at }));
    expect(d._id).to.equal("row");
    expect(d.added).to.be.instanceOf(Date);
    expect((d.added as Date).getTime()).to.equal(at.getTime());
    expect((d.published as Date).getTime()).to.equal(at.getTime());
    expect(d.text).to.equal("plain text");
  });
});
