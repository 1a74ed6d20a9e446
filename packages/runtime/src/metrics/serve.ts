import { createInbox, type NatsConnection, type Subscription } from '@nats-io/nats-core';
import { Subjects, type ServiceName } from '@memex/contracts';
import { decodeJson, encodeJson } from '../nats/codec';
import { watchEventLoop } from './eventLoop';
import type { MetricFamily, Metrics } from './registry';

export interface InstanceMetrics {
  service: ServiceName;
  instance: string;
  families: MetricFamily[];
}

/**
 * Answers metric requests on the service's control subject. No queue group: every instance answers,
 * so a collector sees them all. Watches the event loop (see `watchEventLoop`) until unsubscribed.
 */
export function serveMetrics(nc: NatsConnection, service: ServiceName, instance: string, metrics: Metrics): Subscription {
  const up = metrics.gauge('memex_up', 'Set to 1 by every running instance');
  const rss = metrics.gauge('memex_process_resident_memory_bytes', 'Resident memory of the process');
  const heap = metrics.gauge('memex_process_heap_used_bytes', 'V8 heap in use');
  const uptime = metrics.gauge('memex_process_uptime_seconds', 'Seconds since the process started');
  const eventLoop = watchEventLoop(metrics);
  const sub = nc.subscribe(Subjects.control(service), {
    callback: (err, msg) => {
      if (err || !msg.reply) return;
      eventLoop.update();
      const memory = process.memoryUsage();
      up.set(1);
      rss.set(memory.rss);
      heap.set(memory.heapUsed);
      uptime.set(process.uptime());
      msg.respond(encodeJson({ service, instance, families: metrics.snapshot() } satisfies InstanceMetrics));
    },
  });
  void sub.closed.then(eventLoop.stop, eventLoop.stop);
  return sub;
}

/** Asks every instance of the services for its metrics and gathers the answers for `waitMs`. */
export async function collectMetrics(nc: NatsConnection, services: readonly ServiceName[], waitMs = 250): Promise<InstanceMetrics[]> {
  const inbox = createInbox();
  const out: InstanceMetrics[] = [];
  const sub = nc.subscribe(inbox, {
    callback: (err, msg) => {
      // A service with no instance running answers with an empty "no responders" status: skip it,
      // and never let one bad answer end the collection (a throw here would close the subscription).
      if (err || msg.data.byteLength === 0) return;
      try {
        out.push(decodeJson<InstanceMetrics>(msg.data));
      } catch {
        // not a metrics answer
      }
    },
  });
  for (const service of services) nc.publish(Subjects.control(service), new Uint8Array(), { reply: inbox });
  await new Promise((r) => setTimeout(r, waitMs));
  sub.unsubscribe();
  return out;
}
