import { ExtractionError, type ExtractLimits } from './errors';
import { relationships } from './ooxml';
import { walkXml } from './xml';
import { TextWriter } from './writer';
import type { BoundedZip } from './zip';

/** 0-based column of a cell reference such as "C7" (undefined when absent). */
function column(ref: string | undefined): number | undefined {
  if (!ref) return undefined;
  const letters = /^[A-Z]+/.exec(ref)?.[0];
  if (!letters) return undefined;
  let n = 0;
  for (const ch of letters) n = n * 26 + (ch.charCodeAt(0) - 64);
  return n - 1;
}

function sharedStrings(zip: BoundedZip, maxDepth: number): string[] {
  const path = 'xl/sharedStrings.xml';
  if (!zip.has(path)) return [];
  const strings: string[] = [];
  let current: string[] | undefined;
  let inText = false;
  let phonetic = 0;
  walkXml(
    zip.readText(path),
    {
      open(name) {
        if (name === 'si') current = [];
        else if (name === 'rPh') phonetic++;
        else if (name === 't') inText = true;
      },
      text(text) {
        if (inText && phonetic === 0) current?.push(text);
      },
      close(name) {
        if (name === 't') inText = false;
        else if (name === 'rPh') phonetic--;
        else if (name === 'si') {
          strings.push((current ?? []).join(''));
          current = undefined;
        }
      },
    },
    { maxDepth },
  );
  return strings;
}

/**
 * XLSX: every sheet in workbook order as `## Sheet: name`, then its rows with cells in their
 * columns, separated by ` | `. Cached formula results are read; formulas are not evaluated.
 */
export function extractXlsx(zip: BoundedZip, limits: ExtractLimits): { text: string; pages: number } {
  const workbook = 'xl/workbook.xml';
  const rels = relationships(zip, workbook, limits.maxDepth);
  const sheets: { name: string; path: string }[] = [];
  walkXml(
    zip.readText(workbook),
    {
      open(name, attrs) {
        if (name !== 'sheet') return;
        const path = rels.get(attrs['r:id'] ?? '')?.target;
        if (path) sheets.push({ name: attrs.name ?? `Sheet ${sheets.length + 1}`, path });
      },
    },
    { maxDepth: limits.maxDepth },
  );
  if (sheets.length > limits.maxPages) {
    throw new ExtractionError('too_large', `the workbook has ${sheets.length} sheets; at most ${limits.maxPages} are read`);
  }
  const strings = sharedStrings(zip, limits.maxDepth);
  const out = new TextWriter(limits.maxTextBytes);
  let cells = 0;
  for (const sheet of sheets) {
    if (!zip.has(sheet.path)) continue;
    out.heading(2, `Sheet: ${sheet.name}`);
    let row: string[] = [];
    let type: string | undefined;
    let col = 0;
    let value: string[] | undefined;
    let inValue = false;
    walkXml(
      zip.readText(sheet.path),
      {
        open(name, attrs) {
          if (name === 'row') row = [];
          else if (name === 'c') {
            cells++;
            if (cells > limits.maxCells) throw new ExtractionError('too_large', `the workbook has more than ${limits.maxCells} cells`);
            type = attrs.t;
            col = column(attrs.r) ?? row.length;
            value = [];
          } else if (name === 'v' || name === 't') inValue = true;
        },
        text(text) {
          if (inValue) value?.push(text);
        },
        close(name) {
          if (name === 'v' || name === 't') inValue = false;
          else if (name === 'c') {
            const raw = (value ?? []).join('');
            const text = type === 's' ? (strings[Number(raw)] ?? '') : type === 'b' ? (raw === '1' ? 'TRUE' : 'FALSE') : raw;
            if (text !== '' && col < 16_384) {
              while (row.length < col) row.push('');
              row[col] = text;
            }
            value = undefined;
          } else if (name === 'row') out.row(row);
        },
      },
      { maxDepth: limits.maxDepth },
    );
    out.endTable();
  }
  return { text: out.text(), pages: sheets.length };
}
