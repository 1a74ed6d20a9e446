import { get } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { freePort } from '@memex/testing';
import { startHealthServer } from './httpHealth';

const fetchJson = (port: number, path: string) =>
  new Promise<{ status: number; body: unknown }>((resolve, reject) => {
    get({ host: '127.0.0.1', port, path }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
    }).on('error', reject);
  });

describe('per-process health endpoint', () => {
  it('answers /healthz always and /readyz by the check', async () => {
    let ready = false;
    const server = await startHealthServer(await freePort(), 'indexer', 'i-1', async () => ({ ready, details: { model: 'm' } }));
    const port = (server.address() as AddressInfo).port;
    try {
      expect(await fetchJson(port, '/healthz')).toEqual({ status: 200, body: { status: 'ok', service: 'indexer', instance: 'i-1' } });
      expect(await fetchJson(port, '/readyz')).toEqual({ status: 503, body: { service: 'indexer', instance: 'i-1', ready: false, details: { model: 'm' } } });
      ready = true;
      expect((await fetchJson(port, '/readyz')).status).toBe(200);
      expect((await fetchJson(port, '/nope')).status).toBe(404);
    } finally {
      server.close();
    }
  });
});
