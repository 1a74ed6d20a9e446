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
 * Memo content by reference: the sealed blob plus what readers need without fetching it.
 * `length` is the plaintext's length in UTF-16 code units (the API's `content_length`, and the
 * unit chunk offsets use).
 */
export interface ContentRef {
  blob: BlobRef;
  length: number;
  /**
   * HMAC-SHA256 of the plaintext under the memo's data key (hex): tells equal content apart without
   * the bytes, and, keyed, confirms no guess once the key is shredded.
   */
  digest: string;
}

/** Blob names for memo content: one per memo and revision attempt, so a retried write never clobbers another. */
export function contentBlobName(projectId: string, memoId: string, id: string): string {
  return `content/${projectId}/${memoId}/${id}`;
}
