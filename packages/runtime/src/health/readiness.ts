import type { NatsConnection } from '@nats-io/nats-core';
import type { ServiceName } from '@memex/contracts';
import { natsConnected } from '../nats/connection';
import { pingService, type HealthReport } from './health';

export interface Readiness {
  ready: boolean;
  nats: boolean;
  services: Record<string, HealthReport | null>;
}

/**
 * The gateway's readiness: NATS connected, and an instance of each named service answers ready.
 * The NATS link is checked on every call (a lost server shows at once); the services' answers are
 * reused for `cacheMs` so a probe every second does not ping every service each time, and forgotten
 * when the link drops, so a recovery is judged by fresh answers.
 */
export function readinessProbe(
  nc: NatsConnection,
  services: readonly Exclude<ServiceName, 'gateway'>[],
  { cacheMs = 1_000, pingTimeoutMs = 1_000 }: { cacheMs?: number; pingTimeoutMs?: number } = {},
): () => Promise<Readiness> {
  let cached: { at: number; services: Record<string, HealthReport | null> } | undefined;
  const down = () => ({ ready: false, nats: false, services: Object.fromEntries(services.map((s) => [s, null])) });
  return async () => {
    if (!natsConnected(nc)) {
      cached = undefined;
      return down();
    }
    if (!cached || Date.now() - cached.at > cacheMs) {
      const reports = await Promise.all(services.map((s) => pingService(nc, s, pingTimeoutMs)));
      cached = { at: Date.now(), services: Object.fromEntries(services.map((s, i) => [s, reports[i] ?? null])) };
    }
    // The link may have dropped while the pings were out.
    if (!natsConnected(nc)) {
      cached = undefined;
      return down();
    }
    const ready = Object.values(cached.services).every((s) => s !== null && s.ready);
    return { ready, nats: true, services: cached.services };
  };
}
