// The README's curl walk-through, run as written and in its order, on a fresh embedded default:
// the commands are read from README.md itself (its "Try it" and "Put it on your site" sections),
// so a README that drifts from what the platform does (a step in the wrong order, a renamed route,
// an example that answers nothing) fails here. The reader's part is done as a reader would: the
// full token copied from the banner, the id the create answered, the player key the player answer
// gave, and a "run it again until ready" step repeated until it says so.
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { PassThrough } from "node:stream";
import { promisify } from "node:util";
import { fileURLToPath } from "node:url";
import { expect } from "chai";
import { startEmbedded, type Embedded } from "../../launch/embedded.js";

const README = fileURLToPath(new URL("../../README.md", import.meta.url));
const EXAMPLE_ORIGIN = "http://localhost:8080";
const run = promisify(execFile);

interface Block {
  lang: string;
  body: string;
}

/** The fenced blocks from the "Try it" heading up to the heading after "Put it on your site". */
function walkthroughBlocks(readme: string): Block[] {
  const start = readme.indexOf("\n## Try it");
  const site = readme.indexOf("\n## Put it on your site", start);
  expect(start, "README section 'Try it'").to.be.greaterThan(-1);
  expect(site, "README section 'Put it on your site' after 'Try it'").to.be.greaterThan(start);
  const nextHeading = readme.indexOf("\n## ", site + 1);
  const text = readme.slice(start, nextHeading < 0 ? undefined : nextHeading);
  const blocks: Block[] = [];
  // Fences may be indented (a block inside a list item); the body loses that indent.
  const fence = /^( *)```(\w*)\n([\s\S]*?)^\1```$/gm;
  for (let m = fence.exec(text); m; m = fence.exec(text)) {
    const indent = m[1].length;
    blocks.push({ lang: m[2], body: m[3].split("\n").map((l) => l.slice(Math.min(indent, l.length - l.trimStart().length))).join("\n") });
  }
  return blocks;
}

/**
 * Splits a shell block into commands the way the shell would: a newline ends a command unless it
 * is escaped or inside quotes or `$(…)`; comments go.
 */
function shellCommands(block: string): string[] {
  const commands: string[] = [];
  let cur = "";
  let quote: string | null = null;
  let depth = 0;
  for (let i = 0; i < block.length; i++) {
    const c = block[i];
    if (quote) {
      cur += c;
      if (c === quote) quote = null;
      else if (quote === '"' && c === "\\") cur += block[++i] ?? "";
      continue;
    }
    if (c === "#" && (cur === "" || /\s$/.test(cur))) {
      while (i + 1 < block.length && block[i + 1] !== "\n") i++;
      continue;
    }
    if (c === "'" || c === '"') quote = c;
    if (c === "\\" && block[i + 1] === "\n") {
      i++;
      cur += " ";
      continue;
    }
    if (c === "$" && block[i + 1] === "(") depth++;
    if (c === ")" && depth > 0) depth--;
    if (c === "\n" && depth === 0) {
      if (cur.trim()) commands.push(cur.trim());
      cur = "";
      continue;
    }
    cur += c;
  }
  if (cur.trim()) commands.push(cur.trim());
  return commands;
}

