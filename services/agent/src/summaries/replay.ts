import type { NatsConnection } from '@nats-io/nats-core';
import { Subjects, type MemoEventMessage, type MemoLogReply, type MemoLogRequest, type SummarySource } from '@memex/contracts';
import { isKeyErased, openEvent, query, type Keyring } from '@memex/runtime';

/** Events asked for per page of the memo event log (a page also stops short of `max_payload`). */
const REPLAY_PAGE = 256;

/** A live memo whose current content revision has a summary, and where that summary came from. */
export interface SummarizedMemo {
  memoId: string;
  revision: number;
  source: SummarySource;
}

interface Fold {
  revision: number;
  summarizedRevision: number;
  source: SummarySource;
}

/**
 * The project's live memos whose current revision is summarized, from a replay of the memo event
 * log (the memo service's store: the bus keeps no copy). Only this project's events are opened; an
 * erased memo's no longer open and drop out. A memo not yet summarized is left to the live pipeline.
 */
export async function summarizedMemos(nc: NatsConnection, keyring: Keyring, projectId: string): Promise<SummarizedMemo[]> {
  const memos = new Map<string, Fold>();
  const page = (after: number) => query<MemoLogRequest, MemoLogReply>(nc, Subjects.query.memoLog, { after, limit: REPLAY_PAGE }, { timeoutMs: 30_000 });
  let next = await page(0);
  // The log as far as it went when the replay began; later revisions are the live pipeline's.
  const head = next.head;
  while (next.events.length > 0) {
    const mine = next.events.filter(({ message }) => (message.data as { projectId?: string }).projectId === projectId);
    const opened = await Promise.all(
      mine.map(({ message }) =>
        openEvent(keyring, message).catch((error: unknown) => {
          if (isKeyErased(error)) return { ...message, type: 'MemoDeleted' } as MemoEventMessage;
          throw error;
        }),
      ),
    );
    for (const event of opened) fold(memos, event);
    const reached = next.events.at(-1)!.position;
    if (reached >= head) break;
    next = await page(reached);
  }
  const out: SummarizedMemo[] = [];
  for (const [memoId, memo] of memos) {
    if (memo.revision > 0 && memo.summarizedRevision === memo.revision) out.push({ memoId, revision: memo.revision, source: memo.source });
  }
  return out;
}

function fold(memos: Map<string, Fold>, event: MemoEventMessage): void {
  const { memoId } = event.data as { memoId: string };
  const memo = memos.get(memoId) ?? { revision: 0, summarizedRevision: 0, source: 'model' as SummarySource };
  switch (event.type) {
    case 'MemoCreated':
    case 'MemoContentChanged': {
      const { revision } = event.data as { revision: number };
      memos.set(memoId, { ...memo, revision });
      return;
    }
    case 'MemoSummarized': {
      const { revision, source } = event.data as { revision: number; source?: SummarySource };
      // A summary of an older revision than the current one is stale (the decider drops those too).
      if (revision === memo.revision) memos.set(memoId, { ...memo, summarizedRevision: revision, source: source ?? 'model' });
      return;
    }
    case 'MemoDeleted':
      memos.delete(memoId);
      return;
    default:
      return;
  }
}
