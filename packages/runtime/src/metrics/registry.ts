/**
 * A small metrics registry: counters, gauges and histograms with labels, rendered in the Prometheus
 * text format. Each process keeps its own; the gateway's /metrics gathers every instance's over NATS.
 */
export type Labels = Record<string, string>;

export interface MetricFamily {
  name: string;
  help: string;
  type: 'counter' | 'gauge' | 'histogram';
  samples: { labels: Labels; value: number }[];
}

function key(labels: Labels): string {
  return Object.keys(labels)
    .sort()
    .map((k) => `${k}=${labels[k]}`)
    .join(',');
}

abstract class Metric {
  constructor(
    readonly name: string,
    readonly help: string,
  ) {}
  abstract collect(): MetricFamily;
}

export class Counter extends Metric {
  private readonly values = new Map<string, { labels: Labels; value: number }>();
  inc(labels: Labels = {}, by = 1): void {
    const k = key(labels);
    const entry = this.values.get(k);
    if (entry) entry.value += by;
    else this.values.set(k, { labels, value: by });
  }
  get(labels: Labels = {}): number {
    return this.values.get(key(labels))?.value ?? 0;
  }
  collect(): MetricFamily {
    return { name: this.name, help: this.help, type: 'counter', samples: [...this.values.values()].map((v) => ({ ...v })) };
  }
}

export class Gauge extends Metric {
  private readonly values = new Map<string, { labels: Labels; value: number }>();
  set(value: number, labels: Labels = {}): void {
    this.values.set(key(labels), { labels, value });
  }
  add(by: number, labels: Labels = {}): void {
    const k = key(labels);
    const entry = this.values.get(k);
    if (entry) entry.value += by;
    else this.values.set(k, { labels, value: by });
  }
  collect(): MetricFamily {
    return { name: this.name, help: this.help, type: 'gauge', samples: [...this.values.values()].map((v) => ({ ...v })) };
  }
}

/** Cumulative buckets in seconds, as Prometheus expects; `_sum` and `_count` beside them. */
export class Histogram extends Metric {
  private readonly series = new Map<string, { labels: Labels; counts: number[]; sum: number; count: number }>();
  constructor(
    name: string,
    help: string,
    private readonly buckets: readonly number[],
  ) {
    super(name, help);
  }
  observe(value: number, labels: Labels = {}): void {
    const k = key(labels);
    let s = this.series.get(k);
    if (!s) {
      s = { labels, counts: this.buckets.map(() => 0), sum: 0, count: 0 };
      this.series.set(k, s);
    }
    this.buckets.forEach((b, i) => {
      if (value <= b) s.counts[i]! += 1;
    });
    s.sum += value;
    s.count += 1;
  }
  collect(): MetricFamily {
    const samples: MetricFamily['samples'] = [];
    for (const s of this.series.values()) {
      this.buckets.forEach((b, i) => samples.push({ labels: { ...s.labels, le: String(b) }, value: s.counts[i]! }));
      samples.push({ labels: { ...s.labels, le: '+Inf' }, value: s.count });
      samples.push({ labels: { ...s.labels, __suffix: '_sum' }, value: s.sum });
      samples.push({ labels: { ...s.labels, __suffix: '_count' }, value: s.count });
    }
    return { name: this.name, help: this.help, type: 'histogram', samples };
  }
}

/** Latency buckets (seconds) for requests and searches. */
export const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export class Metrics {
  private readonly metrics = new Map<string, Metric>();

  private register<M extends Metric>(metric: M): M {
    const existing = this.metrics.get(metric.name);
    if (existing) return existing as M;
    this.metrics.set(metric.name, metric);
    return metric;
  }

  counter(name: string, help: string): Counter {
    return this.register(new Counter(name, help));
  }
  gauge(name: string, help: string): Gauge {
    return this.register(new Gauge(name, help));
  }
  histogram(name: string, help: string, buckets: readonly number[] = LATENCY_BUCKETS): Histogram {
    return this.register(new Histogram(name, help, buckets));
  }

  snapshot(): MetricFamily[] {
    return [...this.metrics.values()].map((m) => m.collect());
  }
}

const escape = (v: string) => v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');

/**
 * Prometheus text format for several processes' snapshots, each sample labelled with its source
 * (service, instance); families of the same name are merged under one HELP/TYPE header.
 */
export function renderPrometheus(sources: { labels: Labels; families: MetricFamily[] }[]): string {
  const byName = new Map<string, { help: string; type: string; lines: string[] }>();
  for (const { labels: base, families } of sources) {
    for (const f of families) {
      let entry = byName.get(f.name);
      if (!entry) {
        entry = { help: f.help, type: f.type, lines: [] };
        byName.set(f.name, entry);
      }
      for (const { labels, value } of f.samples) {
        const { __suffix: suffix = f.type === 'histogram' ? '_bucket' : '', ...rest } = labels;
        const all = { ...base, ...rest };
        const rendered = Object.entries(all)
          .map(([k, v]) => `${k}="${escape(v)}"`)
          .join(',');
        entry.lines.push(`${f.name}${suffix}{${rendered}} ${Number.isFinite(value) ? value : 0}`);
      }
    }
  }
  const out: string[] = [];
  for (const [name, { help, type, lines }] of byName) out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`, ...lines);
  return `${out.join('\n')}\n`;
}
