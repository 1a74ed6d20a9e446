import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NatsConnection } from '@nats-io/nats-core';
import { startNatsServer, type NatsServerHandle } from '@memex/testing';
import { connectNats } from './connection';
import { coalesceWrites } from './writeCoalescing';

/** Counts the socket writes of `nc` (nats.js hands each drained batch of protocol lines to its transport). */
function countWrites(nc: NatsConnection): { readonly count: number } {
  const transport = (nc as unknown as { protocol: { transport: { send(frame: Uint8Array): unknown } } }).protocol.transport;
  const send = transport.send.bind(transport);
  const counter = { count: 0 };
  transport.send = (frame) => {
    counter.count += 1;
    return send(frame);
  };
  return counter;
}

/** Publishes `n` numbered messages, each in a later microtask than the one before (as replies of separate promise chains are). */
async function publishInSeparateMicrotasks(nc: NatsConnection, subject: string, n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    await null;
    nc.publish(subject, String(i));
  }
}

/** Resolves with the first `n` payloads on `subject`, in the order they arrived. */
function receive(nc: NatsConnection, subject: string, n: number): Promise<string[]> {
  const got: string[] = [];
  return new Promise((resolve) => {
    const sub = nc.subscribe(subject, {
      callback: (_, msg) => {
        got.push(msg.string());
        if (got.length === n) {
          sub.unsubscribe();
          resolve(got);
        }
      },
    });
  });
}

describe('coalesceWrites', () => {
  let nats: NatsServerHandle;
  let reader: NatsConnection;
  beforeAll(async () => {
    nats = await startNatsServer();
    reader = await connectNats({ url: nats.url, name: 'reader' });
  });
  afterAll(async () => {
    await reader.close();
    await nats.stop();
  });

  it('writes what one turn sends from many microtasks in a few writes, in order, where nats.js makes one write each', async () => {
    // (20 ms: a loaded machine's preemptions within the loop never reach the bound, tested below)
    for (const writeDelayMs of [0, 20]) {
      const nc = await connectNats({ url: nats.url, name: `writer-${writeDelayMs}`, writeDelayMs });
      try {
        const subject = `coalesce.order.${writeDelayMs}`;
        const received = receive(reader, subject, 50);
        await reader.flush();
        const writes = countWrites(nc);
        await publishInSeparateMicrotasks(nc, subject, 50);
        await nc.flush();
        expect(await received).toEqual(Array.from({ length: 50 }, (_, i) => String(i)));
        // (the flush's PING is one more write either way)
        if (writeDelayMs === 0) expect(writes.count).toBeGreaterThanOrEqual(50);
        else expect(writes.count).toBeLessThanOrEqual(5);
      } finally {
        await nc.close();
      }
    }
  });

  it('writes a lone message when the turn ends, and a waiting one as soon as a later send finds it older than the delay', async () => {
    const nc = await connectNats({ url: nats.url, name: 'writer-timing', writeDelayMs: 1 });
    try {
      const received = receive(reader, 'coalesce.timing', 3);
      await reader.flush();
      const writes = countWrites(nc);
      nc.publish('coalesce.timing', 'alone');
      await null;
      expect(writes.count).toBe(0);
      await new Promise((resolve) => setImmediate(resolve));
      expect(writes.count).toBe(1);

      nc.publish('coalesce.timing', 'first');
      const until = performance.now() + 3;
      while (performance.now() < until) {
        // a busy turn, longer than the delay
      }
      nc.publish('coalesce.timing', 'second');
      // both written by the second send, before the turn ends
      expect(writes.count).toBe(2);
      expect(await received).toEqual(['alone', 'first', 'second']);
    } finally {
      await nc.close();
    }
  });

  it('keeps requests, replies and flushes working', async () => {
    const nc = await connectNats({ url: nats.url, name: 'writer-requests' });
    try {
      const sub = nc.subscribe('coalesce.echo', {
        callback: (_, msg) => {
          msg.respond(`echo ${msg.string()}`);
        },
      });
      await nc.flush();
      const replies = await Promise.all(Array.from({ length: 20 }, (_, i) => nc.request('coalesce.echo', String(i), { timeout: 2_000 })));
      expect(replies.map((r) => r.string())).toEqual(Array.from({ length: 20 }, (_, i) => `echo ${i}`));
      sub.unsubscribe();
    } finally {
      await nc.close();
    }
  });

  it('leaves a connection whose internals it does not know, and a delay of 0, as nats.js writes', async () => {
    expect(coalesceWrites({} as NatsConnection, 1)).toBe(false);
    const nc = await connectNats({ url: nats.url, name: 'writer-zero', writeDelayMs: 0 });
    try {
      expect(coalesceWrites(nc, 0)).toBe(false);
    } finally {
      await nc.close();
    }
  });
});
