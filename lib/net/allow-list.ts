// FETCH_ALLOW_PRIVATE: the private targets an operator lets recrawls and
// webhooks reach (an intranet CMS, a receiver inside the cluster). An entry
// names a host or an address, optionally with a port; with a port, only that
// port is allowed, so allowing one service on a host does not open the rest.
import { isIP } from "node:net";
import { ConfigError } from "../config.js";

export interface AllowEntry {
  /** Lower-case host name or canonical IP address. */
  host: string;
  /** Unset: any port. */
  port?: number;
}

/** (host as written in the URL, address it resolved to, port) → may it be contacted although private? */
export type AllowPrivate = (host: string, address: string, port: number) => boolean;

/** One spelling per address, so "::1", "0:0::1" and "[::1]" compare equal. */
export function canonicalHost(host: string): string {
  const bare = host.trim().toLowerCase().replace(/^\[(.*)\]$/, "$1");
  if (isIP(bare) === 6) return new URL(`http://[${bare}]/`).hostname.slice(1, -1);
  if (isIP(bare) === 4) return new URL(`http://${bare}/`).hostname;
  return bare.replace(/\.$/, "");
}

function parseEntry(raw: string): AllowEntry {
  const text = raw.trim();
  let host = text;
  let port: string | undefined;
  const bracketed = /^\[([^\]]+)\](?::(.*))?$/.exec(text);
  if (bracketed) [, host, port] = bracketed;
  else if ((text.match(/:/g) ?? []).length === 1) [host, port] = text.split(":");
  // More than one colon without brackets: an IPv6 address on any port.
  if (!host || (!isIP(host) && !/^[A-Za-z0-9_.-]+$/.test(host))) throw new ConfigError(`Invalid configuration: FETCH_ALLOW_PRIVATE: '${text}' is not a host, an address, or either with :port`);
  if (isIP(host) === 6 && !bracketed && port !== undefined) throw new ConfigError(`Invalid configuration: FETCH_ALLOW_PRIVATE: write an IPv6 address with a port as [address]:port ('${text}')`);
  const entry: AllowEntry = { host: canonicalHost(host) };
  if (port !== undefined) {
    const n = Number(port);
    if (!/^\d{1,5}$/.test(port) || n < 1 || n > 65535) throw new ConfigError(`Invalid configuration: FETCH_ALLOW_PRIVATE: '${text}' has an invalid port (1-65535)`);
    entry.port = n;
  }
  return entry;
}

/** Comma-separated entries → entries; throws naming the variable and the bad entry. */
export function parseAllowList(list: string | undefined): AllowEntry[] {
  return (list ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)
    .map(parseEntry);
}

/** The check safeFetch runs for every private address it meets, or undefined when nothing is allowed. */
export function allowPrivateFrom(list: string | undefined): AllowPrivate | undefined {
  const entries = parseAllowList(list);
  if (entries.length === 0) return undefined;
  return (host, address, port) => {
    const names = [canonicalHost(host), canonicalHost(address)];
    return entries.some((e) => names.includes(e.host) && (e.port === undefined || e.port === port));
  };
}

/** The port a URL connects to. */
export function portOf(u: URL): number {
  if (u.port) return Number(u.port);
  return u.protocol === "https:" ? 443 : 80;
}
