// The sources store over the document-collection port: runs on SQLite and
// MongoDB alike. The lease is a conditional write on the source's document,
// so exactly one articles replica polls a source at a time.
import type { DocumentCollection } from "../../../lib/store/collection.js";
import { SourceLimitError, type SourceDoc, type SourceItemDoc, type SourceStore } from "./port.js";

/** Key hashes asked for at once ($in lists stay short). */
const ITEM_CHUNK = 200;

export async function openSourceStoreOn(sources: DocumentCollection<SourceDoc>, items: DocumentCollection<SourceItemDoc>): Promise<SourceStore> {
  await sources.ensureIndex({ name: "project_added", keys: { projectId: 1, added: 1 } });
  await sources.ensureIndex({ name: "next_poll", keys: { nextPoll: 1 } });
  await items.ensureIndex({ name: "source", keys: { sourceId: 1 } });

  return {
    async insert(doc, maxPerProject) {
      // Counted, not tallied: a project has a few dozen sources at most.
      if ((await sources.count({ projectId: doc.projectId })) >= maxPerProject) throw new SourceLimitError(maxPerProject);
      await sources.insertOne(doc);
    },
    list: (projectId) => sources.find({ projectId }, { sort: { added: 1 } }),
    get: (projectId, id) => sources.findOne({ _id: id, projectId }),
    update: (projectId, id, set) => sources.findOneAndUpdate({ _id: id, projectId }, { $set: set }),
    async remove(projectId, id) {
      const gone = await sources.deleteMany({ _id: id, projectId });
      if (gone > 0) await items.deleteMany({ sourceId: id });
      return gone > 0;
    },
    due: (now, limit) => sources.find({ nextPoll: { $lte: now }, paused: false, leaseUntil: { $lte: now } }, { sort: { nextPoll: 1 }, limit, hint: "next_poll" }),
    claim(id, owner, now, leaseMs, force = false) {
      const when = force ? {} : { nextPoll: { $lte: now }, paused: false };
      // A lease is harmless to lose in a power failure: it would expire anyway.
      return sources.findOneAndUpdate({ _id: id, leaseUntil: { $lte: now }, ...when }, { $set: { leaseUntil: now + leaseMs, leaseOwner: owner } }, { durable: false });
    },
    release: (id, owner, set) => sources.findOneAndUpdate({ _id: id, leaseOwner: owner }, { $set: { ...set, leaseUntil: 0 } }),
    async items(sourceId, keyHashes) {
      const found = new Map<string, SourceItemDoc>();
      for (let i = 0; i < keyHashes.length; i += ITEM_CHUNK) {
        const ids = keyHashes.slice(i, i + ITEM_CHUNK).map((h) => `${sourceId}:${h}`);
        for (const doc of await items.find({ _id: { $in: ids } })) found.set(doc._id.slice(sourceId.length + 1), doc);
      }
      return found;
    },
    async rememberItem(item) {
      await items.upsertOne({ _id: item._id }, { $set: { sourceId: item.sourceId, projectId: item.projectId, hash: item.hash, articleId: item.articleId } });
    },
    async close() {
      await sources.close();
      await items.close();
    },
  };
}
