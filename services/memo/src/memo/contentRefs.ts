import type { ContentRef } from '@memex/contracts';

/** An inline content reference: the sealed content itself, base64, in the reference. */
export type InlineContentRef = ContentRef & { inline: string };

/** At most this many bytes of inline content references are kept (see {@link ContentRefCache}). */
const CONTENT_REFS_HELD_BYTES = 8 * 1024 * 1024;

/**
 * Inline content references by the event that holds them (`stream#version`). A GET reads its
 * memo's content from that event, at the cost of an event store read, a decrypt and an inflate,
 * which this spares repeated GETs. An event does not change until its stream is erased,
 * and a reference is sealed (ciphertext, its length, a keyed digest): nothing in it is readable
 * without the memo's key. Its owner still empties it whenever any process shreds a key. Bounded
 * by the references' bytes, the oldest dropped first.
 */
export class ContentRefCache {
  private readonly refs = new Map<string, InlineContentRef>();
  private bytes = 0;

  constructor(private readonly maxBytes = CONTENT_REFS_HELD_BYTES) {}

  get size(): number {
    return this.refs.size;
  }

  /** The bytes of sealed content held. */
  get heldBytes(): number {
    return this.bytes;
  }

  get(key: string): InlineContentRef | undefined {
    return this.refs.get(key);
  }

  /** Keeps a reference (once: a key already held stays as it is), then drops the oldest while over the bound. */
  keep(key: string, ref: InlineContentRef): void {
    if (this.refs.has(key)) return;
    this.refs.set(key, ref);
    this.bytes += ref.inline.length;
    while (this.bytes > this.maxBytes) {
      const [oldest, dropped] = this.refs.entries().next().value!;
      this.refs.delete(oldest);
      this.bytes -= dropped.inline.length;
    }
  }

  clear(): void {
    this.refs.clear();
    this.bytes = 0;
  }
}
