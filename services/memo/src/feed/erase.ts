import { AckPolicy, DeliverPolicy, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import { nanos } from '@nats-io/nats-core';
import { Streams, Subjects } from '@memex/contracts';

/**
 * Erases a memo's public events but its tombstone (`keepSeq`) from the feed, overwriting them on
 * disk (secure delete), so that nothing it said (its client reference id) outlives the memo.
 * Idempotent: a message already gone is skipped.
 */
export async function eraseMemoFeed(jsm: JetStreamManager, js: JetStreamClient, projectId: string, memoId: string, keepSeq: number): Promise<number> {
  const info = await jsm.consumers.add(Streams.feed, {
    ack_policy: AckPolicy.None,
    deliver_policy: DeliverPolicy.All,
    filter_subject: Subjects.feedOfMemo(projectId, memoId),
    headers_only: true,
    mem_storage: true,
    inactive_threshold: nanos(30_000),
  });
  const seqs: number[] = [];
  try {
    let pending = info.num_pending;
    const consumer = await js.consumers.get(Streams.feed, info.name);
    while (pending > 0) {
      const batch = await consumer.fetch({ max_messages: Math.min(pending, 256), expires: 1_000 });
      let got = 0;
      for await (const msg of batch) {
        got++;
        pending = msg.info.pending;
        if (msg.seq !== keepSeq) seqs.push(msg.seq);
      }
      if (got === 0) break;
    }
  } finally {
    await jsm.consumers.delete(Streams.feed, info.name).catch(() => undefined);
  }
  for (const seq of seqs) {
    await jsm.streams.deleteMessage(Streams.feed, seq, true).catch((error: unknown) => {
      if (!/not found|no message/i.test(String((error as Error)?.message))) throw error;
    });
  }
  return seqs.length;
}
