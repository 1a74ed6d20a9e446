import type { FullVector } from './slots';

/**
 * Full-precision vectors kept for rescoring, by slot, within a byte budget (INDEXER_VECTOR_CACHE_MB).
 * When it is full, a vector not used since the clock hand last passed it makes room (CLOCK: an
 * approximation of least recently used, with a bit per entry instead of a list to reorder).
 *
 * Keyed by slot, not by chunk id as a general LRU would be: a search asks for ~26 vectors, and here
 * a get is two array reads and a store, with no string hashing or list bookkeeping.
 */
export class SlotVectorCache {
  /** Each slot's entry in the ring, -1 when it has none (grown as slots are). */
  private position = new Int32Array(1024).fill(-1);
  /**
   * The ring: each entry's slot (-1: free), vector, and whether it was used since the hand passed it.
   * It starts small and doubles while the budget has room and every entry is taken, up to as many
   * entries as the budget holds of the model's smallest vectors (halves).
   */
  private slots = new Int32Array(0);
  private vectors: (FullVector | undefined)[] = [];
  private used = new Uint8Array(0);
  private readonly maxEntries: number;
  /** Entries taken. */
  private count = 0;
  private hand = 0;
  /** Bytes of the vectors kept. */
  bytes = 0;

  /**
   * @param budget bytes of vectors kept at most
   * @param dimension the model's: the ring has room for as many of its smallest vectors (halves) as the budget holds
   */
  constructor(
    private readonly budget: number,
    dimension: number,
  ) {
    this.maxEntries = Math.max(1, Math.floor(budget / (2 * dimension)));
  }

  get(slot: number): FullVector | undefined {
    const at = slot < this.position.length ? this.position[slot]! : -1;
    if (at < 0) return undefined;
    this.used[at] = 1;
    return this.vectors[at];
  }

  set(slot: number, vector: FullVector): void {
    if (vector.byteLength > this.budget) return;
    this.delete(slot);
    if (this.count === this.slots.length && this.bytes + vector.byteLength <= this.budget) this.growRing();
    const entries = this.slots.length;
    // The hand goes round: it takes a free entry once the budget has room, and makes room by dropping
    // entries not used since its last pass (clearing the mark of those that were).
    for (;;) {
      const at = this.hand;
      if (this.slots[at]! < 0) {
        if (this.bytes + vector.byteLength <= this.budget) break;
      } else if (this.used[at] === 1) {
        this.used[at] = 0;
      } else {
        this.drop(at);
        if (this.bytes + vector.byteLength <= this.budget) break;
      }
      this.hand = at + 1 === entries ? 0 : at + 1;
    }
    const at = this.hand;
    if (slot >= this.position.length) this.grow(slot + 1);
    this.slots[at] = slot;
    this.vectors[at] = vector;
    this.used[at] = 0;
    this.position[slot] = at;
    this.bytes += vector.byteLength;
    this.count += 1;
    this.hand = at + 1 === entries ? 0 : at + 1;
  }

  delete(slot: number): void {
    const at = slot < this.position.length ? this.position[slot]! : -1;
    if (at >= 0) this.drop(at);
  }

  /** Slots renumbered (`remap[old]`: the new slot, -1 for one dropped): the kept vectors follow them. */
  remap(remap: Int32Array): void {
    this.position = new Int32Array(Math.max(1024, this.position.length)).fill(-1);
    for (let at = 0; at < this.slots.length; at++) {
      const old = this.slots[at]!;
      if (old < 0) continue;
      const slot = old < remap.length ? remap[old]! : -1;
      if (slot < 0) {
        // (not drop(): the position array is already the new slots')
        this.release(at);
        continue;
      }
      if (slot >= this.position.length) this.grow(slot + 1);
      this.slots[at] = slot;
      this.position[slot] = at;
    }
  }

  clear(): void {
    this.position.fill(-1);
    this.slots = new Int32Array(0);
    this.vectors = [];
    this.used = new Uint8Array(0);
    this.count = 0;
    this.hand = 0;
    this.bytes = 0;
  }

  private drop(at: number): void {
    this.position[this.slots[at]!] = -1;
    this.release(at);
  }

  /** Frees a taken entry of the ring (its slot's position left to the caller). */
  private release(at: number): void {
    this.bytes -= this.vectors[at]!.byteLength;
    this.slots[at] = -1;
    this.vectors[at] = undefined;
    this.used[at] = 0;
    this.count -= 1;
  }

  /** Doubles the ring (within maxEntries), the hand on the first new entry. */
  private growRing(): void {
    const length = this.slots.length;
    const grown = Math.min(this.maxEntries, Math.max(64, length * 2));
    if (grown <= length) return;
    const slots = new Int32Array(grown).fill(-1);
    slots.set(this.slots);
    const used = new Uint8Array(grown);
    used.set(this.used);
    this.slots = slots;
    this.used = used;
    for (let at = length; at < grown; at++) this.vectors.push(undefined);
    this.hand = length;
  }

  private grow(length: number): void {
    const grown = new Int32Array(Math.max(length, this.position.length * 2)).fill(-1);
    grown.set(this.position);
    this.position = grown;
  }
}
