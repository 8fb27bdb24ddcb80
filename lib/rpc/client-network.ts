// The header in which the gateway names a player's client network (an IPv4
// address, or an IPv6 /64: gateway/client-network.ts) on its calls to the
// articles service, which bounds the renders one client's lookups may start
// (services/articles/on-demand-budget.ts). Held in memory there, never stored or logged.
export const CLIENT_NETWORK_HEADER = "x-client-network";
