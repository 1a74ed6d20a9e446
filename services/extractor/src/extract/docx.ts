import type { ExtractLimits } from './errors';
import type { BoundedZip } from './zip';
import { walkXml } from './xml';
import { TextWriter } from './writer';

/** Heading level of a Word paragraph style, from its id or name ("Heading2", "heading 2", "Title"). */
function headingLevel(style: string | undefined): number | undefined {
  if (!style) return undefined;
  if (/^(title)$/i.test(style)) return 1;
  const m = /^heading\s*([1-9])$/i.exec(style);
  return m ? Number(m[1]) : undefined;
}

/** Style ids mapped to their names, so a localized or renamed id still reads as a heading. */
function styleNames(zip: BoundedZip, maxDepth: number): Map<string, string> {
  const names = new Map<string, string>();
  if (!zip.has('word/styles.xml')) return names;
  let current: string | undefined;
  walkXml(
    zip.readText('word/styles.xml'),
    {
      open(name, attrs) {
        if (name === 'w:style') current = attrs['w:styleId'];
        else if (name === 'w:name' && current && attrs['w:val']) names.set(current, attrs['w:val']);
      },
    },
    { maxDepth },
  );
  return names;
}

/**
 * DOCX: paragraphs in document order, headings from paragraph styles (or outline levels), tables as
 * rows of cells, line breaks and tabs kept. Headers, footers and comments are left out.
 */
export function extractDocx(zip: BoundedZip, limits: ExtractLimits): string {
  const styles = styleNames(zip, limits.maxDepth);
  const out = new TextWriter(limits.maxTextBytes);
  let para: string[] | undefined;
  let level: number | undefined;
  // Tables nest: each level keeps its row and its current cell's paragraphs.
  const tables: { row: string[]; cell: string[] | undefined }[] = [];
  let inText = false;
  let deleted = 0;

  const endParagraph = () => {
    if (!para) return;
    const text = para.join('');
    const table = tables[tables.length - 1];
    if (table?.cell) table.cell.push(text);
    else if (level !== undefined) out.heading(level, text);
    else out.paragraph(text);
    para = undefined;
    level = undefined;
  };

  walkXml(
    zip.readText('word/document.xml'),
    {
      open(name, attrs) {
        switch (name) {
          case 'w:p':
            para = [];
            level = undefined;
            break;
          case 'w:pStyle': {
            const id = attrs['w:val'];
            level = headingLevel(id) ?? headingLevel(id ? styles.get(id) : undefined) ?? level;
            break;
          }
          case 'w:outlineLvl':
            if (level === undefined && attrs['w:val'] !== undefined && Number(attrs['w:val']) < 9) level = Number(attrs['w:val']) + 1;
            break;
          case 'w:t':
            inText = true;
            break;
          case 'w:tab':
            para?.push('\t');
            break;
          case 'w:br':
          case 'w:cr':
            para?.push('\n');
            break;
          case 'w:del':
            deleted++;
            break;
          case 'w:tbl':
            tables.push({ row: [], cell: undefined });
            break;
          case 'w:tr':
            if (tables.length) tables[tables.length - 1]!.row = [];
            break;
          case 'w:tc':
            if (tables.length) tables[tables.length - 1]!.cell = [];
            break;
        }
      },
      text(text) {
        if (inText && deleted === 0) para?.push(text);
      },
      close(name) {
        switch (name) {
          case 'w:t':
            inText = false;
            break;
          case 'w:del':
            deleted--;
            break;
          case 'w:p':
            endParagraph();
            break;
          case 'w:tc': {
            const table = tables[tables.length - 1];
            if (table?.cell) table.row.push(table.cell.join(' '));
            if (table) table.cell = undefined;
            break;
          }
          case 'w:tr': {
            const table = tables[tables.length - 1];
            if (!table) break;
            const outer = tables[tables.length - 2];
            // A table inside a cell becomes text of that cell.
            if (outer?.cell) outer.cell.push(table.row.filter(Boolean).join(' ; '));
            else out.row(table.row);
            break;
          }
          case 'w:tbl':
            tables.pop();
            out.endTable();
            break;
        }
      },
    },
    { maxDepth: limits.maxDepth },
  );
  return out.text();
}
