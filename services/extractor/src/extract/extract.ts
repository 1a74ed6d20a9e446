import type { DocumentFormat } from '@memex/contracts';
import { ExtractionError, type ExtractLimits } from './errors';
import { decodeUtf8, extractPlain } from './text';
import { BoundedZip } from './zip';

/** Loads every parser now (a sandbox process does this once, before its first document). */
export async function preloadParsers(): Promise<void> {
  await Promise.all([import('./pdf'), import('./docx'), import('./pptx'), import('./xlsx'), import('./odt'), import('./doc'), import('./html')]);
}

export interface Extracted {
  format: DocumentFormat;
  text: string;
  /** PDF pages, slides or sheets; 1 for flowing formats. */
  pages: number;
}

/**
 * Turns a document's bytes into text that keeps its structure. Runs in-process: call it through
 * the sandbox (`runSandboxed`) for files from outside, so time and memory are bounded too.
 */
export async function extractDocument(bytes: Uint8Array, format: DocumentFormat, limits: ExtractLimits): Promise<Extracted> {
  const result = await extractByFormat(bytes, format, limits);
  if (result.text.trim() === '') throw new ExtractionError('no_text', `the ${format.toUpperCase()} file contains no text`);
  return { format, ...result };
}

async function extractByFormat(bytes: Uint8Array, format: DocumentFormat, limits: ExtractLimits): Promise<{ text: string; pages: number }> {
  switch (format) {
    case 'pdf':
      return (await import('./pdf')).extractPdf(bytes, limits);
    case 'docx':
      return { text: (await import('./docx')).extractDocx(new BoundedZip(bytes, limits.maxInflatedBytes), limits), pages: 1 };
    case 'pptx':
      return (await import('./pptx')).extractPptx(new BoundedZip(bytes, limits.maxInflatedBytes), limits);
    case 'xlsx':
      return (await import('./xlsx')).extractXlsx(new BoundedZip(bytes, limits.maxInflatedBytes), limits);
    case 'odt':
      return { text: (await import('./odt')).extractOdt(new BoundedZip(bytes, limits.maxInflatedBytes), limits), pages: 1 };
    case 'doc':
      return { text: await (await import('./doc')).extractDoc(bytes, limits), pages: 1 };
    case 'html':
      return { text: (await import('./html')).extractHtml(decodeUtf8(bytes), limits), pages: 1 };
    case 'markdown':
    case 'text':
      return { text: extractPlain(bytes, limits), pages: 1 };
    default: {
      const never: never = format;
      throw new ExtractionError('unsupported', `unknown format ${String(never)}`);
    }
  }
}
