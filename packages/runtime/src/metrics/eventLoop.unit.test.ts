import { describe, expect, it } from 'vitest';
import { EVENT_LOOP_SAMPLE_MS, watchEventLoop } from './eventLoop';
import { Metrics, type MetricFamily } from './registry';

const sample = (families: MetricFamily[], name: string, labels: Record<string, string>) =>
  families.find((f) => f.name === name)?.samples.find((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value ?? 0;
const block = (ms: number) => {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // the thread runs nothing else
  }
};
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('watchEventLoop', () => {
  it('records a stall of the thread as a late timer, and the time the thread was busy', async () => {
    const metrics = new Metrics();
    const watch = watchEventLoop(metrics);
    try {
      block(120);
      await sleep(3 * EVENT_LOOP_SAMPLE_MS);
      watch.update();
      const families = metrics.snapshot();
      const count = sample(families, 'memex_event_loop_delay_seconds', { __suffix: '_count' });
      expect(count).toBeGreaterThanOrEqual(2);
      // The timer due during the stall ran at least ~110 ms late: one sample beyond the 0.1 s bucket.
      expect(sample(families, 'memex_event_loop_delay_seconds', { le: '0.1' })).toBeLessThan(count);
      expect(sample(families, 'memex_event_loop_delay_seconds', { __suffix: '_sum' })).toBeGreaterThan(0.1);
      expect(sample(families, 'memex_event_loop_busy_seconds_total', {})).toBeGreaterThanOrEqual(0.12);
    } finally {
      watch.stop();
    }
  });

  it('samples a busy thread every 10 ms and an idle one rarely', async () => {
    const metrics = new Metrics();
    const watch = watchEventLoop(metrics);
    const count = () => sample(metrics.snapshot(), 'memex_event_loop_delay_seconds', { __suffix: '_count' });
    try {
      // Busy: 20 ms of work at a time, for ~300 ms.
      for (let i = 0; i < 15; i++) {
        block(20);
        await sleep(0);
      }
      const busy = count();
      await sleep(300);
      const idle = count() - busy;
      expect(busy).toBeGreaterThanOrEqual(10);
      expect(idle).toBeLessThanOrEqual(3);
    } finally {
      watch.stop();
    }
  });
});
