import { describe, expect, it } from 'vitest';
import { EVENT_LOOP_SAMPLE_MS, watchEventLoop } from './eventLoop';
import { Metrics, type MetricFamily } from './registry';

const sample = (families: MetricFamily[], name: string, labels: Record<string, string>) =>
  families.find((f) => f.name === name)?.samples.find((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value ?? 0;

describe('watchEventLoop', () => {
  it('records a stall of the thread as a late timer, and the time the thread was busy', async () => {
    const metrics = new Metrics();
    const watch = watchEventLoop(metrics);
    try {
      await new Promise((resolve) => setTimeout(resolve, 5 * EVENT_LOOP_SAMPLE_MS));
      const blockedUntil = performance.now() + 120;
      while (performance.now() < blockedUntil) {
        // the thread runs nothing else for 120 ms
      }
      await new Promise((resolve) => setTimeout(resolve, 3 * EVENT_LOOP_SAMPLE_MS));
      watch.update();
      const families = metrics.snapshot();
      const count = sample(families, 'memex_event_loop_delay_seconds', { __suffix: '_count' });
      expect(count).toBeGreaterThanOrEqual(3);
      // The timer due during the stall ran at least ~110 ms late: one sample beyond the 0.1 s bucket.
      expect(sample(families, 'memex_event_loop_delay_seconds', { le: '0.1' })).toBeLessThan(count);
      expect(sample(families, 'memex_event_loop_delay_seconds', { __suffix: '_sum' })).toBeGreaterThan(0.1);
      expect(sample(families, 'memex_event_loop_busy_seconds_total', {})).toBeGreaterThanOrEqual(0.12);
    } finally {
      watch.stop();
    }
  });
});
