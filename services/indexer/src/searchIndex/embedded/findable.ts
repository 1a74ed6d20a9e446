import { EligibleMemos } from './catalog';
import type { SlotStore } from './slots';

/** Slot changes the model keeps for cached findable sets to catch up with (see FindableSets.changeLog). */
const MAX_SLOT_CHANGES = 65_536;

/**
 * The findable slots for one eligible set, as of `layout`, the change log up to `logged` and the
 * first `memosSeen` of its changed memos: a mask by slot (grown as slots are added; a slot beyond it
 * is not findable) and the ascending list.
 */
interface FindableSlots {
  layout: number;
  logged: number;
  memosSeen: number;
  mask: Uint8Array;
  count: number;
  slots: Uint32Array;
}

/** The slots whose mask byte is 1, ascending (`count` of them). */
function maskedSlots(mask: Uint8Array, count: number): Uint32Array {
  const slots = new Uint32Array(count);
  for (let slot = 0, i = 0; i < count; slot++) if (mask[slot] === 1) slots[i++] = slot;
  return slots;
}

/**
 * The findable slots of each eligible set a search asked for (see {@link of}), cached by set and kept
 * current through a log of the slots added or removed since.
 */
export class FindableSets {
  /**
   * Slots added or removed, in order, since `changeLogStart` changes (absolute positions), so cached
   * findable sets catch up with just those; cleared by a compaction (which renumbers every slot) and
   * when it grows past {@link MAX_SLOT_CHANGES} (sets further behind are built again).
   */
  private changeLog: number[] = [];
  private changeLogStart = 0;
  private readonly slotSets = new WeakMap<Map<string, number>, FindableSlots>();

  constructor(private readonly store: SlotStore) {}

  /** Every slot was renumbered (a compaction): the log starts over, and cached sets are built again. */
  renumbered(): void {
    this.changeLogStart += this.changeLog.length;
    this.changeLog = [];
  }

  /** Notes a slot added or removed, for the cached findable sets (see changeLog). */
  logChange(slot: number): void {
    if (this.changeLog.length >= MAX_SLOT_CHANGES) {
      this.changeLogStart += this.changeLog.length;
      this.changeLog = [];
    }
    this.changeLog.push(slot);
  }

  /**
   * The findable slots for a set of eligible memos (chunks of those memos at their revision), as a
   * list for scans and a mask for postings. Built once per eligible set (a walk of its memos' slots:
   * ~4 ms at 100k chunks), then caught up at each use with the slots added or removed and, for an
   * {@link EligibleMemos}, the memos changed since: a search after a write pays for the change alone
   * (and the list, read off the mask), not for the whole set again.
   */
  of(eligible: Map<string, number>): FindableSlots {
    let found = this.slotSets.get(eligible);
    const logEnd = this.changeLogStart + this.changeLog.length;
    if (!found || found.layout !== this.store.layout || found.logged < this.changeLogStart) {
      found = this.afresh(eligible);
      this.slotSets.set(eligible, found);
    }
    // Slots that became findable past the end of the list (new chunks: the usual change) are appended;
    // any other change has the list read off the mask again.
    const last = found.slots.length > 0 ? found.slots[found.slots.length - 1]! : -1;
    const appended: number[] = [];
    let reread = false;
    const catchUp = (slot: number) => {
      const change = this.refreshSlot(found!, eligible, slot);
      if (change === 1 && slot > last) appended.push(slot);
      else if (change !== 0) reread = true;
    };
    for (let i = found.logged - this.changeLogStart; i < this.changeLog.length; i++) catchUp(this.changeLog[i]!);
    found.logged = logEnd;
    if (eligible instanceof EligibleMemos) {
      for (let i = found.memosSeen; i < eligible.changed.length; i++) for (const slot of this.store.byMemo.get(eligible.changed[i]!) ?? []) catchUp(slot);
      found.memosSeen = eligible.changed.length;
    }
    // (a new list, not rewritten in place: a search waiting on the scan thread still holds the old one)
    if (reread) {
      found.slots = maskedSlots(found.mask, found.count);
    } else if (appended.length > 0) {
      const slots = new Uint32Array(found.slots.length + appended.length);
      slots.set(found.slots);
      slots.set(appended.sort((a, b) => a - b), found.slots.length);
      found.slots = slots;
    }
    return found;
  }

  /** A findable set built from scratch: the mask first, then the ascending list read off it. */
  private afresh(eligible: Map<string, number>): FindableSlots {
    const mask = new Uint8Array(this.store.size);
    let count = 0;
    for (const [memoId, revision] of eligible) {
      const list = this.store.byMemo.get(memoId);
      if (!list) continue;
      for (const slot of list) {
        if (this.store.chunks[slot]?.revision === revision && mask[slot] === 0) {
          mask[slot] = 1;
          count += 1;
        }
      }
    }
    const memosSeen = eligible instanceof EligibleMemos ? eligible.changed.length : 0;
    return { layout: this.store.layout, logged: this.changeLogStart + this.changeLog.length, memosSeen, slots: maskedSlots(mask, count), mask, count };
  }

  /**
   * Sets a slot's bit in a findable set from the slot and the eligible memos as they are now: 1 when
   * it became findable, -1 when it stopped being, 0 when unchanged.
   */
  private refreshSlot(found: FindableSlots, eligible: Map<string, number>, slot: number): -1 | 0 | 1 {
    const chunk = this.store.chunks[slot];
    const bit = chunk !== undefined && eligible.get(chunk.memoId) === chunk.revision ? 1 : 0;
    if (slot >= found.mask.length) {
      if (bit === 0) return 0;
      const mask = new Uint8Array(Math.max(slot + 1, found.mask.length * 2, 1024));
      mask.set(found.mask);
      found.mask = mask;
    }
    if (found.mask[slot] === bit) return 0;
    found.mask[slot] = bit;
    found.count += bit === 1 ? 1 : -1;
    return bit === 1 ? 1 : -1;
  }

  /** Findable chunks: those of eligible memos at the eligible revision. */
  count(eligible: Map<string, number>): number {
    return this.of(eligible).count;
  }
}
