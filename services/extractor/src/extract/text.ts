import { ExtractionError, type ExtractLimits } from './errors';
import { TextWriter } from './writer';

/** UTF-8 text without a byte-order mark; invalid sequences are an error, not replacement characters. */
export function decodeUtf8(bytes: Uint8Array): string {
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch (error) {
    throw new ExtractionError('corrupt', 'the file is not valid UTF-8 text', { cause: error });
  }
}

/** Plain text and Markdown are kept as written (Markdown already says its structure). */
export function extractPlain(bytes: Uint8Array, limits: ExtractLimits): string {
  const out = new TextWriter(limits.maxTextBytes);
  out.raw(decodeUtf8(bytes));
  return out.text();
}
