// Messages between the content pool and its worker threads.
import type { AnalyseInput, Analysis } from "./analyse.js";

export type ContentJob = { id: number; kind: "analyse"; input: AnalyseInput } | { id: number; kind: "extract"; html: string; url?: string };

export type ContentReply =
  | { ready: true }
  | { id: number; ok: true; analysis: Analysis }
  | { id: number; ok: true; text: string }
  | { id: number; ok: false; reason: string };
