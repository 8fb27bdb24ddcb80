// Decides whether an IP address belongs to the public internet. Outbound
// fetches (recrawls, webhooks) must never reach our own network, the cloud
// metadata endpoint or loopback, whatever spelling an attacker chooses.
import { isIPv4, isIPv6 } from "node:net";

type V4Range = [base: number, bits: number, why: string];

const V4_BLOCKED: V4Range[] = [
  [v4("0.0.0.0"), 8, "unspecified"],
  [v4("10.0.0.0"), 8, "private"],
  [v4("100.64.0.0"), 10, "carrier-grade NAT"],
  [v4("127.0.0.0"), 8, "loopback"],
  [v4("169.254.0.0"), 16, "link-local"],
  [v4("172.16.0.0"), 12, "private"],
  [v4("192.0.0.0"), 24, "IETF protocol assignments"],
  [v4("192.0.2.0"), 24, "documentation"],
  [v4("192.88.99.0"), 24, "6to4 relay"],
  [v4("192.168.0.0"), 16, "private"],
  [v4("198.18.0.0"), 15, "benchmarking"],
  [v4("198.51.100.0"), 24, "documentation"],
  [v4("203.0.113.0"), 24, "documentation"],
  [v4("224.0.0.0"), 4, "multicast"],
  [v4("240.0.0.0"), 4, "reserved/broadcast"],
];

function v4(text: string): number {
  return text.split(".").reduce((acc, part) => acc * 256 + Number(part), 0);
}

function v4Blocked(n: number): string | undefined {
  for (const [base, bits, why] of V4_BLOCKED) {
    const size = 2 ** (32 - bits);
    if (n >= base && n < base + size) return why;
  }
  return undefined;
}

/** Expands an IPv6 text (with optional zone and dotted IPv4 tail) into 8 groups. */
export function parseIPv6(text: string): number[] | undefined {
  const address = text.replace(/%.*$/, "");
  if (!isIPv6(address)) return undefined;
  let head = address;
  const tailGroups: number[] = [];
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(head);
  if (dotted) {
    const n = v4(dotted[1]);
    tailGroups.push(Math.floor(n / 65536), n % 65536);
    head = head.slice(0, -dotted[1].length);
    if (head.endsWith(":") && !head.endsWith("::")) head = head.slice(0, -1);
  }
  const [left, right] = head.includes("::") ? head.split("::") : [head, undefined];
  const parse = (s: string | undefined) => (s ? s.split(":").filter(Boolean).map((g) => parseInt(g, 16)) : []);
  const l = parse(left);
  const r = [...parse(right), ...tailGroups];
  if (right === undefined) return [...l, ...r];
  return [...l, ...new Array(8 - l.length - r.length).fill(0), ...r];
}

function v6Blocked(g: number[]): string | undefined {
  const embedded = (hi: number, lo: number) => v4Blocked(hi * 65536 + lo);
  const zeros = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  if (zeros(0, 8)) return "unspecified";
  if (zeros(0, 7) && g[7] === 1) return "loopback";
  // IPv4-mapped (::ffff:a.b.c.d) and the deprecated IPv4-compatible (::a.b.c.d)
  // forms reach the embedded IPv4 address, so they inherit its verdict.
  if (zeros(0, 5) && g[5] === 0xffff) return embedded(g[6], g[7]) && `IPv4-mapped ${embedded(g[6], g[7])}`;
  if (zeros(0, 6)) return "IPv4-compatible";
  // SIIT-translated (::ffff:0:a.b.c.d) is another way to spell an IPv4 target.
  if (zeros(0, 4) && g[4] === 0xffff && g[5] === 0) return embedded(g[6], g[7]) && `IPv4-translated ${embedded(g[6], g[7])}`;
  if (g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6)) return embedded(g[6], g[7]) && `NAT64 ${embedded(g[6], g[7])}`;
  if (g[0] === 0x64 && g[1] === 0xff9b && g[2] === 1) return "local-use NAT64";
  if (g[0] === 0x2002) return embedded(g[1], g[2]) && `6to4 ${embedded(g[1], g[2])}`;
  if (g[0] === 0x100 && zeros(1, 4)) return "discard-only";
  if (g[0] === 0x2001 && g[1] === 0xdb8) return "documentation";
  if ((g[0] & 0xfe00) === 0xfc00) return "unique-local";
  if ((g[0] & 0xffc0) === 0xfe80) return "link-local";
  if ((g[0] & 0xffc0) === 0xfec0) return "site-local";
  if ((g[0] & 0xff00) === 0xff00) return "multicast";
  return undefined;
}

/**
 * Why an address must not be contacted ("loopback", "private", …), or
 * undefined for a public address. Anything that is not a valid IP is refused.
 */
export function blockedReason(address: string): string | undefined {
  if (isIPv4(address)) return v4Blocked(v4(address));
  const groups = parseIPv6(address);
  if (!groups || groups.length !== 8) return "not an IP address";
  return v6Blocked(groups) || undefined;
}

export function isPublicAddress(address: string): boolean {
  return blockedReason(address) === undefined;
}
