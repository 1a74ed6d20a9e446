import { describe, expect, it } from 'vitest';
import { Metrics, renderPrometheus } from './registry';

describe('metrics', () => {
  it('counts, gauges and buckets, and renders Prometheus text with source labels', () => {
    const m = new Metrics();
    const requests = m.counter('memex_http_requests_total', 'HTTP requests');
    requests.inc({ route: '/a', status: '200' });
    requests.inc({ route: '/a', status: '200' }, 2);
    requests.inc({ route: '/b', status: '404' });
    m.gauge('memex_streams_open', 'Open streams').set(3);
    const latency = m.histogram('memex_latency_seconds', 'Latency', [0.01, 0.1]);
    latency.observe(0.005);
    latency.observe(0.05);
    latency.observe(1);
    expect(requests.get({ status: '200', route: '/a' })).toBe(3);
    const text = renderPrometheus([{ labels: { service: 'gateway', instance: 'i1' }, families: m.snapshot() }]);
    expect(text).toContain('# TYPE memex_http_requests_total counter');
    expect(text).toContain('memex_http_requests_total{service="gateway",instance="i1",route="/a",status="200"} 3');
    expect(text).toContain('memex_streams_open{service="gateway",instance="i1"} 3');
    expect(text).toContain('memex_latency_seconds_bucket{service="gateway",instance="i1",le="0.01"} 1');
    expect(text).toContain('memex_latency_seconds_bucket{service="gateway",instance="i1",le="0.1"} 2');
    expect(text).toContain('memex_latency_seconds_bucket{service="gateway",instance="i1",le="+Inf"} 3');
    expect(text).toContain('memex_latency_seconds_count{service="gateway",instance="i1"} 3');
    expect(text).toMatch(/memex_latency_seconds_sum\{service="gateway",instance="i1"\} 1\.05\d*/);
  });

  it('merges the same family from several instances under one header', () => {
    const a = new Metrics();
    const b = new Metrics();
    a.counter('memex_x_total', 'X').inc();
    b.counter('memex_x_total', 'X').inc({}, 5);
    const text = renderPrometheus([
      { labels: { instance: 'a' }, families: a.snapshot() },
      { labels: { instance: 'b' }, families: b.snapshot() },
    ]);
    expect(text.match(/# TYPE memex_x_total/g)).toHaveLength(1);
    expect(text).toContain('memex_x_total{instance="a"} 1');
    expect(text).toContain('memex_x_total{instance="b"} 5');
  });
});
