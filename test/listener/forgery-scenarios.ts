// What a player key holder tried against a project's statistics (issue 21,
// point 3), as one set of scenarios for the embedded default and the full
// stack: forged completions and listening time, quartiles and completions
// without a play, a flood from one address beside a real listener of the same
// key, and beacons with unknown keys. Each prints the figures it measured.
import { randomBytes } from "node:crypto";
import { expect } from "chai";
import { api, waitFor } from "../support/http.js";
import { burst, paced, show } from "./beacons.js";

type Api = ReturnType<typeof api>;

export interface ForgeryProject {
  api: Api;
  key: string;
  /** Two ready short articles of the project. */
  ids: [string, string];
}

export interface ForgeryEnv {
  url: string;
  forge: ForgeryProject;
  flood: ForgeryProject;
  /** Calls the gateway made to the listener service, and (where visible) player-key lookups at the auth service. */
  upstreamCalls(): Promise<{ recordListening: number; keyLookups?: number }>;
}

/** The per-address defaults (PLAYER_EVENTS_PER_ADDRESS_*). */
const ADDRESS = { perSecond: 5, burst: 50 };

type Figures = { impressions: number; plays: number; progress25: number; progress50: number; progress75: number; completions: number; listenThroughRate: number; secondsListened: number };

/**
 * The article's figures once `until` holds and they stop changing (gateway buffer, bus and aggregator
 * have passed them on). `until` names what must have arrived: on a loaded machine a pause between two
 * flushes can outlast the 1.5 s between reads, and figures "settled" early would be short.
 */
async function settled(A: Api, id: string, until: (f: Figures) => boolean): Promise<Figures> {
  let last = "";
  return waitFor(`figures of ${id} settled`, async () => {
    const r = await A("GET", `/api/articles/${id}/stats`);
    const f = r.body?.total as Figures | undefined;
    if (!f || !until(f)) return undefined;
    const now = JSON.stringify(f);
    if (now !== last) {
      last = now;
      return undefined;
    }
    return f;
  }, 60_000, 1_500);
}

