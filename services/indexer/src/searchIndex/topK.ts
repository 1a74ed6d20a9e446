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
      this.down(0);
    }
  }

  /** Best first. */
  sorted(): { score: number; item: T }[] {
    return this.scores
      .map((score, i) => ({ score, item: this.items[i]! }))
      .sort((a, b) => b.score - a.score || this.tieBreak(a.item, b.item));
  }

  private swap(i: number, j: number): void {
    [this.scores[i], this.scores[j]] = [this.scores[j]!, this.scores[i]!];
    [this.items[i], this.items[j]] = [this.items[j]!, this.items[i]!];
  }

  private up(i: number): void {
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.worse(this.scores[i]!, this.items[i]!, this.scores[parent]!, this.items[parent]!)) return;
      this.swap(i, parent);
      i = parent;
    }
  }

  private down(i: number): void {
    const n = this.scores.length;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let worst = i;
      if (l < n && this.worse(this.scores[l]!, this.items[l]!, this.scores[worst]!, this.items[worst]!)) worst = l;
      if (r < n && this.worse(this.scores[r]!, this.items[r]!, this.scores[worst]!, this.items[worst]!)) worst = r;
      if (worst === i) return;
      this.swap(i, worst);
      i = worst;
    }
  }
}

/** The order of equally scored chunks on every index: memo uuid, then chunk index (ascending). */
export function compareChunks(a: { memoId: string; chunkIndex: number }, b: { memoId: string; chunkIndex: number }): number {
  return a.memoId < b.memoId ? -1 : a.memoId > b.memoId ? 1 : a.chunkIndex - b.chunkIndex;
}
