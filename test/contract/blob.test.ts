import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile, mkdir, readdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { MongoClient } from "mongodb";
import { createFsBlobStore } from "../../lib/blob/fs.js";
import { createGridFsBlobStore } from "../../lib/blob/gridfs.js";
import { requireMongo } from "../support/servers.js";
import { blobContract } from "./blob.contract.js";

blobContract("directory", async () => {
  const dir = await mkdtemp(join(tmpdir(), "blobs-"));
  return { store: createFsBlobStore(dir), cleanup: () => rm(dir, { recursive: true, force: true }) };
});

let client: MongoClient | undefined;
after(async () => {
  await client?.close();
  client = undefined;
});

blobContract("GridFS", async (ctx) => {
  const url = await requireMongo(ctx);
  client ??= await MongoClient.connect(url, { serverSelectionTimeoutMS: 10_000 });
  const db = client.db(`blob_test_${randomBytes(4).toString("hex")}`);
  const store = await createGridFsBlobStore(db);
  return {
    store,
    cleanup: async () => {
      await store.close();
      await db.dropDatabase();
    },
  };
});

describe("directory blob store specifics", () => {
  let dir: string;
  beforeEach(async () => (dir = await mkdtemp(join(tmpdir(), "blobs-"))));
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it("serves a file placed by hand, deriving its etag from the content", async () => {
    await mkdir(join(dir, "hand/1"), { recursive: true });
    await writeFile(join(dir, "hand/1/full.mp3"), "ID3 by hand");
    const store = createFsBlobStore(dir);
    const st = await store.stat("hand/1/full.mp3");
    expect(st).to.deep.include({ size: 11, contentType: "audio/mpeg" });
    const put = await store.put("same/1/full.mp3", Buffer.from("ID3 by hand"), "audio/mpeg");
    expect(st!.etag).to.equal(put.etag);
  });

  it("leaves no temp files and removes emptied folders", async () => {
    const store = createFsBlobStore(dir);
    await store.put("art/1/full.mp3", Buffer.from("x"), "audio/mpeg");
    await store.deletePrefix("art/");
    expect(await readdir(join(dir, ".tmp"))).to.deep.equal([]);
    expect((await readdir(dir)).filter((n) => !n.startsWith("."))).to.deep.equal([]);
  });
});
