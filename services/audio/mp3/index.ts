// MP3 frame tools: parse, measure, join and cut without re-encoding.
export { parseFrames, type Mp3Frame } from "./frames.js";
export { durationSteps, mp3Duration, joinMp3, joinMp3InSlices, sliceMp3 } from "./assemble.js";
export { silenceFrames, type SilenceFormat } from "./silence.js";
export { id3Tag, tagMp3, type Mp3Tags } from "./id3.js";
