import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '@memex/runtime';
import { freePort, startNatsServer, tempDir, type NatsServerHandle } from '@memex/testing';
import { loadGatewayConfig } from './config';
import { startGateway, type Gateway } from './service';

describe('failed authentications counted across gateway instances', () => {
  let nats: NatsServerHandle;
  let dir: ReturnType<typeof tempDir>;
  const gateways: Gateway[] = [];

  beforeAll(async () => {
    nats = await startNatsServer();
    dir = tempDir('memex-auth-failures-');
    for (const name of ['a', 'b']) {
      const config = loadGatewayConfig({
        NATS_URL: nats.url,
        MEMEX_DATA_DIR: dir.path,
        MEMEX_PORT: String(await freePort()),
        MEMEX_AUTH_FAILURE_LIMIT: '10',
        MEMEX_CONSISTENCY_TIMEOUT_MS: '0',
      });
      gateways.push(await startGateway(config, { logger: silentLogger(), instance: `gateway-${name}` }));
    }
  }, 60_000);
  afterAll(async () => {
    for (const g of gateways) await g.stop();
    await nats?.stop();
    dir?.remove();
  });

  it('gives an address spreading its guesses over two instances no more than one budget', async () => {
    const attacker = '203.0.113.50';
    const guess = (g: Gateway, i: number) =>
      g.app.inject({ method: 'GET', url: '/api/v1/chat', remoteAddress: attacker, headers: { authorization: `Bearer mxp_guess${i}` } });
    // Five wrong keys on each instance: ten in all, the limit.
    for (let i = 0; i < 10; i++) expect((await guess(gateways[i % 2]!, i)).statusCode).toBe(403);
    // Each instance has seen only five itself. Once they have told each other (they sync every
    // 100 ms), one more request on either is refused; a wait, not a poll: every try would count.
    await new Promise((r) => setTimeout(r, 1_000));
    for (const g of gateways) {
      const res = await g.app.inject({ method: 'GET', url: '/api/v1/chat', remoteAddress: attacker, headers: { authorization: 'Bearer mxp_next' } });
      expect(res.statusCode).toBe(429);
      expect(res.json()).toEqual({ error: 'Too many failed authentications from this address; retry later' });
    }
    // Another address is not affected on either instance.
    const other = await gateways[1]!.app.inject({ method: 'GET', url: '/api/v1/chat', remoteAddress: '198.51.100.20', headers: { authorization: 'Bearer mxp_wrong' } });
    expect(other.statusCode).toBe(403);
  });
});
