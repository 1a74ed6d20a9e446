import type { InstanceMetrics } from '@memex/runtime';

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
