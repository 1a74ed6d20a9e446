import { get } from 'node:http';
import { Writable } from 'node:stream';
import type { NatsConnection } from '@nats-io/nats-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QueueGroups, Subjects } from '@memex/contracts';
import { freePort, startNatsServer, type NatsServerHandle } from '@memex/testing';
import { loadEnv, ServiceEnv } from '../config';
import { pingService } from '../health/health';
import { createLogger } from '../logger';
import { collectMetrics } from '../metrics/serve';
import { connectNats } from '../nats/connection';
import { query, serveQuery } from '../queries/query';
import { startService, type ServiceScope } from './bootstrap';

const fetchJson = (port: number, path: string) =>
  new Promise<{ status: number; body: unknown }>((resolve, reject) => {
    get({ host: '127.0.0.1', port, path }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
    }).on('error', reject);
  });

/** A logger whose lines the test reads back. */
function recordingLogger() {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { lines, logger: createLogger({ service: 'extractor', instanceId: 'x-1', level: 'info', destination }) };
}

describe('startService', () => {
  let nats: NatsServerHandle;
  let client: NatsConnection;
  beforeAll(async () => {
    nats = await startNatsServer();
    client = await connectNats({ url: nats.url, name: 'bootstrap-test' });
  });
  afterAll(async () => {
    await client.close();
    await nats.stop();
  });

  it('serves queries, metrics and health (NATS and HTTP), logs the ready line, and stops in reverse of start', async () => {
    const healthPort = await freePort();
    const config = loadEnv(ServiceEnv, { NATS_URL: nats.url, MEMEX_HEALTH_PORT: String(healthPort) });
    const { lines, logger } = recordingLogger();
    const order: string[] = [];
    let scope: ServiceScope | undefined;
    const service = await startService({ service: 'extractor', instance: 'x-1', logger }, config, async (s) => {
      scope = s;
      s.onClose(() => order.push('store closed'));
      s.onStop(() => order.push('first started, stopped last'));
      s.onStop(() => order.push(`second started, stopped first; NATS open: ${!s.nc.isClosed()}`));
      s.onClose(() => order.push(`second store closed first; NATS closed: ${s.nc.isClosed()}`));
      s.metrics.counter('memex_test_total', 'Counted by the test').inc();
      const echo = serveQuery<{ text: string }, { text: string; instance: string }>(s.nc, {
        subject: Subjects.query.memoStatus,
        queue: QueueGroups.extractor,
        logger: s.logger,
        handler: async ({ text }) => ({ text, instance: s.instance }),
      });
      return {
        health: async () => ({ details: { kind: 'test' } }),
        subscriptions: [echo],
        served: () => order.push('served'),
        ready: { message: 'test service ready', fields: { kind: 'test' } },
        exports: { answer: 42 },
      };
    });
    try {
      expect(service.answer).toBe(42);
      expect(service.instance).toBe('x-1');
      expect(await query(client, Subjects.query.memoStatus, { text: 'hi' })).toEqual({ text: 'hi', instance: 'x-1' });
      expect(await pingService(client, 'extractor')).toEqual({ service: 'extractor', instance: 'x-1', ready: true, details: { kind: 'test' } });
      expect(await fetchJson(healthPort, '/readyz')).toEqual({ status: 200, body: { service: 'extractor', instance: 'x-1', ready: true, details: { kind: 'test' } } });
      const [metrics] = await collectMetrics(client, ['extractor']);
      expect(metrics?.families.map((f) => f.name)).toContain('memex_test_total');
      expect(lines.find((l) => l.msg === 'test service ready')).toMatchObject({ kind: 'test' });
      expect(order).toEqual(['served']);
    } finally {
      await Promise.all([service.stop(), service.stop()]);
    }
    expect(order).toEqual([
      'served',
      'second started, stopped first; NATS open: true',
      'first started, stopped last',
      'second store closed first; NATS closed: true',
      'store closed',
    ]);
    expect(scope?.nc.isClosed()).toBe(true);
    expect(await pingService(client, 'extractor', 300)).toBeUndefined();
    await expect(fetchJson(healthPort, '/healthz')).rejects.toThrow();
  });

  it('adds the NATS connection to readiness and leaves out details a service does not give', async () => {
    const config = loadEnv(ServiceEnv, { NATS_URL: nats.url, LOG_LEVEL: 'silent' });
    let ready = false;
    const service = await startService({ service: 'agent' }, config, async () => ({
      health: async () => ({ ready }),
      ready: { message: 'ready', fields: {} },
      exports: {},
    }));
    try {
      expect(await pingService(client, 'agent')).toEqual({ service: 'agent', instance: service.instance, ready: false });
      ready = true;
      expect((await pingService(client, 'agent'))?.ready).toBe(true);
    } finally {
      await service.stop();
    }
  });

  it('undoes what a failing start registered and closes NATS before the error reaches the caller', async () => {
    const config = loadEnv(ServiceEnv, { NATS_URL: nats.url, LOG_LEVEL: 'silent' });
    const undone: string[] = [];
    let nc: NatsConnection | undefined;
    await expect(
      startService({ service: 'indexer' }, config, async (s) => {
        nc = s.nc;
        s.onClose(() => undone.push('store closed'));
        s.onStop(() => undone.push('consumer stopped'));
        throw new Error('the index file is locked');
      }),
    ).rejects.toThrow('the index file is locked');
    expect(undone).toEqual(['consumer stopped', 'store closed']);
    expect(nc?.isClosed()).toBe(true);
  });
});
