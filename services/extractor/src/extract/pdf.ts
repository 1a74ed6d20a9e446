import { getDocument, type PDFDocumentProxy } from 'pdfjs-dist/legacy/build/pdf.mjs';
import type { TextItem } from 'pdfjs-dist/types/src/display/api';
import { ExtractionError, type ExtractLimits } from './errors';
import { TextWriter } from './writer';

interface Line {
  y: number;
  height: number;
  x: number;
  parts: { x: number; end: number; text: string }[];
}

/** Lines of a page top to bottom: items on (nearly) one baseline are joined left to right. */
function pageLines(items: readonly TextItem[]): Line[] {
  const lines: Line[] = [];
  for (const item of items) {
    if (item.str === '' && !item.hasEOL) continue;
    const x = item.transform[4] as number;
    const y = item.transform[5] as number;
    const height = item.height || Math.abs(item.transform[3] as number);
    let line = lines.find((l) => Math.abs(l.y - y) <= Math.max(2, Math.min(l.height, height) * 0.3));
    if (!line) {
      line = { y, height: 0, x, parts: [] };
      lines.push(line);
    }
    if (item.str.trim() !== '') line.height = Math.max(line.height, height);
    line.x = Math.min(line.x, x);
    line.parts.push({ x, end: x + item.width, text: item.str });
  }
  for (const line of lines) line.parts.sort((a, b) => a.x - b.x);
  return lines.filter((l) => l.parts.some((p) => p.text.trim() !== '')).sort((a, b) => b.y - a.y);
}

/** A line's text; a wide horizontal gap between items (a table column) becomes ` | `. */
function lineText(line: Line): { text: string; columns: number } {
  let text = '';
  let columns = 1;
  let end: number | undefined;
  for (const part of line.parts) {
    if (part.text.trim() === '') {
      text += part.text;
      continue;
    }
    if (end !== undefined) {
      const gap = part.x - end;
      if (gap > line.height * 0.8) {
        text = text.trimEnd() + ' | ';
        columns++;
      } else if (gap > line.height * 0.15 && !/\s$/.test(text)) text += ' ';
    }
    text += part.text;
    end = part.end;
  }
  return { text, columns };
}

/**
 * PDF through pdf.js (no fonts loaded): each page's text items grouped into lines in
 * reading order (top to bottom, left to right), lines larger than the body text become headings,
 * wide column gaps become ` | ` cells, and a vertical gap ends a paragraph. A document without a
 * text layer is refused with a reason (there is no OCR engine here), never stored empty.
 */
export async function extractPdf(bytes: Uint8Array, limits: ExtractLimits): Promise<{ text: string; pages: number }> {
  let doc: PDFDocumentProxy;
  try {
    doc = await getDocument({
      // A copy: pdf.js wants a plain Uint8Array and takes ownership of (detaches) its buffer.
      data: new Uint8Array(bytes),
      disableFontFace: true,
      useSystemFonts: false,
      stopAtErrors: false,
      verbosity: 0,
    }).promise;
  } catch (error) {
    const message = (error as Error).message ?? String(error);
    if (/password/i.test(message)) throw new ExtractionError('unsupported', 'the PDF is password-protected', { cause: error });
    throw new ExtractionError('corrupt', `the PDF could not be read: ${message}`, { cause: error });
  }
  try {
    if (doc.numPages > limits.maxPages) {
      throw new ExtractionError('too_large', `the PDF has ${doc.numPages} pages; at most ${limits.maxPages} are read`);
    }
    const pages: Line[][] = [];
    const heights: number[] = [];
    for (let n = 1; n <= doc.numPages; n++) {
      const page = await doc.getPage(n);
      const content = await page.getTextContent();
      const lines = pageLines(content.items.filter((i): i is TextItem => 'str' in i));
      for (const l of lines) heights.push(l.height);
      pages.push(lines);
      page.cleanup();
    }
    const empty = pages.flatMap((lines, i) => (lines.length === 0 ? [i + 1] : []));
    if (empty.length === pages.length) {
      throw new ExtractionError(
        'no_text',
        `the PDF has no text layer on any of its ${pages.length} page(s) (scanned images?); no OCR engine is installed`,
      );
    }
    heights.sort((a, b) => a - b);
    const body = heights[Math.floor(heights.length / 2)] ?? 12;
    // Distinct heading sizes, largest first, become levels 1, 2, 3...
    const headingSizes = [...new Set(heights.filter((h) => h > body * 1.2).map((h) => Math.round(h)))].sort((a, b) => b - a);
    const out = new TextWriter(limits.maxTextBytes);
    for (const lines of pages) {
      let para: string[] = [];
      let previous: Line | undefined;
      const flush = () => {
        if (para.length) out.paragraph(para.join(' '));
        para = [];
      };
      for (const line of lines) {
        const { text, columns } = lineText(line);
        const level = headingSizes.indexOf(Math.round(line.height));
        const gap = previous ? previous.y - line.y : 0;
        if (level >= 0 && line.height > body * 1.2) {
          flush();
          out.endTable();
          out.heading(Math.min(level + 1, 6), text);
        } else if (columns > 1) {
          flush();
          out.row(text.split(' | '));
        } else {
          if (previous && gap > Math.max(line.height, previous.height) * 1.8) flush();
          out.endTable();
          para.push(text.trim());
        }
        previous = line;
      }
      flush();
      out.endTable();
    }
    return { text: out.text(), pages: pages.length };
  } finally {
    await doc.destroy();
  }
}
