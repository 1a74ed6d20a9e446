import { readFileSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '../../test/support/paths';

export interface EvalCollection {
  name: string;
  docs: { id: string; title: string; text: string }[];
  queries: { id: string; text: string }[];
  /** query id → doc id → graded relevance (> 0 relevant). */
  qrels: Map<string, Map<string, number>>;
}

/** Loads a BEIR-style collection from ../shared/eval/<name>. */
export function loadCollection(name: string): EvalCollection {
  const dir = path.join(REPO_ROOT, '..', 'shared', 'eval', name);
  const jsonl = <T>(file: string) =>
    readFileSync(path.join(dir, file), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as T);
  const docs = jsonl<{ _id: string; title?: string; text: string }>('corpus.jsonl').map((d) => ({ id: d._id, title: d.title ?? '', text: d.text }));
  const queries = jsonl<{ _id: string; text: string }>('queries.jsonl').map((q) => ({ id: q._id, text: q.text }));
  const qrels = new Map<string, Map<string, number>>();
  for (const line of readFileSync(path.join(dir, 'qrels.tsv'), 'utf8').trim().split('\n').slice(1)) {
    const [q, d, s] = line.split('\t');
    const score = Number(s);
    if (!q || !d || !(score > 0)) continue;
    if (!qrels.has(q)) qrels.set(q, new Map());
    qrels.get(q)!.set(d, score);
  }
  return { name, docs, queries: queries.filter((q) => qrels.has(q.id)), qrels };
}

/** nDCG@k with linear gains (trec_eval's definition) over a ranked list of doc ids. */
export function ndcgAt(ranked: readonly string[], relevant: Map<string, number>, k = 10): number {
  let dcg = 0;
  ranked.slice(0, k).forEach((id, i) => {
    dcg += (relevant.get(id) ?? 0) / Math.log2(i + 2);
  });
  const ideal = [...relevant.values()].sort((a, b) => b - a).slice(0, k);
  const idcg = ideal.reduce((sum, g, i) => sum + g / Math.log2(i + 2), 0);
  return idcg === 0 ? 0 : dcg / idcg;
}

export function recallAt(ranked: readonly string[], relevant: Map<string, number>, k = 10): number {
  if (relevant.size === 0) return 0;
  return ranked.slice(0, k).filter((id) => relevant.has(id)).length / relevant.size;
}

/** Doc ranking from chunk hits: each doc at the rank of its best chunk. */
export function docRanking<T>(hits: readonly T[], docOf: (hit: T) => string | undefined): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const h of hits) {
    const d = docOf(h);
    if (d !== undefined && !seen.has(d)) {
      seen.add(d);
      out.push(d);
    }
  }
  return out;
}

export function mean(values: readonly number[]): number {
  return values.length === 0 ? 0 : values.reduce((a, b) => a + b, 0) / values.length;
}
