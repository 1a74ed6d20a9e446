import { ExtractionError } from './errors';

/**
 * Builds the extracted text as plain Markdown-like blocks: `#` headings, paragraphs split by a blank
 * line, table rows one per line with cells separated by ` | `. Counts its size as it goes, so a
 * document whose text exceeds the content limit is refused early, never cut.
 */
export class TextWriter {
  private readonly blocks: string[] = [];
  private bytes = 0;
  private inTable = false;

  constructor(private readonly maxBytes: number) {}

  heading(level: number, text: string): void {
    const t = clean(text);
    if (t) this.push(`${'#'.repeat(Math.min(6, Math.max(1, level)))} ${t}`, false);
  }

  paragraph(text: string): void {
    const t = text
      .split('\n')
      .map((line) => clean(line))
      .filter((line) => line !== '')
      .join('\n');
    if (t) this.push(t, false);
  }

  /** One table row; empty trailing cells are dropped, empty rows skipped. */
  row(cells: readonly string[]): void {
    const out = cells.map((c) => clean(c.replace(/\n/g, ' ')));
    while (out.length > 0 && out[out.length - 1] === '') out.pop();
    if (out.length === 0) return;
    this.push(out.join(' | '), true);
  }

  /** Ends a table, so the next row starts a new one. */
  endTable(): void {
    this.inTable = false;
  }

  /** Keeps preformatted text as it is (code blocks, plain text files). */
  raw(text: string): void {
    const t = text.replace(/\r\n?/g, '\n').replace(/[ \t]+$/gm, '').trim();
    if (t) this.push(t, false);
  }

  get length(): number {
    return this.blocks.length;
  }

  text(): string {
    let out = '';
    for (const block of this.blocks) out += block;
    return out.trim();
  }

  private push(block: string, row: boolean): void {
    const sep = this.blocks.length === 0 ? '' : row && this.inTable ? '\n' : '\n\n';
    this.inTable = row;
    const piece = sep + block;
    this.bytes += Buffer.byteLength(piece);
    if (this.bytes > this.maxBytes) {
      throw new ExtractionError('too_large', `the extracted text is larger than the content limit of ${this.maxBytes} bytes`);
    }
    this.blocks.push(piece);
  }
}

/** Collapses runs of whitespace (keeping none at the ends) and drops control characters. */
function clean(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g, '').replace(/[\s\u00a0]+/g, ' ').trim();
}
