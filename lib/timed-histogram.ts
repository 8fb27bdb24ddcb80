// A latency histogram for the per-request metrics (every HTTP request and
// every internal RPC), recorded at the cost of a few map lookups and additions.
// prom-client's Histogram validates, sorts and hashes its label object on every
// observation, and its timer allocates an hrtime pair and a merged label object
// per call: three of them per GET by id were ~3% of the embedded default's busy
// time on the read path (bench/README.md, issue 33, round 3). Here a series is
// looked up once per distinct label values through nested maps (no key string
// is built), and an observation is a bucket search and three increments.
//
// It takes part in the prom-client registry as any metric does (name, help,
// type, get): the exposition is the one prom-client writes for its own
// histograms, bucket lines cumulative with `le`, then `_sum` and `_count`.
import type { Registry } from "prom-client";

export class Series {
  /** Observations per bucket (not cumulative); the last slot is +Inf. */
  readonly counts: number[];
  sum = 0;
  count = 0;
  constructor(
    readonly labels: Readonly<Record<string, string>>,
    private readonly bounds: readonly number[],
  ) {
    this.counts = new Array<number>(bounds.length + 1).fill(0);
  }

  /** One observation, in seconds. */
  observe(seconds: number): void {
    const bounds = this.bounds;
    let i = 0;
    while (i < bounds.length && seconds > bounds[i]) i++;
    this.counts[i]++;
    this.sum += seconds;
    this.count++;
  }
}

type Level = Map<string, Level | Series>;

export interface TimedHistogramOptions<L extends string> {
  name: string;
  help: string;
  labelNames: readonly L[];
  buckets: readonly number[];
  registers: Registry[];
}

export class TimedHistogram<L extends string> {
  readonly name: string;
  readonly help: string;
  readonly type = "histogram";
  readonly aggregator = "sum";
  readonly #labelNames: readonly L[];
  readonly #bounds: readonly number[];
  #root: Level = new Map();
  #all: Series[] = [];

  constructor(opts: TimedHistogramOptions<L>) {
    this.name = opts.name;
    this.help = opts.help;
    this.#labelNames = opts.labelNames;
    this.#bounds = [...opts.buckets].sort((a, b) => a - b);
    for (const r of opts.registers) r.registerMetric(this as never);
  }

  /** The series of these label values, given in the order of `labelNames`. */
  series(...values: string[]): Series {
    let level = this.#root;
    const last = this.#labelNames.length - 1;
    for (let i = 0; i < last; i++) {
      let next = level.get(values[i]) as Level | undefined;
      if (!next) level.set(values[i], (next = new Map()));
      level = next;
    }
    let s = level.get(values[last]) as Series | undefined;
    if (!s) {
      const labels: Record<string, string> = {};
      this.#labelNames.forEach((n, i) => (labels[n] = values[i]));
      level.set(values[last], (s = new Series(labels, this.#bounds)));
      this.#all.push(s);
    }
    return s;
  }

  /** Lets go of every series (prom-client's `registry.resetMetrics()`). */
  reset(): void {
    this.#root = new Map();
    this.#all = [];
  }

  get() {
    const bucket = `${this.name}_bucket`;
    const values: Array<{ labels: Record<string, string | number>; value: number; metricName: string }> = [];
    for (const s of this.#all) {
      let acc = 0;
      this.#bounds.forEach((le, i) => {
        acc += s.counts[i];
        values.push({ labels: { le, ...s.labels }, value: acc, metricName: bucket });
      });
      values.push({ labels: { le: "+Inf", ...s.labels }, value: s.count, metricName: bucket });
      values.push({ labels: { ...s.labels }, value: s.sum, metricName: `${this.name}_sum` });
      values.push({ labels: { ...s.labels }, value: s.count, metricName: `${this.name}_count` });
    }
    return Promise.resolve({ name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator });
  }
}
