import { analyze } from '@memex/text';

/**
 * Title weighting on the fusion side: a candidate whose memo title holds the query's terms moves up.
 * relevance' = (relevance + weight · share of query terms in the title) / (1 + weight), so distance
 * (1 − relevance') stays in [0, 1] and weight 0 changes nothing. Ties keep the fused order.
 */
export function boostTitles<T extends { memoTitle: string; distance: number }>(hits: readonly T[], query: string, weight: number): T[] {
  if (weight <= 0 || hits.length === 0) return [...hits];
  const asked = new Set(analyze(query));
  if (asked.size === 0) return [...hits];
  const titles = new Map<string, number>();
  const share = (title: string) => {
    let value = titles.get(title);
    if (value === undefined) {
      const words = new Set(analyze(title));
      let hit = 0;
      for (const term of asked) if (words.has(term)) hit += 1;
      value = hit / asked.size;
      titles.set(title, value);
    }
    return value;
  };
  return hits
    .map((hit, i) => ({ hit, i, relevance: (1 - hit.distance + weight * share(hit.memoTitle)) / (1 + weight) }))
    .sort((a, b) => b.relevance - a.relevance || a.i - b.i)
    .map(({ hit, relevance }) => ({ ...hit, distance: 1 - relevance }));
}
