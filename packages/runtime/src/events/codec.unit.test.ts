import { randomBytes, randomUUID } from 'node:crypto';
import { headers as natsHeaders } from '@nats-io/nats-core';
import { describe, expect, it } from 'vitest';
import { Headers, type MemoEventMessage } from '@memex/contracts';
import { decodeMemoEvent, encodeMemoEvent } from './codec';

const memoId = randomUUID();
const projectId = randomUUID();
const sealedEvent: MemoEventMessage = {
  id: randomUUID(),
  type: 'MemoCreated',
  version: 1,
  occurredAt: '2026-11-25T10:00:00.000Z',
  data: { memoId, projectId } as MemoEventMessage['data'],
  memo: null,
  sealed: randomBytes(1200).toString('base64'),
};

/** The message as a consumer gets it: the bytes and the headers the publisher set. */
function transmit(message: MemoEventMessage, compact: boolean) {
  const { data, sealedBox } = encodeMemoEvent(message, { compact });
  const hdrs = natsHeaders();
  hdrs.set(Headers.eventType, message.type);
  if (sealedBox) hdrs.set(Headers.sealedBox, sealedBox);
  return { data, hdrs, sealedBox };
}

describe('memo event codec', () => {
  it('carries the sealed box as bytes after the JSON: the same message back, a quarter of the box smaller', () => {
    const compact = transmit(sealedEvent, true);
    const json = transmit(sealedEvent, false);
    expect(compact.sealedBox).toBe('raw');
    expect(json.sealedBox).toBeUndefined();
    expect(decodeMemoEvent(compact.data, compact.hdrs)).toEqual(sealedEvent);
    expect(decodeMemoEvent(json.data, json.hdrs)).toEqual(sealedEvent);
    expect(json.data.byteLength - compact.data.byteLength).toBeGreaterThanOrEqual(1600 - 1200 - 20);
  });

  it('sends what has nothing sealed (tombstones) as JSON either way, and reads JSON without the header (older publishers)', () => {
    const tombstone: MemoEventMessage = { ...sealedEvent, type: 'MemoDeleted', version: 5, sealed: undefined } as MemoEventMessage;
    delete tombstone.sealed;
    const sent = transmit(tombstone, true);
    expect(sent.sealedBox).toBeUndefined();
    expect(JSON.parse(new TextDecoder().decode(sent.data))).toEqual(tombstone);
    expect(decodeMemoEvent(new TextEncoder().encode(JSON.stringify(sealedEvent)), undefined)).toEqual(sealedEvent);
  });

  it('keeps newlines inside the JSON escaped, so the first one ends it', () => {
    const odd = { ...sealedEvent, occurredAt: 'line\nbreak' } as MemoEventMessage;
    const sent = transmit(odd, true);
    expect(decodeMemoEvent(sent.data, sent.hdrs)).toEqual(odd);
  });

  it('refuses a compact message cut before its box', () => {
    const hdrs = natsHeaders();
    hdrs.set(Headers.sealedBox, 'raw');
    expect(() => decodeMemoEvent(new TextEncoder().encode('{"id":"x"}'), hdrs)).toThrow(/newline/);
  });
});
