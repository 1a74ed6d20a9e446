/**
 * A blob by reference (claim-check): commands, events and replies carry this, never the bytes, so
 * no NATS message grows with a memo's content. `bytes` and `sha256` describe the stored bytes (for
 * sealed content: the ciphertext).
 */
export interface BlobRef {
  /** The object's name in the blob store (unique; never reused for other bytes). */
  name: string;
  /** Stored size in bytes. */
  bytes: number;
  /** Lower-case hex SHA-256 of the stored bytes. */
  sha256: string;
}

/**
 * Memo content, sealed with the memo's key: by reference to a blob, or, when small (up to
 * `INLINE_CONTENT_MAX_BYTES` of text), inline as the sealed bytes themselves (base64), so the
 * common memo costs no blob-store round trips. Either way only ciphertext travels and is kept, and
 * shredding the memo's key makes it unreadable. `length` is the plaintext's length in UTF-16 code
 * units (the API's `content_length`, and the unit chunk offsets use).
 */
export interface ContentRef {
  /** The sealed content in the blob store (content larger than the inline limit). */
  blob?: BlobRef;
  /** The sealed content itself, base64 (content up to the inline limit). */
  inline?: string;
  /**
   * In the memo service's read model only: the content is that of the memo stream's event with this
   * version, which keeps it (once) with its digest (here ''); the memo service puts the event's
   * reference in its place before it answers.
   */
  event?: number;
  length: number;
  /**
   * HMAC-SHA256 of the plaintext under the memo's data key (hex): tells equal content apart without
   * the bytes, and, keyed, confirms no guess once the key is shredded.
   */
  digest: string;
}

/**
 * Content up to this many UTF-8 bytes travels inline (sealed) in commands, events and the read
 * model; larger content goes to the blob store. Small enough that no message nears NATS's
 * max_payload (a sealed, base64 inline content is at most ~44 KiB).
 */
export const INLINE_CONTENT_MAX_BYTES = 32 * 1024;

/** Blob names for memo content: one per memo and revision attempt, so a retried write never clobbers another. */
export function contentBlobName(projectId: string, memoId: string, id: string): string {
  return `content/${projectId}/${memoId}/${id}`;
}
