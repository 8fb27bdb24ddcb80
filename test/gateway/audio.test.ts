import { randomBytes } from "node:crypto";
import http from "node:http";
import { expect } from "chai";
import { startHarness, type Harness } from "./support.js";

/** Sends the path byte for byte (fetch would resolve dot segments first). */
function rawGet(base: string, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${base}${path}`, { method: "GET", path }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c) => (body += c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

describe("gateway: audio files", function () {
  let h: Harness;
  const key = "art-1/3/full.mp3";
  const data = randomBytes(10_000);
  let etag: string;

  before(async () => {
    h = await startHarness();
    await h.blobs.put(key, data, "audio/mpeg");
  });
  after(async () => {
    await h.close();
  });

  it("answers 404, not 500, for a file taken down between its stat and its read, and lets no cache keep the answer", async () => {
    const gone = "art-2/1/transcript.vtt";
    await h.blobs.put(gone, Buffer.from("WEBVTT\n"), "text/vtt");
    // A takedown under way: the store still knew the file when asked, and it is gone when read.
    const read = h.blobs.read.bind(h.blobs);
    h.blobs.read = async (k, range) => {
      if (k === gone) throw Object.assign(new Error(`blob not found: ${k}`), { code: "ENOENT" });
      return read(k, range);
    };
    try {
      const res = await fetch(h.url(`/audio/${gone}`));
      expect(res.status).to.equal(404);
      expect(res.headers.get("etag")).to.equal(null);
      expect(res.headers.get("cache-control") ?? "").to.not.include("immutable");
    } finally {
      h.blobs.read = read;
    }
  });

  it("serves the whole file with type, length, validators and cache headers, no token needed", async () => {
    const res = await fetch(h.url(`/audio/${key}`));
    expect(res.status).to.equal(200);
    expect(res.headers.get("content-type")).to.equal("audio/mpeg");
    expect(res.headers.get("content-length")).to.equal(String(data.length));
    expect(res.headers.get("accept-ranges")).to.equal("bytes");
    expect(res.headers.get("cache-control")).to.equal("public, max-age=600, immutable");
    etag = res.headers.get("etag")!;
    expect(etag).to.match(/^"[^"]+"$/);
    expect(Buffer.from(await res.arrayBuffer()).equals(data)).to.equal(true);
  });

  it("HEAD gives the headers without a body and without reading the file", async () => {
    const reads = h.blobs.reads.length;
    const res = await fetch(h.url(`/audio/${key}`), { method: "HEAD" });
    expect(res.status).to.equal(200);
    expect(res.headers.get("content-length")).to.equal(String(data.length));
    expect(res.headers.get("etag")).to.equal(etag);
    expect((await res.arrayBuffer()).byteLength).to.equal(0);
    expect(h.blobs.reads.length).to.equal(reads);
  });

  const ranges: [string, number, number][] = [
    ["bytes=0-99", 0, 99],
    ["bytes=9000-", 9000, 9999],
    ["bytes=-500", 9500, 9999],
    ["bytes=9990-20000", 9990, 9999],
  ];
  for (const [header, start, end] of ranges) {
    it(`206 for Range ${header}`, async () => {
      const res = await fetch(h.url(`/audio/${key}`), { headers: { Range: header } });
      expect(res.status).to.equal(206);
      expect(res.headers.get("content-range")).to.equal(`bytes ${start}-${end}/${data.length}`);
      expect(res.headers.get("content-length")).to.equal(String(end - start + 1));
      expect(Buffer.from(await res.arrayBuffer()).equals(data.subarray(start, end + 1))).to.equal(true);
      expect(h.blobs.reads.at(-1)!.range).to.deep.equal({ start, end });
    });
  }

  it("416 with Content-Range for an unsatisfiable range", async () => {
    const res = await fetch(h.url(`/audio/${key}`), { headers: { Range: "bytes=10000-" } });
    expect(res.status).to.equal(416);
    expect(res.headers.get("content-range")).to.equal(`bytes */${data.length}`);
    expect(await res.json()).to.include({ result: "fail" });
  });

  it("ignores malformed and multi-part ranges (whole file)", async () => {
    for (const header of ["bytes=abc", "bytes=5-1", "items=0-5", "bytes=0-1,5-6"]) {
      const res = await fetch(h.url(`/audio/${key}`), { headers: { Range: header } });
      expect(res.status, header).to.equal(200);
      expect((await res.arrayBuffer()).byteLength).to.equal(data.length);
    }
  });

  it("If-Range with an old validator sends the whole file", async () => {
    const res = await fetch(h.url(`/audio/${key}`), { headers: { Range: "bytes=0-9", "If-Range": '"stale"' } });
    expect(res.status).to.equal(200);
    const fresh = await fetch(h.url(`/audio/${key}`), { headers: { Range: "bytes=0-9", "If-Range": etag } });
    expect(fresh.status).to.equal(206);
  });

  it("304 for a matching If-None-Match, 200 for another one", async () => {
    const res = await fetch(h.url(`/audio/${key}`), { headers: { "If-None-Match": `"other", ${etag}` } });
    expect(res.status).to.equal(304);
    expect(res.headers.get("etag")).to.equal(etag);
    expect((await res.arrayBuffer()).byteLength).to.equal(0);
    const other = await fetch(h.url(`/audio/${key}`), { headers: { "If-None-Match": '"other"' } });
    expect(other.status).to.equal(200);
    await other.arrayBuffer();
  });

  it("404 JSON for unknown and unsafe keys", async () => {
    for (const path of ["/audio/nope/1/full.mp3", "/audio/art-1/../art-1/3/full.mp3", "/audio/art-1/%2e%2e/x.mp3", "/audio/", "/audio/.hidden", "/audio/a//b.mp3"]) {
      const res = await rawGet(h.gateway.url, path);
      expect(res.status, path).to.equal(404);
      expect(JSON.parse(res.body), path).to.include({ result: "fail" });
    }
  });

  it("other methods are refused", async () => {
    const res = await fetch(h.url(`/audio/${key}`), { method: "DELETE" });
    expect(res.status).to.equal(405);
    expect(h.blobs.files.has(key)).to.equal(true);
  });
});
