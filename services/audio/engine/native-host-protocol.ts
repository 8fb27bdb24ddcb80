// Messages between a service and its native speech host (native-host.ts), over the child's IPC
// channel with advanced serialization (the MP3 crosses as bytes, not as JSON). The programs'
// paths are the host's arguments: eSpeak's, then LAME's.
import type { EspeakVoice } from "./voices.js";

export type HostRequest = { type: "synthesize"; id: number; voice: EspeakVoice; text: string } | { type: "cancel"; id: number };

export type HostReply = { type: "ready" } | { type: "done"; id: number; mp3: Uint8Array } | { type: "failed"; id: number; message: string; code?: string };
