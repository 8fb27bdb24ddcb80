// Statistics a listener cannot forge, on the embedded default (issue 21,
// point 3; the same scenarios run on the full stack in listener-stack.test.ts).
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { startEmbedded, type Embedded } from "../../launch/embedded.js";
import { forgeryScenarios, metricSum, projectWithArticles, type ForgeryEnv } from "./forgery-scenarios.js";
import { sink } from "../support/sink.js";

const TOKENS = { forge: "forgery-forge-full-0123456789", flood: "forgery-flood-full-0123456789" };
const SEED = JSON.stringify([
  { token: TOKENS.forge, project: "forge", scope: "full" },
  { token: TOKENS.flood, project: "flood", scope: "full" },
]);

describe("statistics a listener cannot forge (embedded)", function () {
  this.timeout(180_000);
  let dataDir: string;
  let sys: Embedded;
  let env: ForgeryEnv;

  before(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), "forgery-"));
    sys = await startEmbedded({ PORT: "0", HOST: "127.0.0.1", DATA_DIR: dataDir, SEED_TOKENS: SEED, METRICS_ON_PUBLIC_PORT: "true", AUDIO_ENGINE: process.env.AUDIO_ENGINE }, sink());
    const [forge, flood] = await Promise.all([projectWithArticles(sys.url, TOKENS.forge), projectWithArticles(sys.url, TOKENS.flood)]);
    env = {
      url: sys.url,
      forge,
      flood,
      async upstreamCalls() {
        const text = await (await fetch(`${sys.url}/metrics`)).text();
        return {
          recordListening: metricSum(text, "rpc_client_duration_seconds_count", { service: "articles.v1.ListenerService", method: "RecordListening" }),
          keyLookups: metricSum(text, "rpc_server_duration_seconds_count", { service: "auth.v1.PlayerService", method: "ResolvePlayerKey" }),
        };
      },
    };
  });

  after(async () => {
    await sys?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  forgeryScenarios(() => env, "embedded");
});
