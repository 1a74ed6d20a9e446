/**
 * Keeps the `k` best items seen: a binary heap with the worst kept item at the root, so each offer
 * is O(log k) and most offers (worse than the current k-th) are one comparison.
 *
 * "Better" is the higher score; equal scores are ordered by `tieBreak` (negative when its first
 * argument ranks first), so which of several equally scored items are kept, and in which order,
 * depends on the items alone and never on the order they were offered in.
 */
export class TopK<T> {
  private readonly scores: number[] = [];
  private readonly items: T[] = [];

  constructor(
    private readonly k: number,
    private readonly tieBreak: (a: T, b: T) => number = () => 0,
  ) {}

  /** The lowest score still kept, or -Infinity while fewer than k are held. */
  get threshold(): number {
    return this.scores.length < this.k ? Number.NEGATIVE_INFINITY : this.scores[0]!;
  }

  get size(): number {
    return this.scores.length;
  }

  /** Whether (a, itemA) ranks below (b, itemB). */
  private worse(a: number, itemA: T, b: number, itemB: T): boolean {
    return a < b || (a === b && this.tieBreak(itemA, itemB) > 0);
  }

  offer(score: number, item: T): void {
    if (this.k <= 0) return;
    if (this.scores.length < this.k) {
      this.scores.push(score);
      this.items.push(item);
      this.up(this.scores.length - 1);
    } else if (this.worse(this.scores[0]!, this.items[0]!, score, item)) {
      this.scores[0] = score;
      this.items[0] = item;
      this.siftDown(this.scores, this.items, 0, this.scores.length);
    }
  }

  /**
   * The kept scores and items as they lie in the heap (index i of one is index i of the other), in
   * no useful order: for a caller that needs the set, not the ranking. Valid until the next offer.
   */
  unordered(): { scores: readonly number[]; items: readonly T[] } {
    return { scores: this.scores, items: this.items };
  }

  /**
   * Best first. A heapsort of a copy: the root, the worst kept, goes to the end, then the worst of
   * the rest before it, and so on (cheaper than Array.prototype.sort with a comparator).
   */
  sorted(): { score: number; item: T }[] {
    const scores = this.scores.slice();
    const items = this.items.slice();
    for (let end = scores.length - 1; end > 0; end--) {
      swapAt(scores, items, 0, end);
      this.siftDown(scores, items, 0, end);
    }
    const out: { score: number; item: T }[] = new Array(scores.length);
    for (let i = 0; i < scores.length; i++) out[i] = { score: scores[i]!, item: items[i]! };
    return out;
  }

  private up(i: number): void {
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.worse(this.scores[i]!, this.items[i]!, this.scores[parent]!, this.items[parent]!)) return;
      swapAt(this.scores, this.items, i, parent);
      i = parent;
    }
  }

  /** Restores the heap below `i` within the first `n` entries of `scores` and `items`. */
  private siftDown(scores: number[], items: T[], i: number, n: number): void {
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let worst = i;
      if (l < n && this.worse(scores[l]!, items[l]!, scores[worst]!, items[worst]!)) worst = l;
      if (r < n && this.worse(scores[r]!, items[r]!, scores[worst]!, items[worst]!)) worst = r;
      if (worst === i) return;
      swapAt(scores, items, i, worst);
      i = worst;
    }
  }
}

function swapAt<T>(scores: number[], items: T[], i: number, j: number): void {
  const score = scores[i]!;
  scores[i] = scores[j]!;
  scores[j] = score;
  const item = items[i]!;
  items[i] = items[j]!;
  items[j] = item;
}

/** The order of equally scored chunks on every index: memo uuid, then chunk index (ascending). */
export function compareChunks(a: { memoId: string; chunkIndex: number }, b: { memoId: string; chunkIndex: number }): number {
  return a.memoId < b.memoId ? -1 : a.memoId > b.memoId ? 1 : a.chunkIndex - b.chunkIndex;
}
