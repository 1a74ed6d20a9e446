/**
 * How a memo event travels on the bus. Two forms, told apart by the `Memex-Sealed-Box` header:
 *
 * - JSON: the `MemoEventMessage` as it is (`sealed` as base64): what versions before the compact
 *   form publish and read, and what tombstones (never sealed) always are;
 * - compact (header `raw`): the message's JSON without `sealed`, a newline, then the sealed box's
 *   bytes as they are: a quarter smaller than base64 in the stream, in every consumer's buffers,
 *   and in dead letters (which copy headers).
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
  /** Set `Headers.sealedBox` to this on the message (compact form only). */
  sealedBox?: typeof RAW;
}

export function encodeMemoEvent(message: MemoEventMessage, { compact }: { compact: boolean }): EncodedMemoEvent {
  if (!compact || message.sealed === undefined) return { data: encodeJson(message) };
  const { sealed, ...envelope } = message;
  // (JSON.stringify writes no raw newline: the first one ends the envelope)
  const head = Buffer.from(JSON.stringify(envelope), 'utf8');
  const box = Buffer.from(sealed, 'base64');
  const data = Buffer.allocUnsafe(head.byteLength + 1 + box.byteLength);
  head.copy(data, 0);
  data[head.byteLength] = NEWLINE;
  box.copy(data, head.byteLength + 1);
  return { data, sealedBox: RAW };
}

export function decodeMemoEvent(data: Uint8Array, headers: MsgHdrs | undefined): MemoEventMessage {
  if (headers?.get(Headers.sealedBox) !== RAW) return decodeJson<MemoEventMessage>(data);
  const bytes = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  const end = bytes.indexOf(NEWLINE);
  if (end < 0) throw new Error('memo event: compact form without its newline');
  const envelope = JSON.parse(bytes.toString('utf8', 0, end)) as MemoEventMessage;
  return { ...envelope, sealed: bytes.toString('base64', end + 1) };
}
