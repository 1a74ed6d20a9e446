import { MemexError, type MemoLogReply, type MemoLogRequest } from '@memex/contracts';
import type { EventStore } from '../eventStore/port';
import { toMessage } from './publisher';

/** The most events one page holds, whatever their size. */
const MEMO_LOG_PAGE_MAX = 500;

/**
 * A page of the event log for a replay, in the form the outbox publishes (sealed events stay
 * sealed: the reader opens them with the memo's key, so an erased memo's events stay closed).
 * The page stops before its JSON passes `budgetBytes`, but always holds one event: a single event
 * fits, it went out on the bus.
 */
export async function readLogPage(store: EventStore, request: MemoLogRequest, budgetBytes: number): Promise<MemoLogReply> {
  const { after, limit } = request ?? {};
  if (!Number.isSafeInteger(after) || after < 0 || !Number.isSafeInteger(limit) || limit < 1) {
    throw new MemexError('InvalidRequest', 'after must be an integer ≥ 0 and limit an integer ≥ 1');
  }
  const head = await store.headPosition();
  const events: MemoLogReply['events'] = [];
  let bytes = 64; // the reply's envelope
  for (const event of await store.readLog({ after, limit: Math.min(limit, MEMO_LOG_PAGE_MAX) })) {
    const item = { position: event.position, message: toMessage(event) };
    bytes += Buffer.byteLength(JSON.stringify(item)) + 1;
    if (events.length > 0 && bytes > budgetBytes) break;
    events.push(item);
  }
  return { events, head: Math.max(head, events.at(-1)?.position ?? 0) };
}
