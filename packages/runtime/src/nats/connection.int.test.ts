import { describe, expect, it } from 'vitest';
import { startNatsServer } from '@memex/testing';
import { connectNats } from './connection';

describe('connectNats with credentials', () => {
  it('logs in with a user and password, and fails without them', async () => {
    const nats = await startNatsServer(['--user', 'memex', '--pass', 's3cret']);
    try {
      await expect(connectNats({ url: nats.url, name: 'anonymous', timeoutMs: 2_000 })).rejects.toThrow(/auth/i);
      const nc = await connectNats({ url: nats.url, name: 'user', auth: { NATS_USER: 'memex', NATS_PASSWORD: 's3cret' } });
      await nc.flush();
      await nc.close();
    } finally {
      await nats.stop();
    }
  });

  it('logs in with a token', async () => {
    const nats = await startNatsServer(['--auth', 'tok-123']);
    try {
      await expect(connectNats({ url: nats.url, name: 'wrong', timeoutMs: 2_000, auth: { NATS_TOKEN: 'nope' } })).rejects.toThrow(/auth/i);
      const nc = await connectNats({ url: nats.url, name: 'token', auth: { NATS_TOKEN: 'tok-123' } });
      await nc.flush();
      await nc.close();
    } finally {
      await nats.stop();
    }
  });
});
