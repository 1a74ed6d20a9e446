/**
 * Keeps the `k` highest-scoring items seen: a binary min-heap on score, so each offer is O(log k)
 * and most offers (worse than the current k-th) are one comparison.
 */
export class TopK<T> {
  private readonly scores: number[] = [];
  private readonly items: T[] = [];

  constructor(private readonly k: number) {}

  /** The lowest score still kept, or -Infinity while fewer than k are held. */
  get threshold(): number {
    return this.scores.length < this.k ? Number.NEGATIVE_INFINITY : this.scores[0]!;
  }

  offer(score: number, item: T): void {
    if (this.k <= 0) return;
    if (this.scores.length < this.k) {
      this.scores.push(score);
      this.items.push(item);
      this.up(this.scores.length - 1);
    } else if (score > this.scores[0]!) {
      this.scores[0] = score;
      this.items[0] = item;
      this.down(0);
    }
  }

  /** Best first. */
  sorted(): { score: number; item: T }[] {
    return this.scores.map((score, i) => ({ score, item: this.items[i]! })).sort((a, b) => b.score - a.score);
  }

  private swap(i: number, j: number): void {
    [this.scores[i], this.scores[j]] = [this.scores[j]!, this.scores[i]!];
    [this.items[i], this.items[j]] = [this.items[j]!, this.items[i]!];
  }

  private up(i: number): void {
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (this.scores[parent]! <= this.scores[i]!) return;
      this.swap(i, parent);
      i = parent;
    }
  }

  private down(i: number): void {
    const n = this.scores.length;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let smallest = i;
      if (l < n && this.scores[l]! < this.scores[smallest]!) smallest = l;
      if (r < n && this.scores[r]! < this.scores[smallest]!) smallest = r;
      if (smallest === i) return;
      this.swap(i, smallest);
      i = smallest;
    }
  }
}
