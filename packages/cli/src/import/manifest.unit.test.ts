import { appendFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Manifest } from './manifest';
import { progressText } from './progress';
import { ndjsonItems } from './sources';

const fresh = () => join(mkdtempSync(join(tmpdir(), 'memex-manifest-')), 'in.ndjson.memex-import');

describe('the import manifest', () => {
  it('given batches sent and answered in part, a cut-short last line: resume sees what was created and what went unanswered', () => {
    const path = fresh();
    const m = Manifest.create(path, { run: 'r1', input: '/in.ndjson', project_id: null, started_at: '2026-12-01T00:00:00Z' });
    m.sending('k1', ['line:1', 'line:2']);
    m.created('line:1', 'u1');
    m.refused('line:2', 409, 'taken');
    m.sending('k2', ['line:3', 'line:4']);
    m.created('line:3', 'u3');
    m.sending('k3', ['line:5']);
    appendFileSync(path, '{"item":"line:5","memo_u');

    const { state } = Manifest.open(path);
    expect(state.head).toMatchObject({ run: 'r1', input: '/in.ndjson', project_id: null });
    expect([...state.created]).toEqual([['line:1', 'u1'], ['line:3', 'u3']]);
    expect(state.unsettled).toEqual([{ batch: 'k2', items: ['line:3', 'line:4'] }, { batch: 'k3', items: ['line:5'] }]);
  });

  it('given an item refused with a timeout: its batch goes again under its key, as does one whose key was reused; a 409 does not', () => {
    const path = fresh();
    const m = Manifest.create(path, { run: 'r1', input: '/in.ndjson', project_id: null, started_at: 'now' });
    m.sending('k1', ['line:1', 'line:2']);
    m.created('line:1', 'u1');
    m.refused('line:2', 504, 'The request timed out');
    m.sending('k2', ['line:3']);
    m.refused('line:3', 409, 'taken');
    m.sending('k3', ['line:4']);
    m.refused('line:4', 422, 'Idempotency-Key was already used with a different request body');
    expect(Manifest.open(path).state.unsettled).toEqual([{ batch: 'k1', items: ['line:1', 'line:2'] }, { batch: 'k3', items: ['line:4'] }]);
  });

  it('refuses to start over an existing manifest, and to open a file that is not one', () => {
    const path = fresh();
    Manifest.create(path, { run: 'r', input: '/x', project_id: 'p', started_at: 'now' });
    expect(() => Manifest.create(path, { run: 'r2', input: '/x', project_id: 'p', started_at: 'now' })).toThrow(/EEXIST/);
    const other = fresh();
    appendFileSync(other, '{"title":"a memo, not a manifest","content":"c"}\n');
    expect(() => Manifest.open(other)).toThrow(/is not an import manifest/);
  });
});

describe('NDJSON items and progress text', () => {
  it('numbers lines from 1, skips blank ones, refuses what is not a JSON object', () => {
    const path = fresh();
    appendFileSync(path, '{"title":"a","content":"b"}\n\n{"title":\n[1]\n  {"title":"c","content":"d"}  \n');
    expect(ndjsonItems(path).map((i) => [i.item, i.kind])).toEqual([
      ['line:1', 'memo'],
      ['line:3', 'invalid'],
      ['line:4', 'invalid'],
      ['line:5', 'memo'],
    ]);
  });

  it('shows done/total, the rate of this run and the time left', () => {
    expect(progressText({ phase: 'import', done: 600, total: 1000, doneThisRun: 500, startedAt: 0 }, 2_000)).toBe('imported 600/1000  250 memos/s  ETA 2 s');
    expect(progressText({ phase: 'wait', done: 0, total: 10, doneThisRun: 0, startedAt: 0 }, 1_000)).toBe('processed 0/10  0 memos/s  ETA ?');
  });
});
