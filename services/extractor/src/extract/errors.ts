/** Why a document could not be turned into text. The reason is what the memo's status shows. */
export type ExtractionFailure =
  | 'unsupported'
  | 'corrupt'
  | 'too_large'
  | 'no_text'
  | 'timeout'
  | 'out_of_memory'
  | 'crashed';

export class ExtractionError extends Error {
  constructor(
    readonly failure: ExtractionFailure,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'ExtractionError';
  }
}

/** Limits every extraction runs under; a document that needs more ends in status `error`. */
export interface ExtractLimits {
  /** Bytes all inflated ZIP entries together may expand to (zip bombs). */
  maxInflatedBytes: number;
  /** PDF pages, slides or sheets read at most; more is refused, not cut silently. */
  maxPages: number;
  /** UTF-8 bytes of extracted text at most (the memo content limit). */
  maxTextBytes: number;
  /** Elements of nesting an XML/HTML document may have. */
  maxDepth: number;
  /** Spreadsheet cells read at most. */
  maxCells: number;
}

export const DEFAULT_EXTRACT_LIMITS: ExtractLimits = {
  maxInflatedBytes: 256 * 1024 * 1024,
  maxPages: 2_000,
  maxTextBytes: 16 * 1024 * 1024,
  maxDepth: 256,
  maxCells: 1_000_000,
};
