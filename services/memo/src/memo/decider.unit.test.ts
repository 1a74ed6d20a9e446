import { describe, expect, it } from 'vitest';
import { EMPTY_CHUNKS, packChunks, type ContentRef, type MemoEvent, type StoredCreateInput } from '@memex/contracts';
import { decide, evolve, fold, initialState, isPending, type MemoCommand, type MemoState } from './decider';

const memoId = '0190d7a4-0000-7000-8000-000000000001';
const projectId = '0190d7a4-0000-7000-8000-0000000000aa';
const now = '2026-01-01T00:00:00.000Z';
const later = '2026-01-02T00:00:00.000Z';

/** A content reference; `digest` stands for the (keyed) digest of the text. */
const ref = (text: string, name = `blob-${text}`): ContentRef => ({ blob: { name, bytes: text.length + 29, sha256: '0'.repeat(64) }, length: text.length, digest: `d-${text}` });

const input: StoredCreateInput = {
  title: 'Plan',
  content: ref('Do things.'),
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

const created = (over: Partial<StoredCreateInput> = {}): MemoEvent[] =>
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


  it('refuses to create twice', () => {
    given(...created()).when({ type: 'CreateMemo', memoId, projectId, input, now }).thenFails('InvalidRequest');
  });

  it('PATCH without content emits only the changed fields', () => {
    const events = given(...created())
      .when({ type: 'UpdateMemo', projectId, input: { title: 'Plan', source: 'web' }, now: later })
      .thenEvents();
    expect(events).toEqual([{ type: 'MemoUpdated', data: { memoId, projectId, changes: { source: 'web' }, updatedAt: later } }]);
  });

  it('PATCH with the same values changes nothing (equal content: equal digest, whatever blob holds it)', () => {
    given(...created()).when({ type: 'UpdateMemo', projectId, input: { title: 'Plan', content: ref('Do things.', 'another-blob') }, now }).then([]);
  });

  it('PATCH with content starts a new revision and clears summary, tags and chunks', () => {
    const history = [
      ...created(),
      { type: 'MemoChunked', data: { memoId, projectId, revision: 1, model: 'm', chunks: packChunks([{ start: 0, end: 2 }]), firstChunk: 'Do', at: now } },
      { type: 'MemoSummarized', data: { memoId, projectId, revision: 1, summary: 'S', at: now } },
      { type: 'MemoTagged', data: { memoId, projectId, revision: 1, tags: [{ uuid: 't', tag: 'auto' }], at: now } },
    ] satisfies MemoEvent[];
    const { state } = given(...history);
    expect(state.status === 'active' && isPending(state.memo)).toBe(false);
    expect(state.status === 'active' && state.memo.tags.map((t) => t.tag)).toEqual(['given', 'auto']);

    const change = decide({ type: 'UpdateMemo', projectId, input: { content: ref('New.') }, now: later }, state);
    expect(change.map((e) => e.type)).toEqual(['MemoContentChanged']);
    const after = change.reduce(evolve, state);
    expect(after.status === 'active' && after.memo).toMatchObject({ revision: 2, summary: '', tags: [], chunks: EMPTY_CHUNKS, firstChunk: '', clientTags: [] });
    expect(after.status === 'active' && isPending(after.memo)).toBe(true);
  });

  it('drops processing results of an older revision or another project', () => {
    const history = [...created(), { type: 'MemoContentChanged', data: { memoId, projectId, revision: 2, content: ref('B'), updatedAt: now } }] satisfies MemoEvent[];
    given(...history).when({ type: 'RecordSummary', projectId, revision: 1, summary: 'old', tags: [], now }).then([]);
    given(...history).when({ type: 'RecordChunks', projectId: 'other', revision: 2, model: 'm', chunks: EMPTY_CHUNKS, firstChunk: '', now }).then([]);
    given(...history).when({ type: 'RecordChunks', projectId, revision: 2, model: 'm', chunks: EMPTY_CHUNKS, firstChunk: '', now }).then(['MemoChunked']);
  });

  it('keeps the first chunk\'s text in MemoChunked only for content in a blob: inline content holds it already', () => {
    const chunks = packChunks([{ start: 0, end: 2 }]);
    const command = { type: 'RecordChunks', projectId, revision: 1, model: 'm', chunks, firstChunk: 'Do', now } as const;
    const inBlob = given(...created()).when(command).thenEvents();
    expect(inBlob).toMatchObject([{ type: 'MemoChunked', data: { firstChunk: 'Do' } }]);
    const inline = created({ content: { inline: 'c2VhbGVk', length: 10, digest: 'd' } });
    expect(given(...inline).when(command).thenEvents()).toMatchObject([{ type: 'MemoChunked', data: { firstChunk: '', chunks } }]);
  });

  it('records a summary and its tags in one event; apart, as older versions wrote them, to the same state', () => {
    const command = { type: 'RecordSummary' as const, projectId, revision: 1, summary: 'S', tags: ['auto', 'given', 'auto'], now };
    const one = given(...created()).when(command).thenEvents();
    expect(one).toEqual([
      { type: 'MemoSummarized', data: { memoId, projectId, revision: 1, summary: 'S', tags: [{ uuid: expect.any(String), tag: 'auto' }, { uuid: expect.any(String), tag: 'given' }], at: now } },
    ]);
    const apart = given(...created()).when({ ...command, tagsApart: true }).thenEvents();
    expect(apart.map((e) => e.type)).toEqual(['MemoSummarized', 'MemoTagged']);
    expect(apart[0]!.data).not.toHaveProperty('tags');

    const fromOne = fold([...created(), ...one]);
    const fromApart = fold([...created(), ...apart]);
    expect(fromOne).toEqual(fromApart);
    // the client's tag first, the found ones it did not give after it
    expect(fromOne.status === 'active' && fromOne.memo).toMatchObject({ summary: 'S', summarizedRevision: 1 });
    expect(fromOne.status === 'active' && fromOne.memo.tags.map((t) => t.tag)).toEqual(['given', 'auto']);
  });

  it('records each revision\'s results once', () => {
    const history = [...created(), { type: 'MemoSummarized', data: { memoId, projectId, revision: 1, summary: 'S', at: now } }] satisfies MemoEvent[];
    given(...history).when({ type: 'RecordSummary', projectId, revision: 1, summary: 'S2', tags: [], now }).then([]);
  });

  it('records the source of a summary and the reason a model\'s was not used; a content change clears them', () => {
    const [fallback] = given(...created())
      .when({ type: 'RecordSummary', projectId, revision: 1, summary: 'S', tags: [], source: 'extractive-fallback', reason: 'timeout: no reply', now })
      .thenEvents();
    expect(fallback).toMatchObject({ type: 'MemoSummarized', data: { source: 'extractive-fallback', reason: 'timeout: no reply' } });
    const summarized = [...created(), fallback!];
    const state = fold(summarized);
    expect(state.status === 'active' && state.memo).toMatchObject({ summarySource: 'extractive-fallback', summaryReason: 'timeout: no reply' });
    expect(state.status === 'active' && isPending(state.memo)).toBe(true); // chunks still to come

    const changed = fold([...summarized, { type: 'MemoContentChanged', data: { memoId, projectId, revision: 2, content: ref('New.'), updatedAt: later } }]);
    expect(changed.status === 'active' && changed.memo).toMatchObject({ summarySource: null, summaryReason: null });
  });

  it('a summary without a source (as older agents record it) leaves the source unknown', () => {
    const state = fold([...created(), { type: 'MemoSummarized', data: { memoId, projectId, revision: 1, summary: 'S', at: now } }]);
    expect(state.status === 'active' && state.memo).toMatchObject({ summary: 'S', summarySource: null, summaryReason: null });
  });

  it('a re-run through the model replaces a revision\'s summary, and only with replace', () => {
    const history = [
      ...created(),
      { type: 'MemoSummarized', data: { memoId, projectId, revision: 1, summary: 'S', source: 'extractive-fallback', reason: 'server_error: 500', at: now } },
    ] satisfies MemoEvent[];
    const rerun = { type: 'RecordSummary' as const, projectId, revision: 1, summary: 'Better.', tags: ['x'], source: 'model' as const, now: later };
    given(...history).when(rerun).then([]);
    const [replaced] = given(...history).when({ ...rerun, replace: true }).thenEvents();
    const state = fold([...history, replaced!]);
    expect(state.status === 'active' && state.memo).toMatchObject({ summary: 'Better.', summarySource: 'model', summaryReason: null });
    // an older revision is never replaced
    given(...history, { type: 'MemoContentChanged', data: { memoId, projectId, revision: 2, content: ref('New.'), updatedAt: later } })
      .when({ ...rerun, replace: true })
      .then([]);
  });

  it('records a processing failure until the stage succeeds, which clears it', () => {
    const failed = given(...created())
      .when({ type: 'RecordProcessingFailure', projectId, revision: 1, stage: 'indexing', message: 'boom', now })
      .thenEvents();
    let state: MemoState = fold([...created(), ...failed]);
    expect(state.status === 'active' && state.memo.processingError?.message).toBe('boom');
    state = evolve(state, { type: 'MemoChunked', data: { memoId, projectId, revision: 1, model: 'm', chunks: EMPTY_CHUNKS, firstChunk: '', at: now } });
    expect(state.status === 'active' && state.memo.processingError).toBeNull();
  });

  it('DELETE needs a live memo in the caller\'s project', () => {
    given(...created()).when({ type: 'DeleteMemo', projectId: 'other', reason: 'deleted', now }).thenFails('ResourceNotInProject');
    given().when({ type: 'DeleteMemo', projectId, reason: 'deleted', now }).thenFails('MemoNotFound');
    const deleted = [...created(), { type: 'MemoDeleted', data: { memoId, projectId, at: now } }] satisfies MemoEvent[];
    given(...deleted).when({ type: 'DeleteMemo', projectId, reason: 'deleted', now }).thenFails('MemoNotFound');
    given(...deleted).when({ type: 'UpdateMemo', projectId, input: { title: 'x' }, now }).thenFails('MemoNotFound');
  });

  it('erases for expiry only once the expiration date has passed, with the reason in the tombstone', () => {
    const expiring = created({ expirationDate: '2026-01-01T12:00:00.000Z' });
    given(...expiring).when({ type: 'DeleteMemo', projectId, reason: 'expired', now }).then([]);
    const [tombstone] = given(...expiring).when({ type: 'DeleteMemo', projectId, reason: 'expired', now: later }).thenEvents();
    expect(tombstone).toEqual({ type: 'MemoDeleted', data: { memoId, projectId, at: later, reason: 'expired' } });
    given(...created()).when({ type: 'DeleteMemo', projectId, reason: 'expired', now: later }).then([]);
  });
});
