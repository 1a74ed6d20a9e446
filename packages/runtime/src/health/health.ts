import type { NatsConnection, Subscription } from '@nats-io/nats-core';
import { QueueGroups, Subjects, type ServiceName } from '@memex/contracts';
import { decodeJson, encodeJson } from '../nats/codec';

export interface HealthReport {
  service: ServiceName;
  instance: string;
  ready: boolean;
  /** Free-form facts worth showing on /readyz: store kind, model, backlog. */
  details?: Record<string, unknown>;
}

/** Answers health pings for one service instance; any instance of the service may answer. */
export function serveHealth(
  nc: NatsConnection,
  service: Exclude<ServiceName, 'gateway'>,
  instance: string,
  check: () => Promise<{ ready: boolean; details?: Record<string, unknown> }>,
): Subscription {
  return nc.subscribe(Subjects.health(service), {
    queue: QueueGroups[service],
    callback: (err, msg) => {
      if (err) return;
      void check()
        .catch((error: unknown) => ({ ready: false, details: { error: String((error as Error)?.message ?? error) } }))
        .then((r) => msg.respond(encodeJson({ service, instance, ...r } satisfies HealthReport)));
    },
  });
}

/** Pings a service; resolves to its report or to `undefined` when no instance answers in time. */
export async function pingService(nc: NatsConnection, service: ServiceName, timeoutMs = 1_000): Promise<HealthReport | undefined> {
  try {
    const msg = await nc.request(Subjects.health(service), new Uint8Array(), { timeout: timeoutMs });
    return decodeJson<HealthReport>(msg.data);
  } catch {
    return undefined;
  }
}
