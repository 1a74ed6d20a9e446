import { LRUCache } from 'lru-cache';

/** How many bytes of encoded texts an indexer keeps (and of the texts themselves, counted once more). */
const ENCODED_TEXTS_BYTES = 8 * 1024 * 1024;

/**
 * The JSON encodings (quoted, escaped, UTF-8) of the texts searches answer with most: chunk
 * contents and memo summaries, by the text itself, the least recently served dropped past a budget.
 * A search's reply then copies ~1 KB per hit instead of escaping and encoding it again; in a CPU
 * profile of the stack under search load that encoding was a fifth of the indexer's time per search.
 * Keyed by the text, so a text that changes is simply another entry (a string keeps its hash once
 * computed, and the index serves the same string objects search after search). Emptied whenever a
 * memo is erased (its key shredded, by any process), so no erased text outlives the index's copy.
 */
export class EncodedTexts {
  private readonly cache: LRUCache<string, Buffer>;

  constructor(maxBytes = ENCODED_TEXTS_BYTES) {
    this.cache = new LRUCache({ maxSize: maxBytes, sizeCalculation: (encoded, text) => encoded.byteLength + text.length });
  }

  /** Forgets every text (a memo was erased: which texts were its is not known here). */
  clear(): void {
    this.cache.clear();
  }

  get size(): number {
    return this.cache.size;
  }

  readonly encode = (text: string): Buffer => {
    let encoded = this.cache.get(text);
    if (!encoded) {
      encoded = Buffer.from(JSON.stringify(text));
      if (encoded.byteLength + text.length <= this.cache.maxSize) this.cache.set(text, encoded);
    }
    return encoded;
  };
}
