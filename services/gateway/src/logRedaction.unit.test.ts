import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { Metrics, createLogger } from '@memex/runtime';
import { buildGateway } from './app';
import { loadGatewayConfig } from './config';
import type { GatewayDeps } from './http/context';
import { RateLimiter } from './rateLimit/limiter';

function capture() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(...chunk.toString().split('\n').filter(Boolean));
      done();
    },
  });
  return { lines, logger: createLogger({ service: 'gateway', level: 'debug', destination: stream }) };
}

const SECRET = 'mxp_s3cretKEYvalue_123';

describe('credentials never reach the logs', () => {
  it('redacts ?api_key= in logged URLs and Authorization headers of requests', async () => {
    const { lines, logger } = capture();
    const config = loadGatewayConfig({ MEMEX_RATE_LIMIT: '0' });
    const deps = {
      config,
      credentials: { authenticate: () => undefined, project: () => undefined },
      limiter: new RateLimiter({ limit: 0, windowMs: 60_000, instance: 't' }),
      logger,
      metrics: new Metrics(),
      instance: 't',
      nc: { isClosed: () => false },
      content: { keyring: undefined },
    } as unknown as GatewayDeps;
    const app = await buildGateway(deps, { logger });
    try {
      const res = await app.inject({
        method: 'GET',
        url: `/api/v1/memo/0191a000-0000-7000-8000-000000000000?api_key=${SECRET}&token=mxo_other&x=1`,
        headers: { authorization: `Bearer ${SECRET}` },
      });
      expect(res.statusCode).toBe(403);
      // Whatever a route or plugin logs about the request goes through the same redaction.
      app.log.info({ req: { method: 'GET', url: `/api/v1/memo/x?api_key=${SECRET}&token=mxo_other&x=1` } }, 'request seen');
      app.log.info({ headers: { authorization: `Bearer ${SECRET}` } }, 'headers logged by someone');
    } finally {
      await app.close();
    }
    const text = lines.join('\n');
    expect(text).toContain('api_key=[redacted]');
    expect(text).toContain('token=[redacted]');
    expect(text).toContain('x=1');
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain('mxo_other');
  });

  it('redacts keys inside error messages, stacks and log messages', () => {
    const { lines, logger } = capture();
    logger.error({ err: new Error(`lookup failed for ${SECRET}`), url: `/x?apikey=${SECRET}` }, `auth with Bearer ${SECRET} failed`);
    logger.warn({ apiKey: SECRET, nested: { authorization: 'Basic dXNlcjpwYXNz' } }, 'fields');
    const text = lines.join('\n');
    expect(lines).toHaveLength(2);
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain('dXNlcjpwYXNz');
    expect(text).toContain('lookup failed for [redacted]');
    expect(text).toContain('Bearer [redacted]');
  });
});
