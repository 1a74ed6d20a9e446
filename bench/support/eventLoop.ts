import type { NatsConnection } from '@nats-io/nats-core';
import type { ServiceName } from '@memex/contracts';
import { collectMetrics, type InstanceMetrics } from '@memex/runtime';
import { counter } from '../../test/support/metrics';

/** One collection of a service's event-loop figures (every instance's summed). */
export interface EventLoopReading {
  /** Cumulative count of timer samples at or below each bucket's bound (seconds), and in all. */
  buckets: Map<number, number>;
  count: number;
  busySeconds: number;
  at: number;
}

/** A metric summed over every instance of `service` (see `counter`). */
function total(instances: InstanceMetrics[], service: ServiceName, name: string, labels: Record<string, string> = {}): number {
  return [...counter(instances, service, name, labels).values()].reduce((a, b) => a + b, 0);
}

/** The service's `memex_event_loop_*` metrics now, over NATS. */
export async function readEventLoop(nc: NatsConnection, service: ServiceName): Promise<EventLoopReading> {
  const instances = await collectMetrics(nc, [service], 200);
  const bounds = new Set<number>();
  for (const i of instances) for (const f of i.families) if (f.name === 'memex_event_loop_delay_seconds') for (const s of f.samples) if (s.labels.le && s.labels.le !== '+Inf') bounds.add(Number(s.labels.le));
  return {
    buckets: new Map([...bounds].sort((a, b) => a - b).map((b) => [b, total(instances, service, 'memex_event_loop_delay_seconds', { le: String(b) })])),
    count: total(instances, service, 'memex_event_loop_delay_seconds', { __suffix: '_count' }),
    busySeconds: total(instances, service, 'memex_event_loop_busy_seconds_total'),
    at: performance.now(),
  };
}

/**
 * What the event loop did between two readings: the share of its timer samples that ran more than
 * 10 ms and 50 ms late, the bucket bounds under which 99% and all of them ran, and the share of the
 * time the thread was busy.
 */
export function describeEventLoop(before: EventLoopReading, after: EventLoopReading): string {
  const count = after.count - before.count;
  if (count <= 0) return 'no samples';
  const within = (bound: number) => (after.buckets.get(bound) ?? 0) - (before.buckets.get(bound) ?? 0);
  const late = (bound: number) => `${(((count - within(bound)) / count) * 100).toFixed(1)}%`;
  const bound = (b: number | undefined) => (b === undefined ? '> 2.5 s' : `${(b * 1000).toFixed(0)} ms`);
  const p99 = [...after.buckets.keys()].find((b) => within(b) >= 0.99 * count);
  const worst = [...after.buckets.keys()].find((b) => within(b) >= count);
  const busy = (after.busySeconds - before.busySeconds) / ((after.at - before.at) / 1000);
  return `busy ${(busy * 100).toFixed(0)}%   timer late > 10 ms ${late(0.01)}, > 50 ms ${late(0.05)}   p99 ≤ ${bound(p99)}, worst ≤ ${bound(worst)}   (${count} samples)`;
}
