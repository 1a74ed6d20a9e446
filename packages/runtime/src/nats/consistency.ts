import type { JetStreamManager } from '@nats-io/jetstream';
import { Streams, type ConsumerName } from '@memex/contracts';

/**
 * Resolves once the durable consumer has acknowledged every memo event up to `streamSeq`, i.e. its
 * projection reflects that event; `false` when `timeoutMs` passes first. Read-your-writes for search:
 * the gateway answers PATCH and DELETE only after the indexer's catalog has applied them.
 */
export async function waitForConsumer(
  jsm: JetStreamManager,
  consumer: ConsumerName,
  streamSeq: number,
  { timeoutMs = 2_000, pollMs = 3 }: { timeoutMs?: number; pollMs?: number } = {},
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  let wait = pollMs;
  for (;;) {
    const info = await jsm.consumers.info(Streams.memoEvents, consumer);
    // Everything at or below the ack floor is acked; beyond it, nothing is pending when the consumer
    // has delivered past the sequence and has no outstanding acks.
    if (info.ack_floor.stream_seq >= streamSeq) return true;
    if (info.num_ack_pending === 0 && info.delivered.stream_seq >= streamSeq) return true;
    if (Date.now() + wait > deadline) return false;
    await new Promise((r) => setTimeout(r, wait));
    wait = Math.min(wait * 2, 50);
  }
}
