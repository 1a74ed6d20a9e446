import { matchesFilters, type Filter, type FilterableMemo, type MemoAttributes } from '@memex/contracts';
import type { CatalogEntry } from '../port';

function filterable(memo: MemoAttributes): FilterableMemo {
  return {
    title: memo.title,
    source: memo.source,
    clientReferenceId: memo.clientReferenceId,
    tags: memo.tags,
    metadata: memo.metadata,
  };
}

/**
 * The memos a (project, filters) pair allows: memo id → the revision their findable chunks must
 * have. The catalog keeps the ones it has handed out current as memos change, and lists the memos
 * changed since, in order, so a model memory's findable slots catch up with just those.
 */
export class EligibleMemos extends Map<string, number> {
  readonly changed: string[] = [];
}

/**
 * Changes an eligible set records before the catalog drops it and the next search builds a new one
 * (~2 ms at 10k memos); bounds what the lists hold: up to 512 sets of 1,024 ids.
 */
const MAX_ELIGIBLE_CHANGES = 1024;

/** Whether a (project, filters) pair allows a catalog entry: live, not archived, passing every filter. */
function allows(entry: CatalogEntry | undefined, filters: readonly Filter[]): entry is CatalogEntry & { memo: MemoAttributes } {
  const memo = entry?.memo;
  if (!memo || memo.archived) return false;
  return filters.length === 0 || matchesFilters(filterable(memo), filters);
}

/** Memos the catalog knows, by id and by project, and the eligible sets handed out, kept current. */
export class CatalogMemory {
  readonly entries = new Map<string, CatalogEntry>();
  private readonly byProject = new Map<string, Set<string>>();
  /** The eligible sets handed out, by project and filters. */
  private readonly eligibleCache = new Map<string, { projectId: string; filters: readonly Filter[]; memos: EligibleMemos }>();

  set(entry: CatalogEntry): void {
    const previous = this.entries.get(entry.memoId);
    if (previous && previous.projectId !== entry.projectId) this.byProject.get(previous.projectId)?.delete(entry.memoId);
    this.entries.set(entry.memoId, entry);
    let set = this.byProject.get(entry.projectId);
    if (!set) {
      set = new Set();
      this.byProject.set(entry.projectId, set);
    }
    set.add(entry.memoId);
    for (const [key, cached] of this.eligibleCache) {
      if (cached.projectId !== entry.projectId && cached.projectId !== previous?.projectId) continue;
      const memos = cached.memos;
      if (memos.changed.length >= MAX_ELIGIBLE_CHANGES) {
        this.eligibleCache.delete(key);
        continue;
      }
      if (cached.projectId === entry.projectId && allows(entry, cached.filters)) memos.set(entry.memoId, entry.memo.revision);
      else memos.delete(entry.memoId);
      memos.changed.push(entry.memoId);
    }
  }

  clear(): void {
    this.entries.clear();
    this.byProject.clear();
    this.eligibleCache.clear();
  }

  /**
   * The memos of the project that are live, not archived and pass every filter, each with the
   * revision its findable chunks must have. One set per (project, filters), built once and then kept
   * current by {@link set} (building one walks every memo of the project: ~2 ms at 10k memos).
   */
  eligible(projectId: string, filters: readonly Filter[]): EligibleMemos {
    const key = `${projectId}\u0000${JSON.stringify(filters)}`;
    const cached = this.eligibleCache.get(key);
    if (cached) return cached.memos;
    const memos = new EligibleMemos();
    for (const memoId of this.byProject.get(projectId) ?? []) {
      const entry = this.entries.get(memoId);
      if (allows(entry, filters)) memos.set(memoId, entry.memo.revision);
    }
    if (this.eligibleCache.size >= 512) this.eligibleCache.delete(this.eligibleCache.keys().next().value!);
    this.eligibleCache.set(key, { projectId, filters: structuredClone(filters), memos });
    return memos;
  }
}
