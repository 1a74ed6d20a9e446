/**
 * How a memo event travels on the bus. Two forms, told apart by the `Memex-Sealed-Box` header:
 *
 * - JSON: the `MemoEventMessage` as it is (`sealed` as base64): what versions before the compact
 *   form publish and read, and what tombstones (never sealed) always are;
 * - compact (header `raw`): a lean JSON envelope (the id, `occurredAt` and `data`'s ids: type and
 *   version are read from the headers every memo event carries, `Memex-Event-Type` and
 *   `Memex-Event-Version`, which dead letters keep too), a newline, then the sealed box's bytes as
 *   they are: a quarter smaller than base64 in the stream, in every consumer's buffers, and in dead
 *   letters (which copy headers), and nothing said twice in a message the stream keeps for ever.
 *
 * `decodeMemoEvent` reads both; the publisher writes compact unless told to stay readable by older
 * versions (`MEMEX_SEAL_DEFLATE=false`, for a rolling upgrade).
 */
import type { MsgHdrs } from '@nats-io/nats-core';
import { Headers, type MemoEventMessage } from '@memex/contracts';
import { decodeJson, encodeJson } from '../nats/codec';

const NEWLINE = 0x0a;
const RAW = 'raw';

export interface EncodedMemoEvent {
  data: Uint8Array;
  /** Headers to set on the message (and the event id as the publish's `msgID`). */
  headers: Record<string, string>;
}

export function encodeMemoEvent(message: MemoEventMessage, { compact }: { compact: boolean }): EncodedMemoEvent {
  const headers: Record<string, string> = { [Headers.eventType]: message.type, [Headers.eventVersion]: String(message.version) };
  if (!compact || message.sealed === undefined) return { data: encodeJson(message), headers };
  // (JSON.stringify writes no raw newline: the first one ends the envelope)
  const head = Buffer.from(JSON.stringify({ id: message.id, occurredAt: message.occurredAt, data: message.data }), 'utf8');
  const box = Buffer.from(message.sealed, 'base64');
  const data = Buffer.allocUnsafe(head.byteLength + 1 + box.byteLength);
  head.copy(data, 0);
  data[head.byteLength] = NEWLINE;
  box.copy(data, head.byteLength + 1);
  return { data, headers: { ...headers, [Headers.sealedBox]: RAW } };
}

export function decodeMemoEvent(data: Uint8Array, headers: MsgHdrs | undefined): MemoEventMessage {
  if (headers?.get(Headers.sealedBox) !== RAW) return decodeJson<MemoEventMessage>(data);
  const bytes = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  const end = bytes.indexOf(NEWLINE);
  if (end < 0) throw new Error('memo event: compact form without its newline');
  const { id, occurredAt, data: ids } = JSON.parse(bytes.toString('utf8', 0, end)) as Pick<MemoEventMessage, 'id' | 'occurredAt' | 'data'>;
  const type = headers.get(Headers.eventType);
  const version = Number(headers.get(Headers.eventVersion));
  if (!type || !Number.isInteger(version) || version < 1) throw new Error('memo event: compact form without its type and version headers');
  // (a sealed event's attributes are in its box: `memo` is null until the consumer opens it)
  return { id, type: type as MemoEventMessage['type'], version, occurredAt, data: ids, memo: null, sealed: bytes.toString('base64', end + 1) };
}
