// ID3v2.4 tags (https://id3.org/id3v2.4.0-structure, -frames) in front of our MP3s, so players
// show what a downloaded file is. The tag sits before the Info frame; the Info header counts only
// MPEG frames, so the frame-exact duration is untouched.

export interface Mp3Tags {
  title: string;
  /** The publisher: the project's name (its id when the name is unknown). */
  artist: string;
  album: string;
  /** BCP 47 ("en-US"); written as ISO 639-2 ("eng"). */
  lang: string;
  /** Publication date. */
  date?: Date;
  articleId: string;
}

const ISO639_2: Record<string, string> = { en: "eng", de: "deu", fr: "fra", es: "spa", it: "ita", nl: "nld" };
const UTF8 = 3;
// A text field is one line of reasonable length; a title of a megabyte helps no player.
const MAX_TEXT = 1000;

function syncsafe(n: number): Buffer {
  if (n >= 1 << 28) throw new RangeError("ID3 size too large");
  return Buffer.from([(n >> 21) & 0x7f, (n >> 14) & 0x7f, (n >> 7) & 0x7f, n & 0x7f]);
}

function frame(id: string, body: Buffer): Buffer {
  return Buffer.concat([Buffer.from(id, "latin1"), syncsafe(body.length), Buffer.from([0, 0]), body]);
}

const clean = (s: string | undefined) => (s ?? "").replace(/[\u0000-\u001f]+/g, " ").trim().slice(0, MAX_TEXT);

function text(id: string, value: string): Buffer {
  return frame(id, Buffer.concat([Buffer.from([UTF8]), Buffer.from(clean(value), "utf8")]));
}

function userText(description: string, value: string): Buffer {
  return frame("TXXX", Buffer.concat([Buffer.from([UTF8]), Buffer.from(description, "utf8"), Buffer.from([0]), Buffer.from(clean(value), "utf8")]));
}

/** The ID3v2.4 tag for these fields. */
export function id3Tag(tags: Mp3Tags): Buffer {
  // Empty fields are left out rather than written as empty frames.
  const frames = ([["TIT2", tags.title], ["TPE1", tags.artist], ["TALB", tags.album]] as const).filter(([, v]) => clean(v)).map(([id, v]) => text(id, v));
  const lang = ISO639_2[(tags.lang ?? "").slice(0, 2).toLowerCase()];
  if (lang) frames.push(text("TLAN", lang));
  if (tags.date && !Number.isNaN(tags.date.getTime())) frames.push(text("TDRC", tags.date.toISOString().slice(0, 10)));
  if (clean(tags.articleId)) frames.push(userText("ARTICLE_ID", tags.articleId));
  const body = Buffer.concat(frames);
  return Buffer.concat([Buffer.from("ID3", "latin1"), Buffer.from([4, 0, 0]), syncsafe(body.length), body]);
}

/** The MP3 with the tag in front (an existing leading ID3v2 tag is replaced). */
export function tagMp3(mp3: Buffer, tags: Mp3Tags): Buffer {
  return Buffer.concat([id3Tag(tags), stripId3(mp3)]);
}

function stripId3(mp3: Buffer): Buffer {
  if (mp3.length < 10 || mp3.toString("latin1", 0, 3) !== "ID3") return mp3;
  const size = ((mp3[6] & 0x7f) << 21) | ((mp3[7] & 0x7f) << 14) | ((mp3[8] & 0x7f) << 7) | (mp3[9] & 0x7f);
  const footer = mp3[5] & 0x10 ? 10 : 0;
  return mp3.subarray(10 + size + footer);
}
