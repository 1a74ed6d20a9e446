import { ExtractionError, type ExtractLimits } from './errors';
import { relationships } from './ooxml';
import { walkXml } from './xml';
import { TextWriter } from './writer';
import type { BoundedZip } from './zip';

type Block = { kind: 'p'; text: string } | { kind: 'row'; cells: string[] } | { kind: 'end-table' };

/** Shapes' paragraphs and tables of one slide (or notes) part, in document order. */
function readShapes(xml: string, maxDepth: number, skipPlaceholders: ReadonlySet<string>): { title: string; blocks: Block[] } {
  const blocks: Block[] = [];
  const title: string[] = [];
  let placeholder: string | undefined;
  let para: string[] | undefined;
  let inText = false;
  let row: string[] | undefined;
  let cell: string[] | undefined;
  walkXml(
    xml,
    {
      open(name, attrs) {
        if (name === 'p:sp') placeholder = undefined;
        else if (name === 'p:ph') placeholder = attrs.type ?? 'body';
        else if (name === 'a:p') para = [];
        else if (name === 'a:t') inText = true;
        else if (name === 'a:br') para?.push('\n');
        else if (name === 'a:tr') row = [];
        else if (name === 'a:tc') cell = [];
      },
      text(text) {
        if (inText) para?.push(text);
      },
      close(name) {
        if (name === 'a:t') inText = false;
        else if (name === 'a:p') {
          const text = (para ?? []).join('');
          para = undefined;
          if (cell) cell.push(text);
          else if (placeholder && skipPlaceholders.has(placeholder)) return;
          else if (placeholder === 'title' || placeholder === 'ctrTitle') title.push(text);
          else blocks.push({ kind: 'p', text });
        } else if (name === 'a:tc') {
          row?.push((cell ?? []).join(' '));
          cell = undefined;
        } else if (name === 'a:tr') {
          if (row) blocks.push({ kind: 'row', cells: row });
          row = undefined;
        } else if (name === 'a:tbl') blocks.push({ kind: 'end-table' });
      },
    },
    { maxDepth },
  );
  return { title: title.join(' ').trim(), blocks };
}

function write(out: TextWriter, blocks: readonly Block[]): void {
  for (const b of blocks) {
    if (b.kind === 'p') out.paragraph(b.text);
    else if (b.kind === 'row') out.row(b.cells);
    else out.endTable();
  }
}

const NOTES_SKIP = new Set(['sldImg', 'sldNum', 'hdr', 'ftr', 'dt']);
const SLIDE_SKIP = new Set(['sldNum', 'ftr', 'dt']);

/**
 * PPTX: slides in presentation order, each as `## Slide N: title`, its text boxes and tables, and
 * its speaker notes after `Notes:`.
 */
export function extractPptx(zip: BoundedZip, limits: ExtractLimits): { text: string; pages: number } {
  const presentation = 'ppt/presentation.xml';
  const rels = relationships(zip, presentation, limits.maxDepth);
  const order: string[] = [];
  walkXml(
    zip.readText(presentation),
    {
      open(name, attrs) {
        if (name !== 'p:sldId') return;
        const target = rels.get(attrs['r:id'] ?? '')?.target;
        if (target) order.push(target);
      },
    },
    { maxDepth: limits.maxDepth },
  );
  if (order.length > limits.maxPages) {
    throw new ExtractionError('too_large', `the presentation has ${order.length} slides; at most ${limits.maxPages} are read`);
  }
  const out = new TextWriter(limits.maxTextBytes);
  order.forEach((slidePath, i) => {
    if (!zip.has(slidePath)) return;
    const slide = readShapes(zip.readText(slidePath), limits.maxDepth, SLIDE_SKIP);
    out.heading(2, slide.title ? `Slide ${i + 1}: ${slide.title}` : `Slide ${i + 1}`);
    write(out, slide.blocks);
    out.endTable();
    const notesPath = [...relationships(zip, slidePath, limits.maxDepth).values()].find((r) => r.type.endsWith('/notesSlide'))?.target;
    if (notesPath && zip.has(notesPath)) {
      const notes = readShapes(zip.readText(notesPath), limits.maxDepth, NOTES_SKIP);
      const text = notes.blocks.flatMap((b) => (b.kind === 'p' ? [b.text] : b.kind === 'row' ? [b.cells.join(' | ')] : []));
      if (text.some((t) => t.trim() !== '')) out.paragraph(`Notes: ${text.filter((t) => t.trim() !== '').join('\n')}`);
    }
  });
  return { text: out.text(), pages: order.length };
}
