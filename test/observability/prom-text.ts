// A strict reader of the Prometheus text exposition format (0.0.4): every
// line must be a comment, a HELP/TYPE line or a well-formed sample, or
// parsing throws with the line number. Enough to prove a scraper can read it.
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Family {
  name: string;
  type: string;
  help?: string;
  samples: Sample[];
}

const NAME = "[a-zA-Z_:][a-zA-Z0-9_:]*";
const LABEL_NAME = "[a-zA-Z_][a-zA-Z0-9_]*";
const TYPES = new Set(["counter", "gauge", "histogram", "summary", "untyped"]);

function parseValue(s: string, where: string): number {
  // Prometheus reads values with Go's ParseFloat, which takes these case-insensitively
  // (prom-client writes "Nan" for an event-loop stat with no samples yet).
  if (/^\+?inf$/i.test(s)) return Infinity;
  if (/^-inf$/i.test(s)) return -Infinity;
  if (/^nan$/i.test(s)) return NaN;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(s)) throw new Error(`${where}: bad value ${JSON.stringify(s)}`);
  return Number(s);
}

function parseLabels(body: string, where: string): Record<string, string> {
  const labels: Record<string, string> = {};
  const re = new RegExp(`\\s*(${LABEL_NAME})="((?:[^"\\\\\\n]|\\\\[\\\\"n])*)"\\s*(,|$)`, "y");
  let i = 0;
  while (i < body.length) {
    re.lastIndex = i;
    const m = re.exec(body);
    if (!m) throw new Error(`${where}: bad label set {${body}}`);
    if (m[1] in labels) throw new Error(`${where}: label ${m[1]} repeated`);
    labels[m[1]] = m[2].replace(/\\n/g, "\n").replace(/\\"/g, '"').replace(/\\\\/g, "\\");
    i = re.lastIndex;
  }
  return labels;
}

/** The family a sample belongs to: histogram and summary samples carry a suffix. */
function familyOf(name: string, families: Map<string, Family>): Family | undefined {
  if (families.has(name)) return families.get(name);
  const m = /^(.*)_(bucket|sum|count)$/.exec(name);
  return m ? families.get(m[1]) : undefined;
}

export function parsePrometheusText(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  const sampleRe = new RegExp(`^(${NAME})(?:\\{(.*)\\})?\\s+(\\S+)(?:\\s+(-?\\d+))?$`);
  text.split("\n").forEach((line, n) => {
    const where = `line ${n + 1}`;
    if (line.trim() === "") return;
    if (line.startsWith("#")) {
      const m = new RegExp(`^#\\s+(HELP|TYPE)\\s+(${NAME})(?:\\s+(.*))?$`).exec(line);
      if (!m) return; // plain comment
      const [, kind, name, rest = ""] = m;
      const f = families.get(name) ?? { name, type: "untyped", samples: [] };
      if (kind === "TYPE") {
        if (!TYPES.has(rest)) throw new Error(`${where}: unknown type ${rest}`);
        if (f.samples.length) throw new Error(`${where}: TYPE after samples of ${name}`);
        f.type = rest;
      } else f.help = rest;
      families.set(name, f);
      return;
    }
    const m = sampleRe.exec(line);
    if (!m) throw new Error(`${where}: not a sample: ${JSON.stringify(line)}`);
    const sample = { name: m[1], labels: m[2] ? parseLabels(m[2], where) : {}, value: parseValue(m[3], where) };
    let f = familyOf(sample.name, families);
    if (!f) {
      f = { name: sample.name, type: "untyped", samples: [] };
      families.set(sample.name, f);
    }
    f.samples.push(sample);
  });
  for (const f of families.values()) if (f.type === "histogram") checkHistogram(f);
  return families;
}

const seriesKey = (labels: Record<string, string>, without: string) =>
  JSON.stringify(Object.entries(labels).filter(([k]) => k !== without).sort());

/** Buckets rise monotonically and the +Inf bucket equals _count, per series. */
function checkHistogram(f: Family): void {
  const series = new Map<string, { buckets: [number, number][]; count?: number }>();
  for (const s of f.samples) {
    const key = seriesKey(s.labels, "le");
    const e = series.get(key) ?? { buckets: [] };
    if (s.name === `${f.name}_bucket`) e.buckets.push([parseValue(s.labels.le, f.name), s.value]);
    if (s.name === `${f.name}_count`) e.count = s.value;
    series.set(key, e);
  }
  for (const [key, e] of series) {
    const sorted = [...e.buckets].sort((a, b) => a[0] - b[0]);
    for (let i = 1; i < sorted.length; i++) {
      if (sorted[i][1] < sorted[i - 1][1]) throw new Error(`${f.name}${key}: bucket counts decrease`);
    }
    const inf = sorted.at(-1);
    if (!inf || inf[0] !== Infinity || inf[1] !== e.count) throw new Error(`${f.name}${key}: +Inf bucket does not equal _count`);
  }
}

/** Sum of the samples named `name` whose labels include `where`. */
export function total(families: Map<string, Family>, name: string, where: Record<string, string> = {}): number {
  const f = familyOf(name, families);
  if (!f) return 0;
  return f.samples
    .filter((s) => s.name === name && Object.entries(where).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0);
}
