import { expect } from "chai";
import { ConfigError, loadConfig } from "../../lib/config.js";

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
