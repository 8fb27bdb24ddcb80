import { expect } from "chai";
import { ConfigError, loadConfig } from "../../lib/config.js";
import { parseFallback, PROVIDER_VARS } from "../../services/audio/providers/config.js";

describe("configuration", () => {
  const schema = {
    PORT: { type: "integer", minimum: 0, maximum: 65535, default: 8080, description: "HTTP port" },
    NATS_URL: { type: "string", format: "uri", description: "NATS server" },
  } as const;

  it("applies defaults and coerces numbers", () => {
    const c = loadConfig(schema, {});
    expect(c.PORT).to.equal(8080);
    expect(loadConfig(schema, { PORT: "9000" }).PORT).to.equal(9000);
  });

  it("names the variable that is wrong", () => {
    expect(() => loadConfig(schema, { PORT: "eighty" })).to.throw(ConfigError, /PORT/);
    expect(() => loadConfig(schema, { PORT: "70000" })).to.throw(ConfigError, /PORT/);
    expect(() => loadConfig(schema, { NATS_URL: "not a url" })).to.throw(ConfigError, /NATS_URL/);
  });
});

describe("configuration: empty values", () => {
  it("treats an empty value as unset unless the variable gives empty a meaning", () => {
    const schema = {
      PORT: { type: "integer", default: 8080, description: "p" },
      NATS_URL: { type: "string", format: "uri", description: "n" },
      CHAIN: { type: "string", pattern: "^(a|b)?$", default: "a", emptyIsValue: true, description: "c" },
    } as const;
    const c = loadConfig(schema, { PORT: "", NATS_URL: "", CHAIN: "" });
    expect(c.PORT).to.equal(8080);
    expect(c.NATS_URL).to.equal(undefined);
    expect(c.CHAIN).to.equal("");
    expect(loadConfig(schema, {}).CHAIN).to.equal("a");
  });

  it("AUDIO_FALLBACK= (empty) means no fallback chain, as docs/providers.md says", () => {
    expect(parseFallback(loadConfig(PROVIDER_VARS, { AUDIO_FALLBACK: "" }).AUDIO_FALLBACK)).to.deep.equal([]);
    expect(parseFallback(loadConfig(PROVIDER_VARS, {}).AUDIO_FALLBACK)).to.deep.equal(["openai", "azure", "local"]);
    expect(parseFallback(loadConfig(PROVIDER_VARS, { AUDIO_FALLBACK: " local " }).AUDIO_FALLBACK)).to.deep.equal(["local"]);
  });
});

describe("configuration: LOG_LEVEL= (empty)", () => {
  it("logs at the default level instead of failing to start", async function () {
    this.timeout(30_000);
    const { execFile } = await import("node:child_process");
    const { promisify } = await import("node:util");
    const logUrl = new URL("../../lib/log.ts", import.meta.url).href;
    const script = `const { logger } = await import(${JSON.stringify(logUrl)}); logger("t").info("hello");`;
    const { stdout } = await promisify(execFile)(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
      env: { ...process.env, LOG_LEVEL: "", NODE_ENV: "" },
    });
    expect(stdout).to.include('"msg":"hello"');
  });
});