const escaped = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("README: the curl walk-through as written, in order (embedded default)", function () {
  this.timeout(300_000);
  let dataDir: string;
  let workDir: string;
  let sys: Embedded;
  // What `npm start` prints for the person at the terminal (the tokens, where to go).
  const banner = new PassThrough();
  let bannerText = "";
  banner.on("data", (chunk) => (bannerText += String(chunk)));

  before(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), "readme-data-"));
    workDir = await mkdtemp(path.join(tmpdir(), "readme-cwd-"));
    // What `npm start` gets on a first start, on a free port: no SEED_TOKENS, so the banner prints the demo tokens.
    sys = await startEmbedded({ PORT: "0", HOST: "127.0.0.1", DATA_DIR: dataDir, AUDIO_ENGINE: process.env.AUDIO_ENGINE }, banner);
  });

  after(async () => {
    await sys?.close();
    await rm(dataDir, { recursive: true, force: true });
    await rm(workDir, { recursive: true, force: true });
  });

  it("creates, plays, finds, lists, updates, filters, embeds and finally deletes the article", async () => {
    const readme = await readFile(README, "utf8");
    const blocks = walkthroughBlocks(readme);
    const local = (s: string) => s.split(EXAMPLE_ORIGIN).join(sys.url);

    // The reader copies the banner's value whose example the README's TOKEN= line shows.
    const bannerExample = blocks.find((b) => b.lang === "text" && /\S+\s*:\s*aa_/.test(b.body));
    expect(bannerExample, "README shows the token banner").to.not.equal(undefined);
    const tokenByExample = new Map<string, string>();
    for (const m of bannerExample!.body.matchAll(/^\s*(\S.*?)\s+:\s+(aa_\S+)$/gm)) {
      const real = new RegExp(`^\\s*${escaped(m[1])}\\s+:\\s+(aa_\\S+)$`, "m").exec(bannerText)?.[1];
      expect(real, `banner line '${m[1]}' in:\n${bannerText}`).to.be.a("string");
      tokenByExample.set(m[2], real!);
    }
    // Where the README says the banner points, it does.
    for (const m of bannerExample!.body.matchAll(/^\s*(\S.*?)\s+:\s+(http\S+)$/gm)) {
      expect(bannerText, `banner line '${m[1]}'`).to.match(new RegExp(`^\\s*${escaped(m[1])}\\s+:\\s+${escaped(local(m[2]))}$`, "m"));
    }

    const env: Record<string, string> = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: workDir, LANG: "C.UTF-8" };
    let exampleId: string | undefined;
    let createdId: string | undefined;
    let publicKey: string | undefined;
    let revisions = 0;
    let labels: string[] = [];
    const steps: string[] = [];

    const sh = async (command: string) => (await run("bash", ["-c", command], { cwd: workDir, env, maxBuffer: 16 << 20 })).stdout;
    const json = async (command: string) => {
      const out = await sh(command);
      try {
        return JSON.parse(out) as Record<string, any>;
      } catch {
        throw new Error(`not a JSON answer from:\n${command}\n→ ${out}`);
      }
    };

    for (const block of blocks) {
      if (block.lang === "sh") {
        for (const written of shellCommands(block.body)) {
          const assignment = /^([A-Z_]+)=(\S+)$/.exec(written);
          if (assignment) {
            const [, name, example] = assignment;
            if (name === "TOKEN") {
              expect(tokenByExample.has(example), `TOKEN=${example} names a banner line`).to.equal(true);
              env.TOKEN = tokenByExample.get(example)!;
            } else if (name === "ID") {
              expect(createdId, "ID= comes after the create").to.be.a("string");
              exampleId = example;
              env.ID = createdId!;
            } else {
              throw new Error(`the walk-through sets ${name}, which this test does not know how a reader fills in: teach it`);
            }
            continue;
          }
          expect(written, "every other step is a curl").to.match(/^curl /);
          const command = local(exampleId && createdId ? written.split(exampleId).join(createdId) : written);
          const method = /-X (\w+)/.exec(command)?.[1] ?? "GET";
          const label = written.slice(0, 120);

          if (method === "POST" && /\/api\/articles['"\s]/.test(command + " ")) {
            const r = await json(command);
            expect(r, label).to.include({ result: "ok" });
            createdId = r.id;
            revisions = 1;
            steps.push("create");
          } else if (method === "PUT" && /\/api\/articles\/\$ID\b/.test(command)) {
            expect(env.ID, "update after ID=").to.be.a("string");
            const r = await json(command);
            expect(r, label).to.include({ result: "ok", id: createdId });
            revisions++;
            labels = (JSON.parse(/-d '([^']*)'/.exec(command)![1]) as { labels?: string[] }).labels ?? labels;
            steps.push("update");
          } else if (method === "DELETE") {
            const r = await json(command);
            expect(r, label).to.include({ result: "ok" });
            // Readable as deleted; its audio and its player lookup are gone at once.
            const gone = await fetch(`${sys.url}/api/articles/${createdId}`, { headers: { authorization: `Bearer ${env.TOKEN}` } });
            expect(((await gone.json()) as { article: { status: string } }).article.status, "the deleted article").to.equal("deleted");
            expect((await fetch(`${sys.url}/player/v1/article?key=${publicKey}&id=${createdId}`)).status, "its player lookup").to.equal(404);
            expect((await fetch(`${sys.url}/audio/${createdId}/${revisions}/full.mp3`)).status, "its audio").to.equal(404);
            steps.push("delete");
          } else if (/ -o (\S+)/.test(command)) {
            await sh(command);
            const file = await readFile(path.join(workDir, / -o (\S+)/.exec(command)![1]));
            expect(file.length, label).to.be.greaterThan(1000);
            // An MP3: an ID3 tag or an MPEG audio frame header.
            expect(file.subarray(0, 3).toString("latin1") === "ID3" || (file[0] === 0xff && (file[1] & 0xe0) === 0xe0), `${label}: an MP3`).to.equal(true);
            steps.push("mp3");
          } else if (/\/api\/articles\/\$ID["\s]/.test(command + " ")) {
            // "Run it again until ready": the reader repeats it, as long as the article is on its way.
            let r = await json(command);
            // The revision is the number in the audio's URL ({audio_url}/<id>/<revision>/full.mp3).
            const revisionOf = (a: Record<string, any> | undefined) => Number(/\/(\d+)\/full\.mp3$/.exec(a?.audio ?? "")?.[1] ?? 0);
            const onItsWay = (a: Record<string, any> | undefined) => ["waiting", "processing"].includes(a?.status) || (a?.status === "ready" && revisionOf(a) < revisions);
            for (let tries = 0; onItsWay(r.article) && tries < 600; tries++) {
              await sleep(200);
              r = await json(command);
            }
            expect(r.article, label).to.include({ id: createdId, status: "ready" });
            expect(revisionOf(r.article), `${label}: the revision of the audio`).to.equal(revisions);
            steps.push("ready");
          } else if (/\/api\/articles_external_(id|url)\//.test(command)) {
            const r = await json(command);
            expect(r.article, label).to.include({ id: createdId });
            steps.push("lookup");
          } else if (/\/api\/articles\?/.test(command)) {
            const r = await json(command);
            const filter = new URL(/"(http[^"]+)"/.exec(command)![1]).searchParams;
            expect(r.count, `${label}: count`).to.be.greaterThan(0);
            const found = (r.articles as Array<Record<string, any>>).find((a) => a.id === createdId);
            expect(found, `${label}: lists the article`).to.not.equal(undefined);
            if (filter.has("status") || filter.has("label")) {
              if (filter.has("status")) expect(found!.status, label).to.equal(filter.get("status"));
              if (filter.has("label")) expect(labels, `${label}: the article has the label by now`).to.include(filter.get("label"));
              steps.push("filter");
            } else steps.push("list");
          } else if (/\/api\/player["\s]/.test(command + " ")) {
            const r = await json(command);
            expect(r, label).to.include({ result: "ok" });
            expect(r.publicKey, label).to.match(/^pk_/);
            publicKey = r.publicKey;
            steps.push("player");
          } else if (/\/stats\b/.test(command)) {
            const r = await json(command);
            expect(r, label).to.include({ result: "ok" });
            steps.push("stats");
          } else {
            throw new Error(`a walk-through step this test does not know how to check: ${written}\nteach it`);
          }
        }
      } else if (block.lang === "html") {
        // The snippet pasted into a page, with the reader's key and article id.
        expect(publicKey, "the embed comes after the player answer that gives the key").to.be.a("string");
        const html = local(exampleId ? block.body.split(exampleId).join(createdId!) : block.body).split("pk_…").join(publicKey!);
        const script = /<script src="([^"]+)"/.exec(html)![1];
        expect((await fetch(script)).status, script).to.equal(200);
        const id = /article-id="([^"]+)"/.exec(html)![1];
        const key = /key="([^"]+)"/.exec(html)![1];
        // What player.js asks, and the audio it then plays.
        const lookup = await fetch(`${sys.url}/player/v1/article?key=${encodeURIComponent(key)}&id=${encodeURIComponent(id)}`);
        expect(lookup.status, "the embedded article can be looked up (it still exists and is ready)").to.equal(200);
        const { article } = (await lookup.json()) as { article: { audio: string } };
        const audio = await fetch(new URL(article.audio, sys.url));
        expect(audio.status, article.audio).to.equal(200);
        expect(audio.headers.get("content-type")).to.match(/^audio\/mpeg/);
        expect((await audio.arrayBuffer()).byteLength).to.be.greaterThan(1000);
        expect((await fetch(`${sys.url}/player/v1/embed/${key}/${id}`)).status, "the embed page").to.equal(200);
        steps.push("embed");
      }
    }

    // The story in its order: the filter after the update that adds its label, the embed before the delete, the delete last.
    const order = ["create", "ready", "mp3", "lookup", "list", "update", "ready", "filter", "player", "embed", "delete"];
    let at = -1;
    for (const step of order) {
      const next = steps.indexOf(step, at + 1);
      expect(next, `'${step}' after step ${at} in ${steps.join(" → ")}`).to.be.greaterThan(at);
      at = next;
    }
    expect(steps[steps.length - 1], "the delete is the last step").to.equal("delete");
  });
});
