/**
 * Retrieval quality: nDCG@10 and Recall@10 on ../shared/eval/{cranfield,vaswani}, with every document
 * stored as a memo and every query sent through the real API (`chunk_vector_search` over HTTPS on the
 * stack as `pnpm start` runs it). Beside it, from the same running indexer: BM25 alone, dense alone,
 * and two other fusions of those same candidate lists (min-max 0.7/0.3, reciprocal rank).
 * A document ranks at its best chunk. Vaswani's documents have no titles; like an import that names
 * memos by their first line, they are titled with their first words.
 *
 *   tsx bench/quality.bench.ts [--collections cranfield,vaswani]
 */
import { parseArgs } from 'node:util';
import { Subjects, type IndexSearchReply, type IndexSearchRequest, type Memo, type SearchResultItem } from '@memex/contracts';
import { connectNats, query } from '@memex/runtime';
import { STOPWORDS, analyze, fuseScores, reciprocalRankFusion, tokenize, truncateAtWord } from '@memex/text';
import { httpsJson } from '../test/support/https';
import { runTs } from '../test/support/processes';
import { startProcessStack } from '../test/support/processStack';
import { docRanking, loadCollection, mean, ndcgAt, recallAt } from './support/eval';
import { pool, printTable } from './support/stats';

const { values } = parseArgs({ options: { collections: { type: 'string', default: 'cranfield,vaswani' } } });
const CANDIDATES = 100;
const PRF_DOCS = Number(process.env.PRF_DOCS ?? 3);
const PRF_TERMS = Number(process.env.PRF_TERMS ?? 8);
const TITLE_BOOSTS = (process.env.TITLE_BOOSTS ?? '0.05,0.15').split(',').map(Number);

/** Words (not stopwords, not already asked) found in most of the feedback passages, then most often. */
function feedbackTerms(queryText: string, passages: string[]): string[] {
  const asked = new Set(analyze(queryText));
  const docs = new Map<string, number>();
  const total = new Map<string, number>();
  for (const passage of passages) {
    const words = tokenize(passage).filter((w) => w.length > 2 && !STOPWORDS.has(w) && !/^\d+$/.test(w) && !asked.has(analyze(w)[0] ?? w));
    for (const w of new Set(words)) docs.set(w, (docs.get(w) ?? 0) + 1);
    for (const w of words) total.set(w, (total.get(w) ?? 0) + 1);
  }
  return [...docs.keys()]
    .filter((w) => docs.get(w)! >= Math.min(2, passages.length))
    .sort((a, b) => docs.get(b)! - docs.get(a)! || total.get(b)! - total.get(a)! || a.localeCompare(b))
    .slice(0, PRF_TERMS);
}

