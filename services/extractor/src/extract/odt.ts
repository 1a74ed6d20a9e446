import type { ExtractLimits } from './errors';
import { walkXml } from './xml';
import { TextWriter } from './writer';
import type { BoundedZip } from './zip';

/**
 * ODT: `text:h` as headings at their outline level, paragraphs and list items, tables as rows.
 * Annotations and tracked deletions are left out.
 */
export function extractOdt(zip: BoundedZip, limits: ExtractLimits): string {
  const out = new TextWriter(limits.maxTextBytes);
  let para: string[] | undefined;
  let level: number | undefined;
  let skip = 0;
  const tables: { row: string[]; cell: string[] | undefined }[] = [];

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
    zip.readText('content.xml'),
    {
      open(name, attrs) {
        if (skip > 0) {
          if (name === 'office:annotation' || name === 'text:tracked-changes') skip++;
          return;
        }
        switch (name) {
          case 'office:annotation':
          case 'text:tracked-changes':
          case 'text:note':
            skip++;
            break;
          case 'text:h':
            para = [];
            level = Number(attrs['text:outline-level'] ?? 1) || 1;
            break;
          case 'text:p':
            if (!para) para = [];
            break;
          case 'text:s':
            para?.push(' '.repeat(Math.min(100, Number(attrs['text:c'] ?? 1) || 1)));
            break;
          case 'text:tab':
            para?.push('\t');
            break;
          case 'text:line-break':
            para?.push('\n');
            break;
          case 'table:table':
            tables.push({ row: [], cell: undefined });
            break;
          case 'table:table-row':
            if (tables.length) tables[tables.length - 1]!.row = [];
            break;
          case 'table:table-cell':
            if (tables.length) tables[tables.length - 1]!.cell = [];
            break;
        }
      },
      text(text) {
        if (skip === 0) para?.push(text);
      },
      close(name) {
        if (name === 'office:annotation' || name === 'text:tracked-changes' || name === 'text:note') {
          if (skip > 0) skip--;
          return;
        }
        if (skip > 0) return;
        switch (name) {
          case 'text:h':
          case 'text:p':
            endParagraph();
            break;
          case 'table:table-cell': {
            const table = tables[tables.length - 1];
            if (table?.cell) table.row.push(table.cell.join(' '));
            if (table) table.cell = undefined;
            break;
          }
          case 'table:table-row': {
            const table = tables[tables.length - 1];
            const outer = tables[tables.length - 2];
            if (!table) break;
            if (outer?.cell) outer.cell.push(table.row.filter(Boolean).join(' ; '));
            else out.row(table.row);
            break;
          }
          case 'table:table':
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
