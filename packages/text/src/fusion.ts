/** An item of a ranked list; higher scores are better. */
export interface ScoredItem<Id extends string | number = string> {
  id: Id;
  score: number;
}

/**
 * Rescales scores linearly onto [0, 1] (minimum → 0, maximum → 1). When all finite scores are
 * equal they all map to 1: every item of a list deserves credit for being in it. Non-finite
 * scores map to 0.
 */
export function minMaxNormalize(scores: readonly number[]): number[] {
  let min = Infinity;
  let max = -Infinity;
  for (const s of scores) {
    if (!Number.isFinite(s)) continue;
    if (s < min) min = s;
    if (s > max) max = s;
  }
  const range = max - min;
  return scores.map((s) => {
    if (!Number.isFinite(s)) return 0;
    return range > 0 ? (s - min) / range : 1;
  });
}

function compareIds(a: string | number, b: string | number): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  const x = String(a);
  const y = String(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** Descending by score, then ascending by id, so equal scores always come out the same way. */
function ranked<Id extends string | number>(totals: Map<Id, number>): ScoredItem<Id>[] {
  return [...totals]
    .map(([id, score]) => ({ id, score }))
    .sort((a, b) => b.score - a.score || compareIds(a.id, b.id));
}

function checkWeights(lists: readonly unknown[], weights: readonly number[] | undefined): number[] {
  if (weights === undefined) return lists.map(() => 1);
  if (weights.length !== lists.length) {
    throw new RangeError(`expected ${lists.length} weights, got ${weights.length}`);
  }
  for (const w of weights) {
    if (!Number.isFinite(w)) throw new RangeError(`weights must be finite, got ${w}`);
  }
  return [...weights];
}

/**
 * Weighted sum of each list's min-max normalised scores (see {@link minMaxNormalize}). An item
 * missing from a list gets 0 from it; an id repeated within one list counts once, with its
 * best score. `weights` defaults to 1 per list. Result: best first, ties broken by ascending id.
 */
export function fuseScores<Id extends string | number>(
  lists: ReadonlyArray<ReadonlyArray<ScoredItem<Id>>>,
  weights?: readonly number[],
): ScoredItem<Id>[] {
  const w = checkWeights(lists, weights);
  const totals = new Map<Id, number>();
  lists.forEach((list, li) => {
    const normalized = minMaxNormalize(list.map((item) => item.score));
    const best = new Map<Id, number>();
    list.forEach((item, i) => {
      const s = normalized[i] ?? 0;
      const prev = best.get(item.id);
      if (prev === undefined || s > prev) best.set(item.id, s);
    });
    const weight = w[li] ?? 1;
    for (const [id, s] of best) totals.set(id, (totals.get(id) ?? 0) + weight * s);
  });
  return ranked(totals);
}

/**
 * Reciprocal rank fusion: Σ 1/(k + rank) over the lists an item appears in, with rank 1 for
 * the first element. Ranks come from array order (lists must be ordered best first), so the
 * lists' scores are ignored and may be on any scale. An id repeated in a list counts at its
 * best rank. Result: best first, ties broken by ascending id.
 */
export function reciprocalRankFusion<Id extends string | number>(
  lists: ReadonlyArray<ReadonlyArray<{ id: Id }>>,
  k = 60,
): ScoredItem<Id>[] {
  if (!(k >= 0) || !Number.isFinite(k)) throw new RangeError(`k must be >= 0, got ${k}`);
  const totals = new Map<Id, number>();
  for (const list of lists) {
    const seen = new Set<Id>();
    list.forEach((item, i) => {
      if (seen.has(item.id)) return;
      seen.add(item.id);
      totals.set(item.id, (totals.get(item.id) ?? 0) + 1 / (k + i + 1));
    });
  }
  return ranked(totals);
}
