import type { NatsConnection } from '@nats-io/nats-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemexError } from '@memex/contracts';
import { startNatsServer, type NatsServerHandle } from '@memex/testing';
import { EncodedJson } from '../nats/codec';
import { connectNats } from '../nats/connection';
import { silentLogger } from '../logger';
import { payloadBudget } from '../nats/payload';
import { query, queryJson, serveQuery } from './query';

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

describe('query: replies on one inbox per connection', () => {
  let nats: NatsServerHandle;
  let nc: NatsConnection;
  beforeAll(async () => {
    nats = await startNatsServer();
    nc = await connectNats({ url: nats.url, name: 'query-replies-test' });
  });
  afterAll(async () => {
    await nc?.close();
    await nats?.stop();
  });

  it('gives each of many concurrent queries its own answer, from a server on another connection', async () => {
    const server = await connectNats({ url: nats.url, name: 'query-replies-server' });
    const sub = serveQuery<{ n: number }, number>(server, {
      subject: 'test.square',
      queue: 'test',
      logger: silentLogger(),
      // Answers out of order: later requests can finish first.
      handler: async ({ n }) => {
        await new Promise((r) => setTimeout(r, (n * 7) % 13));
        return n * n;
      },
    });
    await server.flush();
    try {
      const ns = Array.from({ length: 200 }, (_, i) => i);
      expect(await Promise.all(ns.map((n) => query<{ n: number }, number>(nc, 'test.square', { n })))).toEqual(ns.map((n) => n * n));
    } finally {
      sub.unsubscribe();
      await server.close();
    }
  });

  it('answers ServiceUnavailable at once when nothing serves the subject, and Timeout when the server stays silent', async () => {
    const started = Date.now();
    const none = await query(nc, 'test.nobody', {}, { timeoutMs: 5_000 }).catch((e: unknown) => e);
    expect((none as MemexError).code).toBe('ServiceUnavailable');
    expect(Date.now() - started).toBeLessThan(4_000);

    const silent = nc.subscribe('test.silent', { callback: () => undefined });
    await nc.flush();
    try {
      const late = await query(nc, 'test.silent', {}, { timeoutMs: 200 }).catch((e: unknown) => e);
      expect((late as MemexError).code).toBe('Timeout');
    } finally {
      silent.unsubscribe();
    }
  });

  it('carries the handler error as the MemexError it was', async () => {
    const sub = serveQuery(nc, {
      subject: 'test.missing',
      queue: 'test',
      logger: silentLogger(),
      handler: async () => {
        throw new MemexError('MemoNotFound');
      },
    });
    try {
      const error = await query(nc, 'test.missing', {}).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(MemexError);
      expect((error as MemexError).code).toBe('MemoNotFound');
    } finally {
      sub.unsubscribe();
    }
  });

  it('fails the queries still waiting when the connection closes, and refuses new ones', async () => {
    const own = await connectNats({ url: nats.url, name: 'query-replies-closing' });
    const silent = own.subscribe('test.hang', { callback: () => undefined });
    await own.flush();
    const waiting = query(own, 'test.hang', {}, { timeoutMs: 30_000 }).catch((e: unknown) => e);
    await new Promise((r) => setTimeout(r, 50));
    silent.unsubscribe();
    await own.close();
    expect(((await waiting) as MemexError).code).toBe('ServiceUnavailable');
    expect(((await query(own, 'test.hang', {}).catch((e: unknown) => e)) as MemexError).code).toBe('ServiceUnavailable');
  });

  it('queryJson: the value as the server encoded it, byte for byte, errors thrown as query throws them', async () => {
    const value = { results: [{ chunk_content: 'two lines\nwith "quotes", a \\ and an ellipsis…', distance: 0.25, score: null }] };
    const served = serveQuery<{ fail: boolean }, typeof value>(nc, {
      subject: 'test.passed-on',
      queue: 'test',
      logger: silentLogger(),
      handler: async ({ fail }) => {
        if (fail) throw new MemexError('MemoNotFound');
        return value;
      },
    });
    try {
      const body = await queryJson(nc, 'test.passed-on', { fail: false });
      expect(body).toBeInstanceOf(Buffer);
      expect(body.toString('utf8')).toBe(JSON.stringify(value));
      const error = await queryJson(nc, 'test.passed-on', { fail: true }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(MemexError);
      expect((error as MemexError).code).toBe('MemoNotFound');
    } finally {
      served.unsubscribe();
    }
  });

  it('sends a value the handler encoded itself (EncodedJson) as it is, to query and queryJson alike', async () => {
    const value = { results: [{ chunk_content: 'pre-encoded "text" — ✓', distance: 0.5 }] };
    const served = serveQuery<Record<string, never>, EncodedJson>(nc, {
      subject: 'test.encoded',
      queue: 'test',
      logger: silentLogger(),
      handler: async () => new EncodedJson(Buffer.from(JSON.stringify(value))),
    });
    try {
      expect((await queryJson(nc, 'test.encoded', {})).toString('utf8')).toBe(JSON.stringify(value));
      expect(await query(nc, 'test.encoded', {})).toEqual(value);
    } finally {
      served.unsubscribe();
    }
  });

  it('queryJson: an answer encoded another way (keys in another order) gives the same value', async () => {
    const replier = nc.subscribe('test.other-encoder', {
      callback: (_err, msg) => {
        msg.respond(new TextEncoder().encode('{ "value": {"n": 1, "s": "é"}, "ok": true }'));
      },
    });
    await nc.flush();
    try {
      expect(JSON.parse((await queryJson(nc, 'test.other-encoder', {})).toString('utf8'))).toEqual({ n: 1, s: 'é' });
    } finally {
      replier.unsubscribe();
    }
  });
});
