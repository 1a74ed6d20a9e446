import { randomUUID } from 'node:crypto';
import type { NatsConnection } from '@nats-io/nats-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TokenStreamMessage } from '@memex/contracts';
import { startNatsServer, type NatsServerHandle } from '@memex/testing';
import { connectNats } from '../nats/connection';
import { TokenStreamReader, TokenStreamWriter } from './tokenStream';

describe('token streams over NATS', () => {
  let nats: NatsServerHandle;
  let agent: NatsConnection;
  let gateway: NatsConnection;
  beforeAll(async () => {
    nats = await startNatsServer();
    agent = await connectNats({ url: nats.url, name: 'agent' });
    gateway = await connectNats({ url: nats.url, name: 'gateway' });
  });
  afterAll(async () => {
    await agent?.close();
    await gateway?.close();
    await nats?.stop();
  });

  it('delivers every message in order and ends', async () => {
    const id = randomUUID();
    const reader = new TokenStreamReader(gateway, id, { window: 8 });
    await gateway.flush();
    const writer = new TokenStreamWriter(agent, id, { window: 8 });
    const sending = (async () => {
      for (let i = 0; i < 100; i++) await writer.send({ kind: 'token', content: `t${i} ` });
      writer.finish({ kind: 'end', reply: { response: 'r', intermediateSteps: [], citations: [] } });
    })();
    const got: TokenStreamMessage[] = [];
    for await (const m of reader) got.push(m);
    await sending;
    expect(got.filter((m) => m.kind === 'token').map((m) => (m as { content: string }).content).join('')).toBe(
      Array.from({ length: 100 }, (_, i) => `t${i} `).join(''),
    );
    expect(got.at(-1)?.kind).toBe('end');
    expect(got.map((m) => m.seq)).toEqual(got.map((_, i) => i + 1));
  });

  it('keeps a fast writer within the window of a slow reader', async () => {
    const id = randomUUID();
    const window = 8;
    const reader = new TokenStreamReader(gateway, id, { window });
    await gateway.flush();
    const writer = new TokenStreamWriter(agent, id, { window });
    let sent = 0;
    let maxAhead = 0;
    let consumed = 0;
    const sending = (async () => {
      for (let i = 0; i < 60; i++) {
        await writer.send({ kind: 'token', content: 'x' });
        sent += 1;
        maxAhead = Math.max(maxAhead, sent - consumed);
      }
      writer.finish({ kind: 'end', reply: { response: '', intermediateSteps: [], citations: [] } });
    })();
    for await (const m of reader) {
      if (m.kind === 'token') consumed += 1;
      await new Promise((r) => setTimeout(r, 5));
    }
    await sending;
    expect(consumed).toBe(60);
    expect(maxAhead).toBeLessThanOrEqual(window + 1);
  });

  it('aborts the writer within a second of the reader cancelling', async () => {
    const id = randomUUID();
    const reader = new TokenStreamReader(gateway, id);
    // The gateway asks the agent to start over the reader's own connection, after subscribing, so the
    // server has the subscription first; across two connections, as here, flush to get the same order.
    await gateway.flush();
    const writer = new TokenStreamWriter(agent, id);
    await writer.send({ kind: 'token', content: 'first' });
    const iterator = reader[Symbol.asyncIterator]();
    expect((await iterator.next()).value).toMatchObject({ kind: 'token', content: 'first' });
    const cancelledAt = Date.now();
    reader.cancel('client went away');
    await new Promise<void>((resolve) => writer.signal.addEventListener('abort', () => resolve(), { once: true }));
    expect(Date.now() - cancelledAt).toBeLessThan(1_000);
    await expect(writer.send({ kind: 'token', content: 'late' })).rejects.toThrow(/cancelled: client went away/);
    writer.close();
  });

  it('fails the reader when the writer goes silent, and aborts the writer when the reader does', async () => {
    const silentWriter = randomUUID();
    const reader = new TokenStreamReader(gateway, silentWriter, { idleTimeoutMs: 300 });
    const iterate = (async () => {
      for await (const _ of reader) void _;
    })();
    await expect(iterate).rejects.toMatchObject({ code: 'Timeout' });

    const writer = new TokenStreamWriter(agent, randomUUID(), { idleTimeoutMs: 300, heartbeatMs: 50 });
    await new Promise<void>((resolve) => writer.signal.addEventListener('abort', () => resolve(), { once: true }));
    expect(writer.signal.reason).toMatchObject({ code: 'Timeout' });
    writer.close();
  });

  it('stays open through a long pause while heartbeats flow', async () => {
    const id = randomUUID();
    const reader = new TokenStreamReader(gateway, id, { idleTimeoutMs: 400 });
    await gateway.flush();
    const writer = new TokenStreamWriter(agent, id, { idleTimeoutMs: 400, heartbeatMs: 100 });
    const sending = (async () => {
      await writer.send({ kind: 'token', content: 'before ' });
      await new Promise((r) => setTimeout(r, 1_200));
      await writer.send({ kind: 'token', content: 'after' });
      writer.finish({ kind: 'end', reply: { response: '', intermediateSteps: [], citations: [] } });
    })();
    const tokens: string[] = [];
    for await (const m of reader) if (m.kind === 'token') tokens.push(m.content);
    await sending;
    expect(tokens.join('')).toBe('before after');
    expect(writer.signal.aborted).toBe(false);
  });
});
