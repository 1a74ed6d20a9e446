import type { NatsConnection } from '@nats-io/nats-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemexError } from '@memex/contracts';
import { startNatsServer, type NatsServerHandle } from '@memex/testing';
import { connectNats } from '../nats/connection';
import { silentLogger } from '../logger';
import { payloadBudget } from '../nats/payload';
import { query, serveQuery } from './query';

describe('serveQuery with a reply larger than max_payload', () => {
  let nats: NatsServerHandle;
  let nc: NatsConnection;
  beforeAll(async () => {
    nats = await startNatsServer();
    nc = await connectNats({ url: nats.url, name: 'query-test' });
  });
  afterAll(async () => {
    await nc?.close();
    await nats?.stop();
  });

  it('answers ReplyTooLarge instead of throwing, and keeps serving', async () => {
    const sub = serveQuery<{ size: number }, string>(nc, {
      subject: 'test.big',
      queue: 'test',
      logger: silentLogger(),
      handler: async ({ size }) => 'x'.repeat(size),
    });
    try {
      const budget = payloadBudget(nc);
      const maxPayload = nc.info!.max_payload;
      const error = await query(nc, 'test.big', { size: maxPayload + 10 }, { timeoutMs: 2_000 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(MemexError);
      expect((error as MemexError).code).toBe('ReplyTooLarge');
      expect((error as MemexError).message).toBe('The answer is too large to send');
      const headroom = await query(nc, 'test.big', { size: budget + 1 }, { timeoutMs: 2_000 }).catch((e: unknown) => e);
      expect((headroom as MemexError).code).toBe('ReplyTooLarge');
      // Just under the budget still travels, and the subscription is alive.
      expect(await query(nc, 'test.big', { size: budget - 100 })).toHaveLength(budget - 100);
    } finally {
      sub.unsubscribe();
    }
  });
});
