import { describe, expect, it } from 'vitest';
import { packChunks, type ContentRef, type MemoEvent, type MemoFile, type StoredCreateInput } from '@memex/contracts';
import { statusOf } from './catalog';
import { awaitsExtraction, decide, fold, initialState, isPending, type MemoCommand, type MemoData } from './decider';

const memoId = '0190d7a4-0000-7000-8000-000000000001';
const projectId = '0190d7a4-0000-7000-8000-0000000000aa';
const t0 = '2026-01-01T00:00:00.000Z';
const t1 = '2026-01-01T00:00:05.000Z';
const t2 = '2026-01-01T00:00:09.000Z';

/** A content reference whose digest stands for the text (the real one is an HMAC under the memo key). */
const ref = (text: string): ContentRef => ({
  blob: { name: `content/${projectId}/${memoId}/${text.length}`, bytes: text.length + 29, sha256: '00'.repeat(32) },
  length: text.length,
  digest: Buffer.from(text).toString('hex').padEnd(64, '0').slice(0, 64),
});

const input: StoredCreateInput = {
  title: 'report.pdf',
  content: ref(''),
  metadata: { original_filename: 'report.pdf' },
  referenceId: null,
  tags: ['given'],
  source: null,
  type: 'document',
  expirationDate: null,
};
const file: MemoFile = {
  blob: { name: `files/${projectId}/${memoId}/a`, bytes: 120, sha256: 'ab'.repeat(32) },
  filename: 'report.pdf',
  mimetype: 'application/pdf',
  format: 'pdf',
  size: 100,
  sha256: 'cd'.repeat(32),
};

function run(commands: MemoCommand[]): MemoEvent[] {
  const events: MemoEvent[] = [];
  for (const command of commands) events.push(...decide(command, fold(events, initialState())));
  return events;
}
const memoOf = (events: MemoEvent[]): MemoData => {
  const state = fold(events);
  if (state.status !== 'active') throw new Error('not active');
  return state.memo;
};

const upload: MemoCommand = { type: 'CreateMemo', memoId, projectId, input: { ...input, file }, now: t0 };
const extraction = (content: string, now = t1, blob = file.blob.name): MemoCommand => ({ type: 'RecordExtraction', projectId, blob, content: ref(content), now });

describe('uploads in the memo decider', () => {
  it('an upload is created empty, waiting for extraction, and pending', () => {
    const events = run([upload]);
    expect(events.map((e) => e.type)).toEqual(['MemoCreated']);
    const memo = memoOf(events);
    expect(awaitsExtraction(memo)).toBe(true);
    expect(isPending(memo)).toBe(true);
    expect(statusOf(memo)).toEqual({ memo_uuid: memoId, status: 'processing', processing_started_at: t0, processing_completed_at: null, error_reason: null, summary_source: null, summary_reason: null });
  });

  it('the extracted text becomes content revision 2, from the extractor, keeping the uploader tags', () => {
    const events = run([upload, extraction('# Report\n\nText.')]);
    expect(events[1]).toEqual({
      type: 'MemoContentChanged',
      data: { memoId, projectId, revision: 2, content: ref('# Report\n\nText.'), updatedAt: t1, origin: 'extraction' },
    });
    const memo = memoOf(events);
    expect(memo.tags.map((t) => t.tag)).toEqual(['given']);
    expect(memo.processingStartedAt).toBe(t0);
  });

  it('processing completes when chunks and summary exist for the extracted revision', () => {
    const events = run([
      upload,
      extraction('Text.'),
      { type: 'RecordChunks', projectId, revision: 2, model: 'm', chunks: packChunks([{ start: 0, end: 5 }]), firstChunk: 'Text.', now: t1 },
      { type: 'RecordSummary', projectId, revision: 2, summary: 'S', tags: ['auto'], now: t2 },
    ]);
    const memo = memoOf(events);
    expect(memo.tags.map((t) => t.tag)).toEqual(['given', 'auto']);
    expect(statusOf(memo)).toMatchObject({ status: 'processed', processing_started_at: t0, processing_completed_at: t2 });
  });

  it('a repeated or unchanged extraction, or one for another file, changes nothing; a changed one (better parser) adds a revision', () => {
    const once = run([upload, extraction('Text.')]);
    expect(decide(extraction('Text.'), fold(once))).toEqual([]);
    expect(decide(extraction('Other.', t2, 'files/x/y/z'), fold(once))).toEqual([]);
    expect(decide(extraction('Better text.', t2), fold(once)).map((e) => e.type)).toEqual(['MemoContentChanged']);
  });

  it("a client's content PATCH wins over a late extraction", () => {
    const events = run([upload, { type: 'UpdateMemo', projectId, input: { content: ref('Typed by hand.') }, now: t1 }]);
    expect(decide(extraction('From the file.', t2), fold(events))).toEqual([]);
  });

  it('an extraction failure shows as status error with its reason, and only while the file is unextracted', () => {
    const failure: MemoCommand = { type: 'RecordProcessingFailure', projectId, revision: 1, stage: 'extracting', message: 'the PDF has no text layer', now: t1 };
    const failed = run([upload, failure]);
    expect(statusOf(memoOf(failed))).toEqual({
      memo_uuid: memoId,
      status: 'error',
      processing_started_at: t0,
      processing_completed_at: t1,
      error_reason: 'extracting: the PDF has no text layer',
      summary_source: null,
      summary_reason: null,
    });
    expect(decide(failure, fold(run([upload, extraction('Text.')])))).toEqual([]);
  });

  it('deleting an upload names its file, so the extractor can delete it', () => {
    const events = run([upload, { type: 'DeleteMemo', projectId, reason: 'deleted', now: t1 }]);
    expect(events[1]).toEqual({ type: 'MemoDeleted', data: { memoId, projectId, at: t1, reason: 'deleted', file: file.blob.name } });
  });

  it('a memo created from JSON is not an upload', () => {
    const memo = memoOf(run([{ type: 'CreateMemo', memoId, projectId, input: { ...input, content: ref('x') }, now: t0 }]));
    expect(memo.file).toBeNull();
    expect(awaitsExtraction(memo)).toBe(false);
  });
});