/** Sums a counter of the Prometheus text over the lines carrying all `labels`. */
export function metricSum(text: string, name: string, labels: Record<string, string>): number {
  let sum = 0;
  for (const line of text.split("\n")) {
    if (!line.startsWith(`${name}{`)) continue;
    if (!Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) continue;
    sum += Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return sum;
}

/** A project with two ready short articles and its player key. */
export async function projectWithArticles(url: string, token: string): Promise<ForgeryProject> {
  const A = api(url, token);
  const ids: string[] = [];
  for (const n of [1, 2]) {
    const r = await A("POST", "/api/articles", { title: `Short story ${n}`, text: `A short story, number ${n}. It ends here.` });
    expect(r.status).to.equal(200);
    ids.push(r.body.id);
  }
  for (const id of ids) await waitFor(`${id} ready`, async () => ((await A("GET", `/api/articles/${id}`)).body?.article?.status === "ready" ? true : undefined), 120_000, 200);
  return { api: A, key: (await A("GET", "/api/player")).body.publicKey, ids: ids as [string, string] };
}

const randomKey = () => `pk_${randomBytes(18).toString("base64url")}`;

export function forgeryScenarios(getEnv: () => ForgeryEnv, where: string): void {
  const say = (line: string) => console.log(`      [${where}] ${line}`);

  it("one client forging thousands of completions and hours of listening to a short article: counts stay plausible", async () => {
    const { url, forge } = getEnv();
    const id = forge.ids[0];
    const article = await (await fetch(`${url}/player/v1/article?key=${forge.key}&id=${id}`)).json();
    const duration = article.article.audio_duration as number;
    // The attack of the issue: 103 batches a second for 10 s, each a play and 48 completions of 600 s.
    const events = [{ type: "impression", articleId: id }, { type: "play", articleId: id }, ...Array.from({ length: 48 }, () => ({ type: "complete", articleId: id, seconds: 600 }))];
    const sent = await paced(url, { perSecond: 103, count: 1030, from: () => "127.0.0.10", body: () => ({ key: forge.key, events }) });
    const f = await settled(forge.api, id, (x) => x.plays > 0);
    say(`forgery on a ${duration} s article: ${show(sent)} → plays ${f.plays}, completions ${f.completions}, listenThroughRate ${f.listenThroughRate}, secondsListened ${f.secondsListened}`);
    expect(f.completions).to.be.at.most(f.plays);
    expect(f.listenThroughRate).to.be.at.most(1);
    expect(f.secondsListened).to.be.at.most(f.plays * duration * 2 + 0.1);
    // One beacon speaks for one listener, and one address gets only its own bucket.
    expect(f.plays).to.be.at.most(sent.taken);
    expect(sent.taken).to.be.at.most(ADDRESS.burst + ADDRESS.perSecond * sent.elapsedSeconds + 2);
    expect(sent.statuses.get(429) ?? 0).to.be.at.least(sent.sent - sent.taken);
  });

  it("quartiles, completions and listening time without a play count nothing", async () => {
    const { url, forge } = getEnv();
    const id = forge.ids[1];
    const events = [
      { type: "impression", articleId: id },
      ...[25, 50, 75, 100].map((percent) => ({ type: "progress", articleId: id, percent })),
      { type: "complete", articleId: id, seconds: 600 },
      { type: "listen", articleId: id, seconds: 600 },
    ];
    const sent = await burst(url, { count: 40, concurrency: 4, from: () => "127.0.0.11", body: () => ({ key: forge.key, events }) });
    expect(sent.taken).to.equal(40);
    const f = await settled(forge.api, id, (x) => x.impressions >= sent.taken);
    say(`without a play: ${show(sent)} → ${JSON.stringify(f)}`);
    expect(f).to.include({ impressions: 40, plays: 0, progress25: 0, progress50: 0, progress75: 0, completions: 0, secondsListened: 0, listenThroughRate: 0 });
  });

  it("a flood from one address with the same key leaves a real listener's beacons counted (≥ 95 %)", async () => {
    const { url, flood } = getEnv();
    const [flooded, real] = flood.ids;
    const listener = [{ type: "impression", articleId: real }, { type: "play", articleId: real }, { type: "listen", articleId: real, seconds: 0.5 }];
    const [attack, listening] = await Promise.all([
      paced(url, { perSecond: 103, count: 1030, from: () => "127.0.0.20", body: () => ({ key: flood.key, events: [{ type: "impression", articleId: flooded }] }) }),
      paced(url, { perSecond: 3.8, count: 38, from: () => "127.0.0.21", body: () => ({ key: flood.key, events: listener }) }),
    ]);
    expect(listening.taken / listening.sent, show(listening)).to.be.at.least(0.95);
    // Waits for the share the test asks for (so a late flush cannot cut it short); a loss beyond it times out here.
    const f = await settled(flood.api, real, (x) => Math.min(x.plays, x.impressions) >= Math.ceil(0.95 * listening.sent));
    const counted = Math.min(f.plays, f.impressions);
    say(`flood: ${show(attack)}; real listener: ${show(listening)}; counted ${counted} of ${listening.sent} (${((100 * counted) / listening.sent).toFixed(0)} %)`);
    expect(attack.statuses.get(429) ?? 0).to.be.greaterThan(500);
    expect(counted / listening.sent).to.be.at.least(0.95);
    expect(f.secondsListened).to.be.closeTo(0.5 * counted, 0.05 * counted + 0.1);
  });

  it("beacons with unknown keys are refused without an upstream call once the key is known to be unknown", async () => {
    const { url, upstreamCalls } = getEnv();
    // A stale embed: 2,000 beacons of 20 unknown keys from 200 listeners' addresses.
    const keys = Array.from({ length: 20 }, randomKey);
    let before = await upstreamCalls();
    const stale = await burst(url, { count: 2_000, concurrency: 32, from: (i) => `127.0.3.${1 + (i % 200)}`, body: (i) => ({ key: keys[i % keys.length], events: [{ type: "impression", articleId: "some-article" }] }) });
    let after = await upstreamCalls();
    const staleCalls = after.recordListening - before.recordListening;
    const staleLookups = after.keyLookups === undefined ? undefined : after.keyLookups - (before.keyLookups ?? 0);
    say(`20 unknown keys: ${show(stale)}; upstream calls ${staleCalls}, key lookups ${staleLookups ?? "not visible"}`);
    expect(stale.statuses.get(401)).to.equal(2_000);
    expect(staleCalls).to.be.at.most(keys.length);
    if (staleLookups !== undefined) expect(staleLookups).to.be.at.most(keys.length);

    // 2,000 random keys from one client: only what its address bucket admits is ever looked up.
    before = await upstreamCalls();
    const random = await burst(url, { count: 2_000, concurrency: 32, from: () => "127.0.0.30", body: () => ({ key: randomKey(), events: [{ type: "impression", articleId: "some-article" }] }) });
    after = await upstreamCalls();
    const randomCalls = after.recordListening - before.recordListening;
    say(`2,000 random keys from one address: ${show(random)}; upstream calls ${randomCalls}`);
    expect(random.taken).to.equal(0);
    expect(randomCalls).to.be.at.most(ADDRESS.burst + ADDRESS.perSecond * random.elapsedSeconds + 2);
    expect((random.statuses.get(401) ?? 0) + (random.statuses.get(429) ?? 0)).to.equal(2_000);
  });
}
