// Configuration comes from environment variables only. Each process declares
// the variables it reads as a JSON Schema; a bad value stops start-up with a
// message that names the variable, before anything listens or writes.
import { Ajv, type ErrorObject } from "ajv";

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ConfigError";
  }
}

export interface VarSpec {
  type: "string" | "integer" | "boolean" | "number";
  description: string;
  default?: string | number | boolean;
  enum?: readonly string[];
  minimum?: number;
  maximum?: number;
  pattern?: string;
  format?: "uri" | "json";
  /**
   * Set when an empty value has a meaning of its own (e.g. AUDIO_FALLBACK=""
   * is "no fallback"): the empty string is then kept and validated like any
   * value. Otherwise an empty value means the same as an unset one, so
   * `VAR=` in a compose file or shell cannot smuggle in "".
   */
  emptyIsValue?: true;
}

export type ConfigSchema = Record<string, VarSpec>;

type Out<S extends ConfigSchema> = {
  [K in keyof S]: S[K]["type"] extends "integer" | "number"
    ? number
    : S[K]["type"] extends "boolean"
      ? boolean
      : string;
};

const ajv = new Ajv({ allErrors: true, coerceTypes: true, useDefaults: true });

function describe(err: ErrorObject): string {
  const name = err.instancePath.replace(/^\//, "") || String(err.params?.missingProperty ?? "");
  return `${name}: ${err.message ?? "is invalid"}`;
}

/** Reads and validates the declared variables from env; unknown variables are ignored. */
export function loadConfig<S extends ConfigSchema>(
  schema: S,
  env: Record<string, string | undefined> = process.env,
): Partial<Out<S>> & { [K in keyof S as S[K]["default"] extends undefined ? never : K]: Out<S>[K] } {
  const properties: Record<string, object> = {};
  const input: Record<string, unknown> = {};
  for (const [name, spec] of Object.entries(schema)) {
    const { description, format, emptyIsValue, ...rest } = spec;
    properties[name] = { ...rest, description };
    const raw = env[name];
    if (raw !== undefined && (raw !== "" || emptyIsValue)) input[name] = raw;
    if (format === "uri" && input[name] !== undefined) {
      try {
        const u = new URL(String(input[name]));
        if (!/^[a-z][a-z0-9+.-]*:$/.test(u.protocol)) throw new Error();
      } catch {
        throw new ConfigError(`Invalid configuration: ${name} must be an absolute URL (got ${JSON.stringify(raw)})`);
      }
    }
    if (format === "json" && input[name] !== undefined) {
      try {
        JSON.parse(String(input[name]));
      } catch (e) {
        throw new ConfigError(`Invalid configuration: ${name} is not valid JSON (${(e as Error).message})`);
      }
    }
  }
  const validate = ajv.compile({ type: "object", properties });
  if (!validate(input)) {
    const msgs = (validate.errors ?? []).map(describe).join("; ");
    throw new ConfigError(`Invalid configuration: ${msgs}`);
  }
  return input as never;
}
