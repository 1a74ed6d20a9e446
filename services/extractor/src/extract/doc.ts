import WordExtractor from 'word-extractor';
import { ExtractionError, type ExtractLimits } from './errors';
import { TextWriter } from './writer';

/**
 * Legacy Word (.doc, the OLE compound format) through word-extractor: the body text with its
 * paragraphs (one per line of Word's text); a table's rows come out as lines of tab-ended cells
 * and are written as ` | ` rows. Word 97 text carries no heading styles here, so headings stay
 * paragraphs.
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
  // Word ends every paragraph with one line break; a table row is a line of tab-ended cells.
  let inTable = false;
  for (const line of body.replace(/\r\n?/g, '\n').split('\n')) {
    if (line.includes('\t')) {
      out.row(line.replace(/\t$/, '').split('\t'));
      inTable = true;
      continue;
    }
    if (inTable) out.endTable();
    inTable = false;
    if (line.trim() !== '') out.paragraph(line);
  }
  if (inTable) out.endTable();
  return out.text();
}
