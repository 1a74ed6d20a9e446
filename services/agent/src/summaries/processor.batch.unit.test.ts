import { describe, expect, it } from 'vitest';
import type { BatchItemResult, MemoEventMessage } from '@memex/contracts';
import { Slots, type CommandClient, type ContentStore } from '@memex/runtime';
import { ExtractiveProvider } from '../llm/extractive';
import { SummaryProcessor } from './processor';

const TEXT = 'Glaciers carve valleys over thousands of years. Meltwater feeds the rivers below. The ice keeps a record of the climate.';

const created = (memoId: string, revision = 1): MemoEventMessage =>
  ({
    id: `e-${memoId}-${revision}`,
    type: revision === 1 ? 'MemoCreated' : 'MemoContentChanged',
    version: revision,
    occurredAt: new Date().toISOString(),
    data: { memoId, projectId: 'p', revision, content: { inline: TEXT, length: TEXT.length, digest: 'd' } },
    memo: null,
  }) as unknown as MemoEventMessage;

/** The memo service's side: records what each batch command carried, answers per item as told. */
function fakes(answer: (memoId: string) => BatchItemResult = () => ({ ok: true, applied: true }), unreadable = new Set<string>()) {
  const sent: { name: string; memoIds: string[] }[] = [];
  const commands = {
    async sendBatch(name: string, items: { memoId: string }[]) {
      sent.push({ name, memoIds: items.map((i) => i.memoId) });
      return items.map((i) => answer(i.memoId));
    },
  } as unknown as CommandClient;
  const content = {
    async read(_projectId: string, memoId: string) {
      if (unreadable.has(memoId)) throw new Error('blob store down');
      return TEXT;
    },
    keyring: { sealJson: async (_p: string, memoId: string, value: unknown) => JSON.stringify({ memoId, value }) },
  } as unknown as ContentStore;
  return { sent, processor: new SummaryProcessor(new ExtractiveProvider(), commands, content) };
}

describe('summaries of a batch', () => {
  it('records every summary of a batch in one command, in the events\' order', async () => {
    const { sent, processor } = fakes();
    const outcomes = await processor.handleBatch(['a', 'b', 'c'].map((id) => ({ event: created(id) })), new Slots(2));
    expect(outcomes).toEqual([undefined, undefined, undefined]);
    expect(sent).toEqual([{ name: 'record-summary-batch', memoIds: ['a', 'b', 'c'] }]);
  });

  it('fails an event alone: its content unreadable, or its item refused; an erased memo is done', async () => {
    const { sent, processor } = fakes(
      (memoId) => (memoId === 'refused' ? { ok: false, error: { code: 'Internal' } } : memoId === 'erased' ? { ok: false, error: { code: 'MemoNotFound' } } : { ok: true, applied: true }),
      new Set(['unreadable']),
    );
    const outcomes = await processor.handleBatch(['a', 'unreadable', 'refused', 'erased', 'b'].map((id) => ({ event: created(id) })));
    expect(outcomes.map((o) => (o ? String((o.error as Error).message) : 'done'))).toEqual(['done', 'blob store down', expect.any(String), 'done', 'done']);
    expect(outcomes[2]).toBeDefined();
    expect(sent).toEqual([{ name: 'record-summary-batch', memoIds: ['a', 'refused', 'erased', 'b'] }]);
  });

  it('skips events that start no revision or whose memo has moved on, and sends nothing for them', async () => {
    const { sent, processor } = fakes();
    const moved = { ...created('old'), memo: { revision: 2 } } as unknown as MemoEventMessage;
    const chunked = { ...created('x'), type: 'MemoChunked' } as unknown as MemoEventMessage;
    expect(await processor.handleBatch([{ event: moved }, { event: chunked }])).toEqual([undefined, undefined]);
    expect(sent.flatMap((s) => s.memoIds)).toEqual([]);
  });
});
