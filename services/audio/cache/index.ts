export { chunkKey, type ChunkIdentity } from "./key.js";
export { openDiskCache, noCache, type ChunkCache, type DiskCacheOptions } from "./disk.js";
