import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { chunkId, openSqlite } from '@memex/runtime';
import { seededRandom, tempDir } from '@memex/testing';
import { termFrequencies } from '@memex/text';
import { attrs } from '../../testing/memos';
import { EmbeddedSearchIndex, type EmbeddedIndexOptions, type GraphLoadEvent } from './sqliteIndex';

const DIM = 16;
const MODEL = 'm';
const MEMOS = 60;
const PER_MEMO = 10;
// A graph from 200 chunks on, so these 600 get one; its searches wide enough to find what an exact
// scan finds, yet returning only part of the graph (308 of 600 neighbours), so that a graph that
// missed a change would show in the results.
const dense = { annMinChunks: 200, connectivity: 16, expansionSearch: 400, graphCandidates: 256 };

const random = seededRandom(3);
const gaussian = () => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
const centres = Array.from({ length: 12 }, () => Float32Array.from({ length: DIM }, gaussian));
function near(centre: Float32Array, spread = 0.5): Float32Array {
  const v = Float32Array.from(centre, (c) => c + spread * gaussian());
  const norm = Math.hypot(...v);
  return v.map((x) => x / norm);
}
const queries = Array.from({ length: 24 }, (_, i) => near(centres[i % centres.length]!, 0.3));

describe('embedded index: HNSW graphs saved beside the index', () => {
  let dir: ReturnType<typeof tempDir>;
  let path: string;
  let graphDir: string;
  let projectId: string;
  let memoIds: string[];
  let events: GraphLoadEvent[];
  const open: EmbeddedSearchIndex[] = [];

  async function start(options: EmbeddedIndexOptions = {}): Promise<EmbeddedSearchIndex> {
    const index = new EmbeddedSearchIndex(path, { dense, onGraph: (e) => events.push(e), ...options });
    await index.openModel(MODEL, DIM);
    open.push(index);
    return index;
  }

  async function putMemo(index: EmbeddedSearchIndex, memoId: string, revision: number, version: number, centre: Float32Array, spread = 0.5): Promise<void> {
    await index.applyCatalog({ memoId, projectId, version, memo: attrs(projectId, memoId, { revision }) });
    await index.putChunks(
      MODEL,
      { memoId, projectId, revision },
      Array.from({ length: PER_MEMO }, (_, i) => ({
        chunkId: chunkId(memoId, revision, i),
        index: i,
        content: `chunk ${i}`,
        dense: near(centre, spread),
        terms: termFrequencies(`chunk ${i}`),
      })),
    );
  }

  /** Top 10 of every query: chunk ids with their scores. */
  async function results(index: EmbeddedSearchIndex): Promise<[string, number][][]> {
    const out: [string, number][][] = [];
    for (const q of queries) {
      out.push((await index.searchDense(MODEL, q, { projectId, filters: [], limit: 10 })).map((h) => [h.chunkId, h.score]));
    }
    return out;
  }

  /** The same queries answered by an exact scan over the same file (no graph). */
  async function exact(): Promise<[string, number][][]> {
    return results(await start({ dense: { annMinChunks: Number.POSITIVE_INFINITY }, graphDir: false }));
  }

  const usesGraph = (index: EmbeddedSearchIndex) => index.modelMemory(MODEL)!.memory.hasGraph(projectId);
  const lastEvent = () => events.at(-1);
  const graphFile = () => join(graphDir, readdirSync(graphDir).find((f) => f.endsWith('.usearch'))!);

  beforeEach(async () => {
    dir = tempDir('memex-graphs-');
    path = join(dir.path, 'index.db');
    graphDir = join(dir.path, 'index.graphs');
    projectId = randomUUID();
    memoIds = Array.from({ length: MEMOS }, () => randomUUID());
    events = [];
    const first = await start();
    for (const [m, memoId] of memoIds.entries()) await putMemo(first, memoId, 1, 1, centres[m % centres.length]!);
    await first.graphsBuilt();
    expect(usesGraph(first)).toBe(true);
    expect(lastEvent()).toMatchObject({ outcome: 'built', reason: 'built in the background as the project grew' });
    await first.close(); // saves the graph
    const kinds = readdirSync(graphDir).map((f) => f.slice(f.lastIndexOf('.')));
    expect(kinds.sort()).toEqual(['.json', '.keys', '.usearch']);
  });

  afterEach(async () => {
    for (const index of open.splice(0)) await index.close();
    dir.remove();
  });

  it('loads the saved graph at a restart and answers as before', async () => {
    const before = await results(await start({ graphDir: false })); // rebuilt, not saved
    expect(lastEvent()).toMatchObject({ outcome: 'built', reason: 'graphs are not saved' });
    const restarted = await start();
    expect(lastEvent()).toMatchObject({ outcome: 'loaded', projectId, chunks: MEMOS * PER_MEMO });
    expect(usesGraph(restarted)).toBe(true);
    const after = await results(restarted);
    expect(after).toEqual(before);
    expect(after).toEqual(await exact());
  });

  it('brings a saved graph up to date with the changes made after it was saved', async () => {
    // Another process (which saves no graph) writes, then stops: the saved graph is behind.
    const writer = await start({ graphDir: false });
    await writer.applyCatalog({ memoId: memoIds[0]!, projectId, version: 2, memo: null });
    await putMemo(writer, memoIds[1]!, 2, 2, queries[5]!, 0.02); // a new revision, moved right next to a query
    // The same revision indexed again with other vectors (same chunk ids): only the change log tells.
    await putMemo(writer, memoIds[2]!, 1, 1, queries[9]!, 0.02);
    const added = randomUUID();
    await putMemo(writer, added, 1, 1, queries[7]!, 0.02);
    await writer.close();

    const restarted = await start();
    expect(lastEvent()).toMatchObject({ outcome: 'loaded', chunks: MEMOS * PER_MEMO });
    const after = await results(restarted);
    expect(after).toEqual(await exact());
    const memosFound = (await Promise.all(queries.map((q) => restarted.searchDense(MODEL, q, { projectId, filters: [], limit: 10 })))).map((hits) => hits.map((h) => h.memoId));
    expect(memosFound.flat()).not.toContain(memoIds[0]);
    expect(memosFound[5]).toContain(memoIds[1]);
    expect(memosFound[7]).toContain(added);
    expect(memosFound[9]).toContain(memoIds[2]);
  });

  it('rebuilds instead of loading a damaged graph file, and saves a good one again', async () => {
    const expected = await exact();
    const file = graphFile();
    const bytes = readFileSync(file);
    for (let i = bytes.length >> 1; i < (bytes.length >> 1) + 64; i++) bytes[i] = bytes[i]! ^ 0xff;
    writeFileSync(file, bytes);
    const afterFlip = await start();
    expect(lastEvent()).toMatchObject({ outcome: 'built', reason: expect.stringMatching(/checksum/) });
    expect(await results(afterFlip)).toEqual(expected);
    // The rebuilt graph was saved at once: the next start loads it.
    await start();
    expect(lastEvent()).toMatchObject({ outcome: 'loaded' });

    truncateSync(graphFile(), 1000);
    const afterCut = await start();
    expect(lastEvent()).toMatchObject({ outcome: 'built', reason: expect.stringMatching(/bytes/) });
    expect(await results(afterCut)).toEqual(expected);
  });

  it('rebuilds when the saved graph is stale: changes it cannot replay, too many changes, other settings', async () => {
    // The change log no longer reaches back to the save.
    const writer = await start({ graphDir: false });
    await putMemo(writer, randomUUID(), 1, 1, centres[0]!);
    await putMemo(writer, randomUUID(), 1, 1, centres[1]!);
    const db = openSqlite(path);
    db.prepare('DELETE FROM changes WHERE seq < (SELECT MAX(seq) FROM changes)').run();
    db.close();
    const afterPrune = await start();
    expect(lastEvent()).toMatchObject({ outcome: 'built', reason: 'the change log no longer reaches back to it' });
    expect(await results(afterPrune)).toEqual(await exact());

    // The rebuilt graph was saved; then another process removes a third of the memos.
    for (const memoId of memoIds.slice(0, 20)) await writer.applyCatalog({ memoId, projectId, version: 2, memo: null });
    const afterRemovals = await start();
    expect(lastEvent()).toMatchObject({ outcome: 'built', reason: 'saved graph did not fit the chunks', chunks: 40 * PER_MEMO + 20 });
    expect(await results(afterRemovals)).toEqual(await exact());

    // Other HNSW settings than the graph was built with.
    await start({ dense: { ...dense, connectivity: 8 } });
    expect(lastEvent()).toMatchObject({ outcome: 'built', reason: 'built with other settings' });

    // The model dropped: its graphs are gone with it.
    await afterRemovals.dropModel(MODEL);
    expect(readdirSync(graphDir)).toEqual([]);
  });
});
