import { describe, expect, it } from 'vitest';
import type { CreateMemoInput, MemoEvent } from '@memex/contracts';
import { decide, evolve, fold, initialState, isPending, type MemoCommand, type MemoState } from './decider';

const memoId = '0190d7a4-0000-7000-8000-000000000001';
const projectId = '0190d7a4-0000-7000-8000-0000000000aa';
const now = '2026-01-01T00:00:00.000Z';
const later = '2026-01-02T00:00:00.000Z';

const input: CreateMemoInput = {
  title: 'Plan',
  content: 'Do things.',
  metadata: {},
  referenceId: null,
  tags: ['given'],
  source: null,
  type: 'text',
  expirationDate: null,
};

/** given events, when command, then events (or an error code). */
function given(...events: MemoEvent[]) {
  const state = fold(events);
  return {
    when: (command: MemoCommand) => ({
      then: (expected: MemoEvent['type'][]) => expect(decide(command, state).map((e) => e.type)).toEqual(expected),
      thenEvents: () => decide(command, state),
      thenFails: (code: string) => expect(() => decide(command, state)).toThrow(expect.objectContaining({ code })),
    }),
    state,
  };
}

const created = (over: Partial<CreateMemoInput> = {}): MemoEvent[] =>
  decide({ type: 'CreateMemo', memoId, projectId, input: { ...input, ...over }, now }, initialState());

describe('memo decider', () => {
  it('creates a pending memo with the given tags', () => {
    const events = created();
    expect(events.map((e) => e.type)).toEqual(['MemoCreated']);
    const state = fold(events);
    expect(state.status).toBe('active');
    if (state.status !== 'active') return;
    expect(isPending(state.memo)).toBe(true);
    expect(state.memo.tags.map((t) => t.tag)).toEqual(['given']);
  });

  it('archives at once a memo created already expired', () => {
    expect(created({ expirationDate: '2000-01-01T00:00:00.000Z' }).map((e) => e.type)).toEqual(['MemoCreated', 'MemoArchived']);
  });

  it('refuses to create twice', () => {
    given(...created()).when({ type: 'CreateMemo', memoId, projectId, input, now }).thenFails('InvalidRequest');
  });

  it('PATCH without content emits only the changed fields', () => {
    const events = given(...created())
      .when({ type: 'UpdateMemo', projectId, input: { title: 'Plan', source: 'web' }, now: later })
      .thenEvents();
    expect(events).toEqual([{ type: 'MemoUpdated', data: { memoId, projectId, changes: { source: 'web' }, updatedAt: later } }]);
  });

  it('PATCH with the same values changes nothing', () => {
    given(...created()).when({ type: 'UpdateMemo', projectId, input: { title: 'Plan', content: 'Do things.' }, now }).then([]);
  });

  it('PATCH with content starts a new revision and clears summary, tags and chunks', () => {
    const history = [
      ...created(),
      { type: 'MemoChunked', data: { memoId, projectId, revision: 1, model: 'm', chunks: [{ uuid: 'c', index: 0, start: 0, end: 2 }], at: now } },
      { type: 'MemoSummarized', data: { memoId, projectId, revision: 1, summary: 'S', at: now } },
      { type: 'MemoTagged', data: { memoId, projectId, revision: 1, tags: [{ uuid: 't', tag: 'auto' }], at: now } },
    ] satisfies MemoEvent[];
    const { state } = given(...history);
    expect(state.status === 'active' && isPending(state.memo)).toBe(false);
    expect(state.status === 'active' && state.memo.tags.map((t) => t.tag)).toEqual(['given', 'auto']);

    const change = decide({ type: 'UpdateMemo', projectId, input: { content: 'New.' }, now: later }, state);
    expect(change.map((e) => e.type)).toEqual(['MemoContentChanged']);
    const after = change.reduce(evolve, state);
    expect(after.status === 'active' && after.memo).toMatchObject({ revision: 2, summary: '', tags: [], chunks: [], clientTags: [] });
    expect(after.status === 'active' && isPending(after.memo)).toBe(true);
  });

  it('drops processing results of an older revision or another project', () => {
    const history = [...created(), { type: 'MemoContentChanged', data: { memoId, projectId, revision: 2, content: 'B', updatedAt: now } }] satisfies MemoEvent[];
    given(...history).when({ type: 'RecordSummary', projectId, revision: 1, summary: 'old', tags: [], now }).then([]);
    given(...history).when({ type: 'RecordChunks', projectId: 'other', revision: 2, model: 'm', chunks: [], now }).then([]);
    given(...history).when({ type: 'RecordChunks', projectId, revision: 2, model: 'm', chunks: [], now }).then(['MemoChunked']);
  });

  it('records each revision\'s results once', () => {
    const history = [...created(), { type: 'MemoSummarized', data: { memoId, projectId, revision: 1, summary: 'S', at: now } }] satisfies MemoEvent[];
    given(...history).when({ type: 'RecordSummary', projectId, revision: 1, summary: 'S2', tags: [], now }).then([]);
  });

  it('records a processing failure until the stage succeeds, which clears it', () => {
    const failed = given(...created())
      .when({ type: 'RecordProcessingFailure', projectId, revision: 1, stage: 'indexing', message: 'boom', now })
      .thenEvents();
    let state: MemoState = fold([...created(), ...failed]);
    expect(state.status === 'active' && state.memo.processingError?.message).toBe('boom');
    state = evolve(state, { type: 'MemoChunked', data: { memoId, projectId, revision: 1, model: 'm', chunks: [], at: now } });
    expect(state.status === 'active' && state.memo.processingError).toBeNull();
  });

  it('DELETE needs a live memo in the caller\'s project', () => {
    given(...created()).when({ type: 'DeleteMemo', projectId: 'other', now }).thenFails('ResourceNotInProject');
    given().when({ type: 'DeleteMemo', projectId, now }).thenFails('MemoNotFound');
    const deleted = [...created(), { type: 'MemoDeleted', data: { memoId, projectId, at: now } }] satisfies MemoEvent[];
    given(...deleted).when({ type: 'DeleteMemo', projectId, now }).thenFails('MemoNotFound');
    given(...deleted).when({ type: 'UpdateMemo', projectId, input: { title: 'x' }, now }).thenFails('MemoNotFound');
  });

  it('archives only when expired, and a later expiration date brings the memo back', () => {
    const expiring = created({ expirationDate: '2026-01-01T12:00:00.000Z' });
    given(...expiring).when({ type: 'ArchiveMemo', projectId, now }).then([]);
    given(...expiring).when({ type: 'ArchiveMemo', projectId, now: later }).then(['MemoArchived']);
    const archived = [...expiring, { type: 'MemoArchived', data: { memoId, projectId, reason: 'expired', at: later } }] satisfies MemoEvent[];
    given(...archived).when({ type: 'ArchiveMemo', projectId, now: later }).then([]);
    given(...archived)
      .when({ type: 'UpdateMemo', projectId, input: { expirationDate: '2030-01-01T00:00:00.000Z' }, now: later })
      .then(['MemoUpdated', 'MemoUnarchived']);
    given(...archived).when({ type: 'UpdateMemo', projectId, input: { expirationDate: null }, now: later }).then(['MemoUpdated', 'MemoUnarchived']);
  });
});
