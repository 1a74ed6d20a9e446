/**
 * Retrieval quality of the indexer's search alone, in one process (no stack): nDCG@10 and Recall@10
 * on ../shared/eval/{cranfield,vaswani}, each document a memo chunked, embedded and indexed as the
 * indexer does, queried through the same hybrid search the API uses (top 50 chunks, documents at
 * their best chunk). Lighter than `bench:quality` (which goes through HTTPS), so it suits comparing
 * index changes; `--ann-min` lowers the chunk count from which projects search an HNSW graph, to
 * measure that path on these small collections.
 *
 *   tsx bench/retrieval.bench.ts [--collections cranfield,vaswani] [--ann-min 20000]
 */
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { silentLogger } from '@memex/runtime';
import { tempDir } from '@memex/testing';
import { DEFAULT_CHUNK_OPTIONS, truncateAtWord } from '@memex/text';
import { loadEmbedder } from '../services/indexer/src/embedding/embedder';
import { chunkMemo, embedChunks } from '../services/indexer/src/processing/chunks';
import { hybridSearch } from '../services/indexer/src/search/hybrid';
import { EmbeddedSearchIndex } from '../services/indexer/src/searchIndex/embedded/sqliteIndex';
import { DEFAULT_DENSE_OPTIONS } from '../services/indexer/src/searchIndex/embedded/denseOptions';
import { ModelSet } from '../services/indexer/src/state/models';
import { REPO_ROOT } from '../test/support/paths';
import { docRanking, loadCollection, mean, ndcgAt, recallAt } from './support/eval';
import { printTable } from './support/stats';

const { values } = parseArgs({
  options: {
    collections: { type: 'string', default: 'cranfield,vaswani' },
    'ann-min': { type: 'string', default: String(DEFAULT_DENSE_OPTIONS.annMinChunks) },
  },
});
const MODEL = 'memex-glove-100d';
const dir = tempDir('memex-retrieval-bench-');
const index = new EmbeddedSearchIndex(path.join(dir.path, 'index.db'), { dense: { annMinChunks: Number(values['ann-min']) } });
const embedder = await loadEmbedder({ model: MODEL, modelsDir: path.join(REPO_ROOT, 'models'), allowRemote: false });
await index.openModel(MODEL, embedder.dimension);
const models = new ModelSet(async () => embedder, index, silentLogger());
await models.apply({ activeModel: MODEL });
const options = { lexicalWeight: 0.85, candidates: 100 };

for (const name of values.collections.split(',')) {
  const collection = loadCollection(name);
  const projectId = randomUUID();
  const docOfMemo = new Map<string, string>();
  let chunks = 0;
  for (const d of collection.docs) {
    const content = d.text.trim() || d.title;
    if (content.trim() === '') continue;
    const memoId = randomUUID();
    docOfMemo.set(memoId, d.id);
    const title = d.title || truncateAtWord(d.text.trim(), 60);
    await index.applyCatalog({
      memoId,
      projectId,
      version: 1,
      memo: { projectId, memoId, revision: 1, title, summary: '', source: null, clientReferenceId: null, memoType: 'text', tags: [], metadata: {}, archived: false, expirationDate: null },
    });
    const indexed = await embedChunks(embedder, title, await chunkMemo(memoId, 1, content, DEFAULT_CHUNK_OPTIONS));
    chunks += indexed.length;
    await index.putChunks(MODEL, { memoId, projectId, revision: 1 }, indexed);
  }
  await index.graphsBuilt(); // (a project past ann-min chunks gets its graph in the background)
  const runs = new Map<string, { ndcg: number[]; recall: number[] }>();
  for (const q of collection.queries) {
    const relevant = collection.qrels.get(q.id)!;
    for (const [run, ranking, limit] of [
      ['fused (the API default)', 'hybrid', 50],
      ['BM25 alone', 'lexical', 100],
      ['dense alone', 'dense', 100],
    ] as const) {
      const reply = await hybridSearch(index, models, { projectId, query: q.text, filters: [], limit, ranking }, options);
      const ranked = docRanking(reply.hits, (h) => docOfMemo.get(h.memoId));
      const r = runs.get(run) ?? { ndcg: [], recall: [] };
      r.ndcg.push(ndcgAt(ranked, relevant));
      r.recall.push(recallAt(ranked, relevant));
      runs.set(run, r);
    }
  }
  printTable(
    `${name}: ${docOfMemo.size} documents, ${chunks} chunks, ${collection.queries.length} queries (graph from ${values['ann-min']} chunks)`,
    [...runs].map(([run, r]) => [run, `nDCG@10 ${mean(r.ndcg).toFixed(4)}   Recall@10 ${mean(r.recall).toFixed(4)}`]),
  );
}
await embedder.dispose();
await index.close();
dir.remove();
