import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import { SERVICE_NAMES } from '@memex/contracts';
import type { NatsConnection } from '@nats-io/nats-core';
import { collectMetrics, pingService, renderPrometheus, type HealthReport } from '@memex/runtime';
import type { GatewayDeps } from '../http/context';

const ReadyResponse = Type.Object({
  ready: Type.Boolean(),
  nats: Type.Boolean(),
  services: Type.Record(Type.String(), Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()])),
});

/** Readiness is cached this long: a load balancer probing every second doesn't ping every service each time. */
const READY_CACHE_MS = 1_000;

/**
 * Every instance's metrics (each answers over NATS), labelled with service and instance, as
 * Prometheus text. Served on the gateway's operator port (MEMEX_HEALTH_PORT), not the public API.
 */
export async function gatherMetrics(nc: NatsConnection): Promise<string> {
  const instances = await collectMetrics(nc, SERVICE_NAMES);
  return renderPrometheus(instances.map((i) => ({ labels: { service: i.service, instance: i.instance }, families: i.families })));
}

export function healthRoutes(app: FastifyInstance, deps: GatewayDeps): void {
  app.get(
    '/healthz',
    { schema: { summary: 'Liveness', tags: ['operations'], response: { 200: Type.Object({ status: Type.Literal('ok') }) } } },
    async () => ({ status: 'ok' as const }),
  );

  let cached: { at: number; body: { ready: boolean; nats: boolean; services: Record<string, HealthReport | null> } } | undefined;
  app.get(
    '/readyz',
    {
      schema: {
        summary: 'Readiness',
        description: 'Ready when NATS is connected and an instance of each of memo, indexer and agent answers.',
        tags: ['operations'],
        response: { 200: ReadyResponse, 503: ReadyResponse },
      },
    },
    async (_request, reply) => {
      if (!cached || Date.now() - cached.at > READY_CACHE_MS) {
        const nats = !deps.nc.isClosed();
        const [memo, indexer, agent] = nats
          ? await Promise.all((['memo', 'indexer', 'agent'] as const).map((s) => pingService(deps.nc, s, 1_000)))
          : [undefined, undefined, undefined];
        const services = { memo: memo ?? null, indexer: indexer ?? null, agent: agent ?? null };
        const ready = nats && Object.values(services).every((s) => s !== null && s.ready);
        cached = { at: Date.now(), body: { ready, nats, services } };
      }
      return reply.code(cached.body.ready ? 200 : 503).send(cached.body);
    },
  );
}
