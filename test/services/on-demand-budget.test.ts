// The on-demand budget (services/articles/on-demand-budget.ts): renders player
// lookups may start, per project and per client address.
import { expect } from "chai";
import { createMemoryBucketStore } from "../../lib/ratelimit/memory.js";
import { createOnDemandBudget } from "../../services/articles/on-demand-budget.js";
import type { OnDemandBudgetSettings } from "../../lib/project-settings.js";

describe("on-demand budget", () => {
  let now = 0;
  const clock = () => now;
  const budgetWith = (own: Record<string, OnDemandBudgetSettings | undefined> = {}) =>
    createOnDemandBudget({
      settingsOf: async (p) => own[p],
      defaults: { perHour: 60, burst: 3, perAddress: { perHour: 3600, burst: 2 } },
      store: createMemoryBucketStore({ now: clock }),
    });
  const takes = async (n: number, f: () => Promise<boolean>) => {
    const out: boolean[] = [];
    for (let i = 0; i < n; i++) out.push(await f());
    return out;
  };

  it("grants a project its burst, then one render per refill interval; projects are apart", async () => {
    now = 1_000_000;
    const b = budgetWith();
    expect(await takes(4, () => b.take("a"))).to.deep.equal([true, true, true, false]);
    expect(await b.take("b")).to.equal(true);
    now += 60_000; // 60 per hour: one more a minute
    expect(await takes(2, () => b.take("a"))).to.deep.equal([true, false]);
  });

  it("a project's own setting wins over the defaults, field by field", async () => {
    now = 2_000_000;
    const b = budgetWith({ big: { burst: 5 }, none: { burst: 1, perHour: 0.5 } });
    expect(await takes(6, () => b.take("big"))).to.deep.equal([true, true, true, true, true, false]);
    expect(await takes(2, () => b.take("none"))).to.deep.equal([true, false]);
  });

  it("one address gets its share only, and a refused address spends nothing of the project's", async () => {
    now = 3_000_000;
    const b = budgetWith();
    expect(await takes(5, () => b.take("p", "10.0.0.1"))).to.deep.equal([true, true, false, false, false]);
    // The project still has one of its three: another listener gets it.
    expect(await b.take("p", "10.0.0.2")).to.equal(true);
    expect(await b.take("p", "10.0.0.3")).to.equal(false);
  });
});
