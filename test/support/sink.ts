import { Writable } from "node:stream";

/** A stream that takes what it is given and keeps none of it: the log output of a system a test starts but does not read. */
export const sink = () => new Writable({ write: (_chunk, _encoding, done) => done() });
