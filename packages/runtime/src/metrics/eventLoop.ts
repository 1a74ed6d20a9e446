import { performance } from 'node:perf_hooks';
import type { Metrics } from './registry';

/** While the thread is busy, the event loop is sampled by a timer due this often: how late it runs is what the thread kept waiting. */
export const EVENT_LOOP_SAMPLE_MS = 10;
/** While it idles (busy under 5% of the last interval), every this many: a sleeping process is not woken 100 times a second. */
const EVENT_LOOP_IDLE_SAMPLE_MS = 500;
/** Buckets (seconds) of `memex_event_loop_delay_seconds`: from the timer's own 1 ms grain to stalls of seconds. */
export const EVENT_LOOP_DELAY_BUCKETS = [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

/**
 * Records how busy this process's event loop is, in `metrics`:
 * - `memex_event_loop_delay_seconds`: a histogram of how late a timer ran, due every
 *   `EVENT_LOOP_SAMPLE_MS` while the thread is busy (every `EVENT_LOOP_IDLE_SAMPLE_MS` while it
 *   idles); a request (a NATS message, an HTTP request) that arrives while the thread runs
 *   something else waits about as long before it is read;
 * - `memex_event_loop_busy_seconds_total`: time the thread spent running (not waiting for I/O),
 *   brought up to date at each collection (`update`).
 *
 * Cumulative, as Prometheus expects: a rate or a difference of two collections gives any window.
 * The timer does not keep the process alive; `stop` ends it.
 */
export function watchEventLoop(metrics: Metrics): { update: () => void; stop: () => void } {
  const delay = metrics.histogram(
    'memex_event_loop_delay_seconds',
    `How late a timer due every ${EVENT_LOOP_SAMPLE_MS} ms (every ${EVENT_LOOP_IDLE_SAMPLE_MS} ms while idle) ran: how long a request arriving then waited for the thread`,
    EVENT_LOOP_DELAY_BUCKETS,
  );
  const busy = metrics.counter('memex_event_loop_busy_seconds_total', 'Time the event loop spent running code rather than waiting for I/O');
  let due = performance.now() + EVENT_LOOP_SAMPLE_MS;
  let since = performance.eventLoopUtilization();
  let timer: NodeJS.Timeout;
  const sample = () => {
    const now = performance.now();
    delay.observe(Math.max(0, now - due) / 1000);
    const current = performance.eventLoopUtilization();
    const wait = performance.eventLoopUtilization(current, since).utilization > 0.05 ? EVENT_LOOP_SAMPLE_MS : EVENT_LOOP_IDLE_SAMPLE_MS;
    since = current;
    due = now + wait;
    timer = setTimeout(sample, wait).unref();
  };
  timer = setTimeout(sample, EVENT_LOOP_SAMPLE_MS).unref();
  let counted = performance.eventLoopUtilization().active;
  return {
    update: () => {
      const active = performance.eventLoopUtilization().active;
      busy.inc({}, (active - counted) / 1000);
      counted = active;
    },
    stop: () => clearTimeout(timer),
  };
}
