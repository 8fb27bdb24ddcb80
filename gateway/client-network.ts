// The network a client's address stands for, for per-client limits: an IPv4
// address is one client, but one IPv6 host usually holds a whole /64 (and can
// pick a new address in it for every request), so IPv6 counts by its /64.
import { isIPv6 } from "node:net";

export function clientNetwork(ip: string): string {
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(ip);
  if (mapped) return mapped[1];
  const bare = ip.replace(/%.*$/, "");
  if (!isIPv6(bare)) return ip;
  const [head, tail] = bare.split("::");
  const left = head ? head.split(":") : [];
  const right = tail === undefined ? [] : tail ? tail.split(":") : [];
  // An embedded IPv4 tail takes two groups; only the first four groups matter here anyway.
  const groups = tail === undefined ? left : [...left, ...Array(Math.max(0, 8 - left.length - right.length)).fill("0"), ...right];
  return `${groups.slice(0, 4).map((g) => g.toLowerCase().replace(/^0+(?=.)/, "")).join(":")}::/64`;
}
