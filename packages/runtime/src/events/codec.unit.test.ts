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
  const { data, headers } = encodeMemoEvent(message, { compact });
  const hdrs = natsHeaders();
  for (const [name, value] of Object.entries(headers)) hdrs.set(name, value);
  return { data, hdrs, sealedBox: headers[Headers.sealedBox] };
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
    // nothing the headers say is said again in the body
    const envelope = new TextDecoder().decode(compact.data.subarray(0, compact.data.indexOf(0x0a)));
    expect(JSON.parse(envelope)).toEqual({ id: sealedEvent.id, occurredAt: sealedEvent.occurredAt, data: sealedEvent.data });
    expect(compact.data.byteLength).toBe(Buffer.byteLength(envelope) + 1 + 1200);
  });

  it('refuses a compact message whose type or version header is missing', () => {
    for (const name of [Headers.eventType, Headers.eventVersion]) {
      const sent = transmit(sealedEvent, true);
      sent.hdrs.delete(name);
      expect(() => decodeMemoEvent(sent.data, sent.hdrs), name).toThrow(/type and version headers/);
    }
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
