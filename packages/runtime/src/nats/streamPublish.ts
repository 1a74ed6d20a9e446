import { headers as natsHeaders, type MsgHdrs, type NatsConnection } from '@nats-io/nats-core';
import { Headers } from '@memex/contracts';
import { decodeJson } from './codec';
import { requestReply } from './replyInbox';

/** What JetStream answers a stored publish with. */
export interface PubAck {
  stream: string;
  seq: number;
  /** The message id was seen inside the stream's duplicate window: stored once, earlier. */
  duplicate: boolean;
}

export interface StreamPublishOptions {
  /** `Nats-Msg-Id`: JetStream stores a message id once within the stream's duplicate window. */
  msgID?: string;
  headers?: MsgHdrs;
  timeoutMs?: number;
}

/**
 * Publishes to the stream that takes `subject` and waits for its acknowledgement, as `js.publish`
 * does, the acknowledgement awaited on the connection's shared `ReplyInbox` (nats.js's request path
 * builds an Error per publish). No stream or no JetStream → ServiceUnavailable, no acknowledgement in
 * time → Timeout (MemexErrors, which `fromNatsError` passes through); JetStream's refusal → an Error
 * with its description.
 */
export async function publishToStream(nc: NatsConnection, subject: string, data: Uint8Array, options: StreamPublishOptions = {}): Promise<PubAck> {
  const hdrs = options.headers ?? natsHeaders();
  if (options.msgID) hdrs.set(Headers.msgId, options.msgID);
  const msg = await requestReply(nc, subject, data, { headers: hdrs, timeoutMs: options.timeoutMs ?? 5_000 });
  let ack: { stream?: string; seq?: number; duplicate?: boolean; error?: { code?: number; err_code?: number; description?: string } };
  try {
    ack = decodeJson<typeof ack>(msg.data);
  } catch {
    throw new Error(`JetStream answered a publish to ${subject} with something other than JSON`);
  }
  if (ack.error) throw new Error(`JetStream refused a publish to ${subject}: ${ack.error.description ?? 'no description'} (${ack.error.code ?? '?'}/${ack.error.err_code ?? '?'})`);
  if (!ack.stream || typeof ack.seq !== 'number') throw new Error(`JetStream answered a publish to ${subject} without a stream and sequence`);
  return { stream: ack.stream, seq: ack.seq, duplicate: ack.duplicate === true };
}
