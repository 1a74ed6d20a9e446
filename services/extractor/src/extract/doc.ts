import WordExtractor from 'word-extractor';
import { ExtractionError, type ExtractLimits } from './errors';
import { TextWriter } from './writer';

/**
 * Legacy Word (.doc, the OLE compound format) through word-extractor: the body text with its
 * paragraphs; table cells come out tab-separated and are written as ` | ` rows.
 */
export async function extractDoc(bytes: Uint8Array, limits: ExtractLimits): Promise<string> {
  let body: string;
  try {
    const doc = await new WordExtractor().extract(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
    body = doc.getBody();
  } catch (error) {
    throw new ExtractionError('corrupt', `the Word document could not be read: ${(error as Error).message}`, { cause: error });
  }
  const out = new TextWriter(limits.maxTextBytes);
  for (const block of body.replace(/\r\n?/g, '\n').split(/\n{2,}/)) {
    const lines = block.split('\n');
    if (lines.every((l) => l.includes('\t'))) {
      for (const line of lines) out.row(line.split('\t'));
      out.endTable();
    } else out.paragraph(block);
  }
  return out.text();
}
