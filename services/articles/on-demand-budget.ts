// The on-demand budget: how many renders public player lookups may start per
// project. The player key is public, so anyone can look up every waiting
// article of a project; this bucket (not the publisher's daily limit, which
// these renders never count against) is what bounds what that costs. Beyond
// it the article stays waiting and the player says "audio not available yet".
// A second, smaller bucket per client address (the gateway passes the client's
// network; kept in memory only, never stored or logged) keeps one client from
// spending the whole budget, so the project's other listeners still get theirs.
import type { BucketStore } from "../../lib/ratelimit/port.js";
import type { OnDemandBudgetSettings } from "../../lib/project-settings.js";
import { createMemoryBucketStore } from "../../lib/ratelimit/memory.js";

export interface OnDemandBudgetDefaults {
  perHour: number;
  burst: number;
  /** Per client address, whatever the project. */
  perAddress: { perHour: number; burst: number };
}

export const DEFAULT_ON_DEMAND_BUDGET: OnDemandBudgetDefaults = { perHour: 60, burst: 30, perAddress: { perHour: 30, burst: 10 } };

export const ON_DEMAND_BUDGET_VARS = {
  ON_DEMAND_RENDERS_PER_HOUR: { type: "number", minimum: 0.001, maximum: 1_000_000, default: DEFAULT_ON_DEMAND_BUDGET.perHour, description: "renders public player lookups may start per project and hour, once the burst is spent (docs/player.md); a project's onDemandBudget setting overrides it" },
  ON_DEMAND_RENDERS_BURST: { type: "integer", minimum: 1, maximum: 1_000_000, default: DEFAULT_ON_DEMAND_BUDGET.burst, description: "renders public player lookups may start per project at once" },
  ON_DEMAND_RENDERS_PER_ADDRESS_PER_HOUR: { type: "number", minimum: 0.001, maximum: 1_000_000, default: DEFAULT_ON_DEMAND_BUDGET.perAddress.perHour, description: "renders the lookups of one client address (an IPv6 client: its /64) may start per hour, whatever the project, once its burst is spent (each articles replica; memory only)" },
  ON_DEMAND_RENDERS_PER_ADDRESS_BURST: { type: "integer", minimum: 1, maximum: 1_000_000, default: DEFAULT_ON_DEMAND_BUDGET.perAddress.burst, description: "renders the lookups of one client address may start at once" },
} as const;

export function onDemandBudgetDefaults(cfg: {
  ON_DEMAND_RENDERS_PER_HOUR: number;
  ON_DEMAND_RENDERS_BURST: number;
  ON_DEMAND_RENDERS_PER_ADDRESS_PER_HOUR: number;
  ON_DEMAND_RENDERS_PER_ADDRESS_BURST: number;
}): OnDemandBudgetDefaults {
  return {
    perHour: cfg.ON_DEMAND_RENDERS_PER_HOUR,
    burst: cfg.ON_DEMAND_RENDERS_BURST,
    perAddress: { perHour: cfg.ON_DEMAND_RENDERS_PER_ADDRESS_PER_HOUR, burst: cfg.ON_DEMAND_RENDERS_PER_ADDRESS_BURST },
  };
}

export interface OnDemandBudget {
  /** One render for the project (and the client's network, when known), if both budgets have one left now. */
  take(projectId: string, clientNetwork?: string): Promise<boolean>;
}

export interface OnDemandBudgetOptions {
  /** The project's own onDemandBudget setting, if any. */
  settingsOf(projectId: string): Promise<OnDemandBudgetSettings | undefined>;
  defaults?: OnDemandBudgetDefaults;
  /** Where the buckets live; default: this process's memory (the embedded default's one articles process). */
  store?: BucketStore;
}

/** A NATS KV key holds only [-/_=.A-Za-z0-9]: other project ids go hex-encoded. */
const bucketKey = (projectId: string) => `on-demand.${/^[-_A-Za-z0-9]+$/.test(projectId) ? projectId : `x${Buffer.from(projectId).toString("hex")}`}`;

export function createOnDemandBudget(opts: OnDemandBudgetOptions): OnDemandBudget {
  const defaults = opts.defaults ?? DEFAULT_ON_DEMAND_BUDGET;
  const store = opts.store ?? createMemoryBucketStore();
  // Addresses in this process's memory only, whatever store the projects' budgets live in.
  const addresses = createMemoryBucketStore();
  const perAddress = { perSecond: defaults.perAddress.perHour / 3600, burst: defaults.perAddress.burst };
  return {
    async take(projectId, clientNetwork) {
      // The address first: a client past its own share spends nothing of the project's.
      if (clientNetwork && (await addresses.take(clientNetwork, 1, perAddress)).granted === 0) return false;
      const own = await opts.settingsOf(projectId);
      const perHour = own?.perHour ?? defaults.perHour;
      const burst = own?.burst ?? defaults.burst;
      const r = await store.take(bucketKey(projectId), 1, { perSecond: perHour / 3600, burst });
      return r.granted === 1;
    },
  };
}
