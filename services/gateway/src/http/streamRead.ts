import { AckPolicy, DeliverPolicy, type JetStreamClient, type JetStreamManager, type JsMsg } from '@nats-io/jetstream';
import { nanos } from '@nats-io/nats-core';

function isNotFound(error: unknown): boolean {
  const e = error as { message?: unknown; api_error?: { err_code?: number } };
  return e?.api_error?.err_code === 10059 || /not found/i.test(String(e?.message));
}

/**
 * Reads a stream's messages on one subject filter after sequence `afterSeq`, oldest first, until
 * `keep` has accepted `limit` of them or none are left: a short-lived ephemeral consumer whose
 * info says at once how many there are, so an empty range answers without waiting. A missing
 * stream reads as empty.
 */
export async function readRange(
  jsm: JetStreamManager,
  js: JetStreamClient,
  options: { stream: string; filter: string; afterSeq: number; limit: number; keep?: (msg: JsMsg) => boolean },
): Promise<JsMsg[]> {
  const { stream, filter, afterSeq, limit, keep = () => true } = options;
  let info;
  try {
    info = await jsm.consumers.add(stream, {
      ack_policy: AckPolicy.None,
      filter_subject: filter,
      ...(afterSeq > 0 ? { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: afterSeq + 1 } : { deliver_policy: DeliverPolicy.All }),
      inactive_threshold: nanos(30_000),
      mem_storage: true,
    });
  } catch (error) {
    if (isNotFound(error)) return [];
    throw error;
  }
  const out: JsMsg[] = [];
  try {
    let pending = info.num_pending;
    const consumer = await js.consumers.get(stream, info.name);
    while (pending > 0 && out.length < limit) {
      // The messages are in the stream already: a short expiry bounds the wait should fewer come (a discard meanwhile).
      const batch = await consumer.fetch({ max_messages: Math.min(pending, Math.max(limit - out.length, 256), 1_000), expires: 1_000 });
      let got = 0;
      for await (const msg of batch) {
        got++;
        pending = msg.info.pending;
        if (keep(msg)) out.push(msg);
        if (out.length >= limit) break;
      }
      if (got === 0) break;
    }
  } finally {
    await jsm.consumers.delete(stream, info.name).catch(() => undefined);
  }
  return out;
}