const stack = await startProcessStack({ MEMEX_RATE_LIMIT: '0' });
const nc = await connectNats({ url: stack.natsUrl, name: 'quality-bench' });
try {
  for (const name of values.collections.split(',')) {
    const collection = loadCollection(name);
    const project = await runTs('packages/cli/src/main.ts', ['project', 'create', '--name', name, '--json'], stack.env);
    const { api_key: key, project_id: projectId } = JSON.parse(project.stdout.trim()) as { api_key: string; project_id: string };
    const call = <T>(method: string, url: string, body?: unknown) =>
      httpsJson<T>(method, `${stack.base}${url}`, { key, agent: stack.agent, ...(body === undefined ? {} : { body }) });

    const started = Date.now();
    const docs = collection.docs.filter((d) => (d.text.trim() || d.title.trim()) !== '');
    const docOfMemo = new Map<string, string>();
    const ids = await pool(
      docs.map((d) => async () => {
        const res = await call<{ memo_uuid: string }>('POST', '/api/v1/memo', {
          title: d.title || truncateAtWord(d.text.trim(), 60),
          content: d.text.trim() || d.title,
          reference_id: d.id,
        });
        if (res.status !== 200) throw new Error(`POST ${d.id}: ${res.status} ${res.text}`);
        docOfMemo.set(res.body.memo_uuid, d.id);
        return res.body.memo_uuid;
      }),
      32,
    );
    for (const id of ids) {
      for (;;) {
        const res = await call<Memo>('GET', `/api/v1/memo/${id}`);
        if (res.status === 200 && !res.body.pending) break;
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    const ingestSeconds = (Date.now() - started) / 1000;

    const runs = new Map<string, { ndcg: number[]; recall: number[] }>();
    const add = (run: string, ranked: string[], relevant: Map<string, number>) => {
      if (!runs.has(run)) runs.set(run, { ndcg: [], recall: [] });
      runs.get(run)!.ndcg.push(ndcgAt(ranked, relevant));
      runs.get(run)!.recall.push(recallAt(ranked, relevant));
    };
    const searchStarted = Date.now();
    for (const q of collection.queries) {
      const relevant = collection.qrels.get(q.id)!;
      const api = await call<{ results: SearchResultItem[] }>('POST', '/api/v1/search', { query: q.text, search_method: 'chunk_vector_search', limit: 50 });
      if (api.status !== 200) throw new Error(`search: ${api.status} ${api.text}`);
      add('fused (the API default)', docRanking(api.body.results, (h) => docOfMemo.get(h.memo_uuid)), relevant);
      // Title weighting, fusion side: a candidate whose memo title holds the query's terms moves up.
      const asked = new Set(analyze(q.text));
      for (const beta of TITLE_BOOSTS) {
        const boosted = api.body.results
          .map((h) => {
            const title = new Set(analyze(h.memo_title));
            const shared = asked.size === 0 ? 0 : [...asked].filter((t) => title.has(t)).length / asked.size;
            return { h, score: 1 - (h.distance ?? 1) + beta * shared };
          })
          .sort((a, b) => b.score - a.score)
          .map((x) => x.h);
        add(`fused + title boost ${beta} (experiment)`, docRanking(boosted, (h) => docOfMemo.get(h.memo_uuid)), relevant);
      }

      const one = (ranking: 'lexical' | 'dense') =>
        query<IndexSearchRequest, IndexSearchReply>(nc, Subjects.query.indexSearch, { projectId, query: q.text, filters: [], limit: CANDIDATES, ranking });
      const [lexical, dense] = await Promise.all([one('lexical'), one('dense')]);
      add('BM25 alone', docRanking(lexical.hits, (h) => docOfMemo.get(h.memoId)), relevant);
      add('dense alone', docRanking(dense.hits, (h) => docOfMemo.get(h.memoId)), relevant);
      const lists = [lexical, dense].map((r) => r.hits.map((h) => ({ id: h.chunkId, score: 1 - h.distance })));
      const memoOfChunk = new Map([...lexical.hits, ...dense.hits].map((h) => [h.chunkId, h.memoId]));
      const byChunk = (items: { id: string }[]) => docRanking(items, (i) => docOfMemo.get(memoOfChunk.get(i.id)!));
      add('min-max 0.7/0.3 (alternative)', byChunk(fuseScores(lists, [0.7, 0.3])), relevant);
      add('reciprocal rank, k 60 (alternative)', byChunk(reciprocalRankFusion(lists.map((l) => l.map((i) => ({ id: i.id }))), 60)), relevant);
      // Pseudo-relevance feedback, query side only: the query plus the words its top BM25 passages share.
      const expanded = `${q.text} ${feedbackTerms(q.text, lexical.hits.slice(0, PRF_DOCS).map((h) => h.content)).join(' ')}`;
      const prf = (ranking: 'lexical' | 'hybrid') =>
        query<IndexSearchRequest, IndexSearchReply>(nc, Subjects.query.indexSearch, { projectId, query: expanded, filters: [], limit: CANDIDATES, ranking });
      const [prfLexical, prfFused] = await Promise.all([prf('lexical'), prf('hybrid')]);
      add(`BM25 + PRF, ${PRF_DOCS} docs ${PRF_TERMS} terms (experiment)`, docRanking(prfLexical.hits, (h) => docOfMemo.get(h.memoId)), relevant);
      add(`fused + PRF, ${PRF_DOCS} docs ${PRF_TERMS} terms (experiment)`, docRanking(prfFused.hits, (h) => docOfMemo.get(h.memoId)), relevant);
    }
    const searchSeconds = (Date.now() - searchStarted) / 1000;
    printTable(
      `${name}: ${docs.length} documents, ${collection.queries.length} queries (ingested in ${ingestSeconds.toFixed(1)} s; searches ${searchSeconds.toFixed(1)} s)`,
      [...runs].map(([run, r]) => [run, `nDCG@10 ${mean(r.ndcg).toFixed(3)}   Recall@10 ${mean(r.recall).toFixed(3)}`]),
    );
  }
} finally {
  await nc.close();
  await stack.stop();
}
