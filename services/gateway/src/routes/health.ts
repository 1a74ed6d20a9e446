import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import { SERVICE_NAMES } from '@memex/contracts';
import { collectMetrics, readinessProbe, renderPrometheus } from '@memex/runtime';
import type { GatewayDeps } from '../http/context';

const ReadyResponse = Type.Object({
  ready: Type.Boolean(),
  nats: Type.Boolean(),
  services: Type.Record(Type.String(), Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()])),
});

export function healthRoutes(app: FastifyInstance, deps: GatewayDeps): void {
  app.get(
    '/healthz',
    { schema: { summary: 'Liveness', tags: ['operations'], response: { 200: Type.Object({ status: Type.Literal('ok') }) } } },
    async () => ({ status: 'ok' as const }),
  );

  app.get(
    '/metrics',
    {
      schema: {
        summary: 'Metrics',
        description:
          'Prometheus text format: every instance of every service (each answers over NATS), labelled with ' +
          'service and instance. Unauthenticated like the health endpoints: expose it to your scraper only.',
        tags: ['operations'],
      },
    },
    async (_request, reply) => {
      const instances = await collectMetrics(deps.nc, SERVICE_NAMES);
      const text = renderPrometheus(instances.map((i) => ({ labels: { service: i.service, instance: i.instance }, families: i.families })));
      return reply.type('text/plain; version=0.0.4; charset=utf-8').send(text);
    },
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
