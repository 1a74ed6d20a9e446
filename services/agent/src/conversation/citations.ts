import type { Citation } from '@memex/contracts';
import type { Passage } from '../llm/port';

/**
 * The sources an answer cites: every [n] (also [n, m] and [n][m]) that names a passage, once each,
 * in number order. Markers naming no passage are ignored.
 */
export function citationsFrom(text: string, passages: readonly Passage[]): Citation[] {
  const byNumber = new Map(passages.map((p) => [p.n, p]));
  const cited = new Set<number>();
  for (const group of text.matchAll(/\[(\d+(?:\s*,\s*\d+)*)\]/g)) {
    for (const n of group[1]!.split(',').map((s) => Number(s.trim()))) if (byNumber.has(n)) cited.add(n);
  }
  return [...cited]
    .sort((a, b) => a - b)
    .map((n) => {
      const p = byNumber.get(n)!;
      return { index: n, memo_uuid: p.memoId, memo_title: p.memoTitle, chunk_uuid: p.chunkId };
    });
}
