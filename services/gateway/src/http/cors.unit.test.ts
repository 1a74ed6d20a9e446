import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { loadGatewayConfig } from '../config';
import { parseCorsOrigins, registerCors } from './cors';

describe('MEMEX_CORS_ORIGINS', () => {
  it('is off by default: no preflight answered, no header sent', async () => {
    expect(loadGatewayConfig({ NATS_URL: 'nats://127.0.0.1:4222' }).MEMEX_CORS_ORIGINS).toBe('');
    const app = Fastify();
    registerCors(app, parseCorsOrigins(''));
    app.post('/api/v1/search', async () => ({ ok: true }));
    const preflight = await app.inject({ method: 'OPTIONS', url: '/api/v1/search', headers: { origin: 'https://app.example.com', 'access-control-request-method': 'POST' } });
    expect(preflight.statusCode).toBe(404);
    const call = await app.inject({ method: 'POST', url: '/api/v1/search', headers: { origin: 'https://app.example.com' } });
    expect(call.statusCode).toBe(200);
    expect(Object.keys(call.headers).filter((h) => h.startsWith('access-control-') || h === 'vary')).toEqual([]);
    await app.close();
  });

  it('takes origins, or *, and refuses anything else naming the variable', async () => {
    expect([...(parseCorsOrigins(' https://app.example.com, http://localhost:5173 ,') as Set<string>)]).toEqual(['https://app.example.com', 'http://localhost:5173']);
    expect(parseCorsOrigins('*')).toBe('*');
    for (const bad of ['app.example.com', 'https://app.example.com/path', 'https://app.example.com:99999', '*, https://a.example']) {
      expect(() => parseCorsOrigins(bad), bad).toThrow(/^MEMEX_CORS_ORIGINS must be \* or comma-separated origins/);
    }
    expect(() => loadGatewayConfig({ NATS_URL: 'nats://127.0.0.1:4222', MEMEX_CORS_ORIGINS: 'example.com' })).toThrow(/MEMEX_CORS_ORIGINS/);
    const app = Fastify();
    registerCors(app, parseCorsOrigins('*'));
    app.get('/api/v1/project', async () => ({ ok: true }));
    const res = await app.inject({ method: 'GET', url: '/api/v1/project', headers: { origin: 'https://anywhere.example' } });
    expect(res.headers['access-control-allow-origin']).toBe('*');
    await app.close();
  });
});
