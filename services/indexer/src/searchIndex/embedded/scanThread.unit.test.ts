import { afterEach, describe, expect, it } from 'vitest';
import { seededRandom } from '@memex/testing';
import { termFrequencies } from '@memex/text';
import { attrs } from '../../testing/memos';
import { CatalogMemory } from './catalog';
import { SCAN_THREAD_MIN_SLOTS } from './dense';
import { ModelMemory } from './model';
import { ScanThread } from './scanThread';

const DIM = 16;
const random = seededRandom(11);
/** A unit vector, as the embedders give. */
function randomVector(): Float32Array {
  const v = Float32Array.from({ length: DIM }, () => random() * 2 - 1);
  const norm = Math.hypot(...v);
  return v.map((x) => x / norm);
}

/** A model memory large enough for its scans to go to the thread: one chunk a memo, random vectors. */
function fill(thread: ScanThread | undefined, memos: number) {
  const catalog = new CatalogMemory();
  const memory = new ModelMemory(DIM, 1024, { scanThread: thread });
  const add = (m: number, vector: Float32Array) => {
    const memoId = `memo-${String(m).padStart(6, '0')}`;
    catalog.set({ memoId, projectId: 'p', version: 1, memo: attrs('p', memoId, { title: `t${m}` }) });
    memory.add({ chunkId: `c-${m}`, memoId, projectId: 'p', revision: 1, index: 0, content: `chunk ${m}` }, vector, termFrequencies(`chunk ${m}`));
  };
  for (let m = 0; m < memos; m++) add(m, randomVector());
  return { catalog, memory, add };
}

const ids = (hits: readonly { chunkId: string; score: number }[]) => hits.map((h) => [h.chunkId, Math.round(h.score * 1e5)]);

describe('ScanThread', () => {
  let thread: ScanThread | undefined;
  afterEach(async () => {
    await thread?.close();
    thread = undefined;
  });

  it('answers large scans as the scan in the caller\'s thread does, with chunks added and removed between and during searches', async () => {
    thread = new ScanThread();
    const { catalog, memory, add } = fill(thread, SCAN_THREAD_MIN_SLOTS + 500);
    const queries = Array.from({ length: 8 }, randomVector);
    for (const q of queries) {
      const eligible = catalog.eligible('p', []);
      expect(ids(await memory.searchDenseAsync(q, eligible, 20, catalog, 'p'))).toEqual(ids(memory.searchDense(q, eligible, 20, catalog, 'p')));
    }
    expect(thread.served).toBe(queries.length);

    // Chunks added since the last scan are scanned by the thread at once (it reads the same codes).
    const q = queries[0]!;
    add(SCAN_THREAD_MIN_SLOTS + 500, q);
    const found = await memory.searchDenseAsync(q, catalog.eligible('p', []), 5, catalog, 'p');
    expect(found[0]!.chunkId).toBe(`c-${SCAN_THREAD_MIN_SLOTS + 500}`);
    expect(thread.served).toBe(queries.length + 1);

    // A memo removed while its chunk is being scanned is not returned.
    const pending = memory.searchDenseAsync(q, catalog.eligible('p', []), 5, catalog, 'p');
    memory.removeMemo(`memo-${String(SCAN_THREAD_MIN_SLOTS + 500).padStart(6, '0')}`);
    const after = await pending;
    expect(after.map((h) => h.chunkId)).not.toContain(`c-${SCAN_THREAD_MIN_SLOTS + 500}`);
    expect(ids(after)).toEqual(ids(memory.searchDense(q, catalog.eligible('p', []), 5, catalog, 'p')));
  });

  it('runs a search again in the caller\'s thread when a compaction renumbers the slots during its scan', async () => {
    thread = new ScanThread();
    const memos = 2 * SCAN_THREAD_MIN_SLOTS;
    const { catalog, memory } = fill(thread, memos);
    const q = randomVector();
    const pending = memory.searchDenseAsync(q, catalog.eligible('p', []), 10, catalog, 'p');
    // Remove all but every fourth memo: more dead slots than live ones, so the memory compacts.
    for (let m = 0; m < memos; m++) if (m % 4 !== 0) memory.removeMemo(`memo-${String(m).padStart(6, '0')}`);
    const hits = await pending;
    expect(hits).toHaveLength(10);
    expect(hits.every((h) => Number(h.memoId.slice(5)) % 4 === 0)).toBe(true);
    expect(ids(hits)).toEqual(ids(memory.searchDense(q, catalog.eligible('p', []), 10, catalog, 'p')));
    // The next scan reads the compacted codes.
    const served = thread.served;
    const next = await memory.searchDenseAsync(q, catalog.eligible('p', []), 10, catalog, 'p');
    expect(memory.live).toBe(memos / 4);
    expect(ids(next)).toEqual(ids(hits));
    // (at 16,384 live slots, under the thread's threshold: the scan stays in this thread)
    expect(thread.served).toBe(served);
  });

  it('scans in the caller\'s thread once the scan thread has stopped, and says why', async () => {
    const reasons: string[] = [];
    thread = new ScanThread((reason) => reasons.push(reason));
    const { catalog, memory } = fill(thread, SCAN_THREAD_MIN_SLOTS);
    const q = randomVector();
    const eligible = catalog.eligible('p', []);
    const expected = ids(memory.searchDense(q, eligible, 10, catalog, 'p'));
    expect(ids(await memory.searchDenseAsync(q, eligible, 10, catalog, 'p'))).toEqual(expected);
    expect(thread.served).toBe(1);
    // A scan the thread refuses (here: slots that do not ascend) is made here instead, and the thread serves the next.
    const refused = await thread.scan({ codes: new Int8Array(DIM * 2), dimension: DIM, total: 2, query: new Int8Array(DIM), k: 1, slots: Uint32Array.from([1, 0]) }).catch((e: Error) => e.message);
    expect(refused).toMatch(/slots must ascend/);
    const scan = thread.scan.bind(thread);
    thread.scan = () => Promise.reject(new Error('refused'));
    expect(ids(await memory.searchDenseAsync(q, eligible, 10, catalog, 'p'))).toEqual(expected);
    thread.scan = scan;
    expect(ids(await memory.searchDenseAsync(q, eligible, 10, catalog, 'p'))).toEqual(expected);
    expect(thread.served).toBe(2);
    await thread.close();
    expect(thread.usable).toBe(false);
    expect(ids(await memory.searchDenseAsync(q, eligible, 10, catalog, 'p'))).toEqual(expected);
    expect(reasons).toEqual([]); // (closing is not a failure)
  });

  it('takes scans only while its gate is open, and tells the CPU it has used', async () => {
    const gate = { open: false };
    thread = new ScanThread(undefined, gate);
    const { catalog, memory } = fill(thread, SCAN_THREAD_MIN_SLOTS);
    const q = randomVector();
    const eligible = catalog.eligible('p', []);
    const expected = ids(memory.searchDense(q, eligible, 10, catalog, 'p'));
    expect(ids(await memory.searchDenseAsync(q, eligible, 10, catalog, 'p'))).toEqual(expected);
    expect(thread.served).toBe(0);
    gate.open = true;
    for (let i = 0; i < 20; i++) expect(ids(await memory.searchDenseAsync(q, eligible, 10, catalog, 'p'))).toEqual(expected);
    expect(thread.served).toBe(20);
    // (Linux tells a thread its CPU time; elsewhere the figure stays 0 and the gate judges by idle time alone)
    if (process.platform === 'linux') expect(thread.cpuMs).toBeGreaterThan(0);
  });
});
