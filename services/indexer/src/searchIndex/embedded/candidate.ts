import type { ChunkCandidate } from '../port';
import type { CatalogMemory } from './catalog';
import type { StoredChunk } from './slots';

/**
 * A chunk a ranking found. Its memo's title and summary are looked up in the catalog only when read:
 * of the ~200 candidates of a search, fusion keeps the best few and reads them for those alone.
 */
export class SlotCandidate implements ChunkCandidate {
  readonly chunkId: string;
  readonly memoId: string;
  readonly chunkIndex: number;
  readonly content: string;
  readonly key: number | undefined;
  readonly #catalog: CatalogMemory;

  constructor(
    chunk: StoredChunk,
    readonly score: number,
    catalog: CatalogMemory,
  ) {
    this.chunkId = chunk.chunkId;
    // (its row: unique among the chunks of a model, and the same in both rankings of a search)
    this.key = chunk.row >= 0 ? chunk.row : undefined;
    this.memoId = chunk.memoId;
    this.chunkIndex = chunk.index;
    this.content = chunk.content;
    this.#catalog = catalog;
  }

  get memoTitle(): string {
    return this.#catalog.entries.get(this.memoId)?.memo?.title ?? '';
  }

  get memoSummary(): string {
    return this.#catalog.entries.get(this.memoId)?.memo?.summary ?? '';
  }
}
