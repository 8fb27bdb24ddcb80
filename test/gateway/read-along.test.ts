// The listener side of read-along, over the gateway with stand-in services:
// the player lookup links the timed segments and the WebVTT captions, and feed
// items carry Podcasting 2.0 transcript and chapters tags and the article's
// opening, as strict XML. Revisions rendered before segments were recorded
// get none of it.
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { expect } from "chai";
import { XMLParser } from "fast-xml-parser";
import { ListenerArticleSchema, ListenerService, type ListenerArticle } from "../../gen/articles/v1/listener_pb.js";
import { PlayerService } from "../../gen/auth/v1/player_pb.js";
import { AuthService } from "../../gen/auth/v1/auth_pb.js";
import { logger } from "../../lib/log.js";
import { startRpcServer, type RpcServer } from "../../lib/rpc/server.js";
import { DEFAULT_PLAYER_SETTINGS } from "../../services/auth/player-settings.js";
import { strictXmlProblems } from "../support/strict-xml.js";
import { startHarness, type Harness } from "./support.js";

const KEY = "pk_readalong0123456789";
const AUDIO = "https://cdn.example.test/audio";

const file = (key: string) => ({ key, url: `${AUDIO}/${key}` });
const article = (id: string, over: MessageInitShape<typeof ListenerArticleSchema> = {}): ListenerArticle =>
  create(ListenerArticleSchema, {
    id,
    title: `Title of ${id}`,
    lang: "en-US",
    audio: { key: `${id}/1/full.mp3`, url: `${AUDIO}/${id}/1/full.mp3`, duration: 61.5 },
    added: 1_700_000_000n,
    updated: 1_700_000_000n,
    revision: 1n,
    ...over,
  } as MessageInitShape<typeof ListenerArticleSchema>);

const timed = article("timed", {
  summary: "Rain & <wind> came at dawn, and the city woke to flooded streets…",
  transcript: { segments: file("timed/1/segments.json"), vtt: file("timed/1/transcript.vtt"), srt: file("timed/1/transcript.srt"), chapters: file("timed/1/chapters.json") },
});
const noChapters = article("plain", { summary: "Just a paragraph.", transcript: { segments: file("plain/1/segments.json"), vtt: file("plain/1/transcript.vtt"), srt: file("plain/1/transcript.srt") } });
// Rendered by a release that recorded no segments, with no opening either.
const older = article("older");

describe("gateway: read-along links in the player lookup and the podcast feed", function () {
  let upstream: RpcServer;
  let h: Harness;

  before(async () => {
    const log = logger("read-along-test");
    const byId = new Map([timed, noChapters, older].map((a) => [a.id, a]));
    upstream = await startRpcServer({
      name: "stand-ins",
      services: [ListenerService.typeName, PlayerService.typeName, AuthService.typeName],
      routes: (r) => {
        r.service(ListenerService, {
          getListenerArticle: (req) => ({ article: byId.get(req.lookup.value as string) }),
          listListenerArticles: () => ({ count: 3n, articles: [timed, noChapters, older] }),
        });
        r.service(PlayerService, {
          getPlayer: () => ({ player: { projectId: "p", projectName: "Read Along News", publicKey: KEY, settingsJson: JSON.stringify(DEFAULT_PLAYER_SETTINGS), feedLanguage: "en-us" } }),
        });
      },
      host: "127.0.0.1",
      port: 0,
      log,
    });
    h = await startHarness({ articlesUrl: upstream.url, authUrl: upstream.url, healthTargets: [] });
    for (const a of [timed, noChapters, older]) await h.blobs.put(a.audio!.key, Buffer.alloc(2048), "audio/mpeg");
  });
  after(async () => {
    await h?.close();
    await upstream?.close();
  });

  it("the player lookup links the segments and the captions of a revision that has them, and nothing for one that has not", async () => {
    const r = await (await fetch(h.url(`/player/v1/article?key=${KEY}&id=timed`))).json();
    expect(r.article).to.deep.include({ segments: `${AUDIO}/timed/1/segments.json`, transcript: `${AUDIO}/timed/1/transcript.vtt` });
    const o = await (await fetch(h.url(`/player/v1/article?key=${KEY}&id=older`))).json();
    expect(o.article).to.not.have.any.keys("segments", "transcript");
    // The opening is for feeds; the lookup stays what the player needs.
    expect(r.article).to.not.have.any.keys("summary");
  });

  it("feed items carry podcast:transcript (WebVTT, SRT) and podcast:chapters where they exist, and the opening as description, in strict XML", async () => {
    const res = await fetch(h.url(`/feeds/${KEY}.xml`));
    expect(res.status).to.equal(200);
    const xml = await res.text();
    expect(strictXmlProblems([xml])).to.deep.equal([null]);
    const doc = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: "", isArray: (name) => name === "item" || name === "podcast:transcript" }).parse(xml);
    expect(doc.rss["xmlns:podcast"]).to.equal("https://podcastindex.org/namespace/1.0");
    const [t, p, o] = doc.rss.channel.item;
    expect(t["podcast:transcript"]).to.deep.equal([
      { url: `${AUDIO}/timed/1/transcript.vtt`, type: "text/vtt", language: "en-us", rel: "captions" },
      { url: `${AUDIO}/timed/1/transcript.srt`, type: "application/x-subrip", language: "en-us", rel: "captions" },
    ]);
    expect(t["podcast:chapters"]).to.deep.equal({ url: `${AUDIO}/timed/1/chapters.json`, type: "application/json+chapters" });
    expect(t.description).to.equal("Rain & <wind> came at dawn, and the city woke to flooded streets…");
    expect(xml).to.include("Rain &amp; &lt;wind&gt; came at dawn");
    expect(p["podcast:transcript"]).to.have.length(2);
    expect(p).to.not.have.property("podcast:chapters");
    expect(p.description).to.equal("Just a paragraph.");
    expect(o).to.not.have.any.keys("podcast:transcript", "podcast:chapters");
    expect(o.description).to.equal("Title of older");
  });
});
