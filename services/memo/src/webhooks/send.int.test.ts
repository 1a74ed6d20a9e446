import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { REPLY_BODY_LIMIT, sendWebhook } from './send';

describe('sending one webhook delivery (real sockets)', () => {
  let server: Server | undefined;
  let hits: string[] = [];
  afterEach(async () => {
    server?.closeAllConnections();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    server = undefined;
    hits = [];
  });

  const serve = async (handler: Parameters<typeof createServer>[1]) => {
    server = createServer((req, res) => {
      hits.push(req.url ?? '');
      handler!(req, res);
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    return (server.address() as AddressInfo).port;
  };
  const open = { timeoutMs: 2_000, allowPrivate: true };

  it('checks the address when it connects: loopback is refused by literal and by name, and nothing is sent', async () => {
    const port = await serve((_req, res) => res.end('ok'));
    for (const host of ['127.0.0.1', 'localhost', '[::ffff:127.0.0.1]']) {
      const result = await sendWebhook(new URL(`http://${host}:${port}/h`), '{}', {}, { timeoutMs: 2_000, allowPrivate: false });
      expect(result.ok, host).toBe(false);
      expect(result.status).toBeNull();
      expect(result.error).toMatch(/webhooks may not reach/);
    }
    expect(hits).toEqual([]);
    expect((await sendWebhook(new URL(`http://localhost:${port}/h`), '{}', {}, open)).ok).toBe(true);
  });

  it('does not follow redirects: a 3xx is a failed delivery', async () => {
    const port = await serve((req, res) => {
      if (req.url === '/h') {
        res.writeHead(302, { location: '/elsewhere' });
        res.end();
      } else res.end('should not be reached');
    });
    const result = await sendWebhook(new URL(`http://127.0.0.1:${port}/h`), '{}', {}, open);
    expect(result).toMatchObject({ ok: false, status: 302, error: 'redirect (302) not followed' });
    expect(hits).toEqual(['/h']);
  });

  it('reads at most 64 KiB of a reply and gives up on a receiver slower than the timeout', async () => {
    const port = await serve((req, res) => {
      if (req.url === '/big') {
        res.writeHead(200);
        const chunk = Buffer.alloc(16 * 1024, 120);
        // 8 MiB, more than anyone should read.
        for (let i = 0; i < 512; i++) res.write(chunk);
        res.end();
      }
      // /slow never answers.
    });
    const big = await sendWebhook(new URL(`http://127.0.0.1:${port}/big`), '{}', {}, open);
    expect(big.ok).toBe(true);
    expect(big.replyBytes).toBeLessThanOrEqual(REPLY_BODY_LIMIT);
    const started = Date.now();
    const slow = await sendWebhook(new URL(`http://127.0.0.1:${port}/slow`), '{}', {}, { ...open, timeoutMs: 300 });
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(slow).toMatchObject({ ok: false, status: null, error: 'no answer within 300 ms' });
  });
});
