/**
 * deploy/grafana/memex-dashboard.json queries only metrics the code registers, with the type the
 * query treats them as (a `_bucket` series is a histogram's), so no panel stays empty because a
 * metric was renamed or never existed.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { REPO_ROOT } from '../support/paths';

interface Panel {
  id: number;
  type: string;
  title: string;
  datasource?: { type: string; uid: string };
  targets?: { expr: string; refId: string }[];
}

const dashboard = JSON.parse(readFileSync(join(REPO_ROOT, 'deploy', 'grafana', 'memex-dashboard.json'), 'utf8')) as { uid: string; title: string; panels: Panel[] };

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    if (name === 'node_modules' || name === 'dist') return [];
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return name.endsWith('.ts') && !name.includes('.test.') ? [path] : [];
  });
}

/** Every metric the services and packages register, by name, with its type. */
function registeredMetrics(): Map<string, string> {
  const found = new Map<string, string>();
  for (const file of [...sourceFiles(join(REPO_ROOT, 'services')), ...sourceFiles(join(REPO_ROOT, 'packages'))]) {
    for (const m of readFileSync(file, 'utf8').matchAll(/\.(counter|histogram|gauge)\(\s*['"`](memex_[a-z0-9_]+)['"`]/g)) found.set(m[2]!, m[1]!);
  }
  return found;
}

describe('the Grafana dashboard', () => {
  const queries = dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => ({ panel: p.title, expr: t.expr })));

  it('has panels with queries, each on the Prometheus data source', () => {
    expect(dashboard.uid).toBe('memex-overview');
    const graphs = dashboard.panels.filter((p) => p.type !== 'row');
    expect(graphs.length).toBeGreaterThanOrEqual(10);
    for (const panel of graphs) {
      expect(panel.targets?.length, panel.title).toBeGreaterThan(0);
      expect(panel.datasource?.type, panel.title).toBe('prometheus');
    }
    expect(new Set(dashboard.panels.map((p) => p.id)).size).toBe(dashboard.panels.length);
  });

  it('queries only metrics the code registers, as the type they are', () => {
    const registered = registeredMetrics();
    expect(registered.get('memex_http_requests_total')).toBe('counter');
    const used = new Set<string>();
    for (const { panel, expr } of queries) {
      for (const [series] of expr.matchAll(/memex_[a-z0-9_]+/g)) {
        const histogram = /_(bucket|sum|count)$/.exec(series);
        const base = histogram && registered.get(series.slice(0, histogram.index)) === 'histogram' ? series.slice(0, histogram.index) : series;
        expect(registered.has(base), `${panel}: ${series} is not registered by any service`).toBe(true);
        if (series.endsWith('_bucket')) expect(registered.get(base), `${panel}: ${series}`).toBe('histogram');
        if (/\b(rate|increase)\(\s*$/.test(expr.slice(0, expr.indexOf(series))) && !histogram) expect(registered.get(base), `${panel}: rate over ${series}`).toBe('counter');
        used.add(base);
      }
    }
    // What the issue asks the dashboard to show.
    for (const needed of ['memex_http_requests_total', 'memex_http_request_seconds', 'memex_consumer_lag_seconds', 'memex_consumer_messages_total', 'memex_tokens_streamed_total', 'memex_answers_total']) {
      expect(used, needed).toContain(needed);
    }
  });
});

describe('the deployments', () => {
  it('pass the OTEL_* settings to every Memex service of the compose stack', () => {
    const compose = parse(readFileSync(join(REPO_ROOT, 'deploy', 'compose', 'docker-compose.yml'), 'utf8'), { merge: true }) as { services: Record<string, { environment?: Record<string, unknown> }> };
    for (const name of ['gateway', 'memo', 'indexer', 'agent-ollama', 'extractor']) {
      const env = compose.services[name]?.environment ?? {};
      for (const variable of ['OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_EXPORTER_OTLP_PROTOCOL', 'OTEL_EXPORTER_OTLP_HEADERS', 'OTEL_TRACES_SAMPLER', 'OTEL_TRACES_SAMPLER_ARG', 'OTEL_RESOURCE_ATTRIBUTES']) {
        expect(env, `${name}: ${variable}`).toHaveProperty(variable);
      }
    }
  });

  it('give the Kubernetes services a sampler and the collector endpoint to uncomment', () => {
    const env = readFileSync(join(REPO_ROOT, 'deploy', 'kubernetes', 'base', 'memex.env'), 'utf8');
    expect(env).toMatch(/^# OTEL_EXPORTER_OTLP_ENDPOINT=http:\/\/\S+:4318$/m);
    expect(env).toMatch(/^OTEL_EXPORTER_OTLP_PROTOCOL=http\/protobuf$/m);
    expect(env).toMatch(/^OTEL_TRACES_SAMPLER=parentbased_traceidratio$/m);
  });
});
