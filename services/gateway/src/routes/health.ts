import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import { SERVICE_NAMES } from '@memex/contracts';
import type { NatsConnection } from '@nats-io/nats-core';
import { collectMetrics, readinessProbe, renderPrometheus } from '@memex/runtime';
import type { GatewayDeps } from '../http/context';

const ReadyResponse = Type.Object({
  ready: Type.Boolean(),
  nats: Type.Boolean(),
  services: Type.Record(Type.String(), Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()])),
});

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

  const readiness = readinessProbe(deps.nc, ['memo', 'indexer', 'agent']);
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
      const body = await readiness();
      return reply.code(body.ready ? 200 : 503).send(body);
    },
  );
}
