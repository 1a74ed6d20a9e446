import type { InstanceMetrics } from '@memex/runtime';
import { eventually } from '@memex/testing';

/**
 * A metric of every instance of `service` (as collectMetrics gathers them), by instance id: the sum
 * of its samples whose labels include `labels`.
 */
export function counter(instances: InstanceMetrics[], service: string, name: string, labels: Record<string, string> = {}): Map<string, number> {
  const out = new Map<string, number>();
  for (const i of instances.filter((x) => x.service === service)) {
    const family = i.families.find((f) => f.name === name);
    const value = (family?.samples ?? [])
      .filter((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v))
      .reduce((sum, s) => sum + s.value, 0);
    out.set(i.instance, value);
  }
  return out;
}

/**
 * The Prometheus text of a gateway's operator port (`MEMEX_HEALTH_PORT`) once it holds the event
 * loops of `instances` processes. (A gateway gathers the answers that come within 250 ms: on a busy
 * machine an instance may miss one gathering, so it is read until all have answered.)
 */
export function operatorMetrics(port: number, instances: number): Promise<string> {
  return eventually(async () => {
    const res = await fetch(`http://127.0.0.1:${port}/metrics`);
    const body = await res.text();
    return res.status === 200 && (body.match(/memex_event_loop_delay_seconds_count\{/g) ?? []).length === instances ? body : undefined;
  }, 10_000);
}
