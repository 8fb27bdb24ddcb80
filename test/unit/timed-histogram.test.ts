// The per-request latency histograms are recorded without prom-client's
// Histogram (lib/timed-histogram.ts); what /metrics shows must not change.
import { expect } from "chai";
import { Histogram, Registry } from "prom-client";
import { TimedHistogram } from "../../lib/timed-histogram.js";

const buckets = [0.005, 0.01, 0.025, 0.1, 1];
const observations: Array<[string, string, string, number]> = [
  ["GET", "/api/articles/:articleId", "200", 0.004],
  ["GET", "/api/articles/:articleId", "200", 0.005],
  ["GET", "/api/articles/:articleId", "200", 0.02],
  ["POST", "/api/articles", "201", 0.3],
  ["GET", "unmatched", "404", 7],
  ["GET", "/api/articles/:articleId", "404", 0.0001],
];

describe("TimedHistogram", () => {
  it("writes the exposition prom-client writes for the same observations", async () => {
    const ours = new Registry();
    const theirs = new Registry();
    const labelNames = ["method", "route", "status"] as const;
    const t = new TimedHistogram({ name: "h_seconds", help: "a histogram", labelNames, buckets, registers: [ours] });
    const h = new Histogram({ name: "h_seconds", help: "a histogram", labelNames, buckets, registers: [theirs] });
    for (const [method, route, status, s] of observations) {
      t.series(method, route, status).observe(s);
      h.observe({ method, route, status }, s);
    }
    const text = await ours.metrics();
    expect(text).to.equal(await theirs.metrics());
    expect(text).to.include('h_seconds_bucket{le="0.005",method="GET",route="/api/articles/:articleId",status="200"} 2');
    expect(text).to.include('h_seconds_count{method="GET",route="unmatched",status="404"} 1');
    // The JSON form too, but for prom-client's empty exemplar fields.
    const plain = async (r: Registry) =>
      (await r.getMetricsAsJSON()).map((m) => ({ ...m, values: m.values.map((v) => ({ labels: v.labels, value: v.value, metricName: (v as { metricName?: string }).metricName })) }));
    expect(await plain(ours)).to.deep.equal(await plain(theirs));
  });

  it("keeps one series per distinct label values, and lets go of them on reset", async () => {
    const reg = new Registry();
    const t = new TimedHistogram({ name: "r_seconds", help: "rpc", labelNames: ["service", "method", "code"], buckets, registers: [reg] });
    expect(t.series("a", "b", "ok")).to.equal(t.series("a", "b", "ok"));
    expect(t.series("a", "b", "ok")).to.not.equal(t.series("a", "b", "not_found"));
    t.series("a", "b", "ok").observe(0.5);
    reg.resetMetrics();
    expect(await reg.metrics()).to.not.include("r_seconds_count");
  });
});
