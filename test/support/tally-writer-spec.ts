import type { TallySpec } from "../../lib/store/collection.js";

export const TALLY_WRITER_DOCS = 40;
export const TALLY_WRITER_STATUSES = ["waiting", "processing", "ready"] as const;
export const TALLY_WRITER_SPEC: TallySpec = { name: "status", fields: ["status"], groups: (d) => [d.status as string] };
