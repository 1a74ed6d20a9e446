import type { ExtractLimits } from './errors';
import { walkXml } from './xml';
import { TextWriter } from './writer';

/** Elements whose content is never document text: code, styling, navigation chrome, forms. */
const DROPPED = new Set([
  'script', 'style', 'noscript', 'template', 'svg', 'canvas', 'iframe', 'object', 'head',
  'nav', 'header', 'footer', 'aside', 'form', 'button', 'select', 'dialog', 'menu',
]);
const BLOCKS = new Set([
  'p', 'div', 'section', 'article', 'main', 'blockquote', 'figure', 'figcaption', 'address',
  'dd', 'dt', 'dl', 'ul', 'ol', 'li', 'table', 'body', 'hr', 'details', 'summary', 'caption',
]);

/**
 * HTML: headings as `#` headings, paragraphs and list items as blocks, table rows as cells
 * separated by ` | `, preformatted text kept. Scripts, styles, `<head>`, navigation, headers,
 * footers, asides and forms (and anything `hidden`/`aria-hidden`) are dropped.
 */
export function extractHtml(source: string, limits: ExtractLimits): string {
  const out = new TextWriter(limits.maxTextBytes);
  let buffer: string[] = [];
  let heading: number | undefined;
  let dropped = 0;
  let pre = 0;
  const stack: boolean[] = [];
  const tables: { row: string[]; cell: string[] | undefined }[] = [];

  const flush = () => {
    const text = buffer.join('');
    buffer = [];
    const table = tables[tables.length - 1];
    if (table?.cell) {
      table.cell.push(text);
      return;
    }
    if (heading !== undefined) out.heading(heading, text);
    else if (pre > 0) out.raw(text);
    else out.paragraph(text);
  };

  walkXml(
    source,
    {
      open(name, attrs) {
        const drop = DROPPED.has(name) || 'hidden' in attrs || attrs['aria-hidden'] === 'true' || attrs.role === 'navigation';
        stack.push(drop);
        if (drop) {
          dropped++;
          return;
        }
        if (dropped > 0) return;
        if (/^h[1-6]$/.test(name)) {
          flush();
          heading = Number(name[1]);
        } else if (name === 'pre') {
          flush();
          pre++;
        } else if (name === 'br') buffer.push('\n');
        else if (name === 'table') {
          flush();
          tables.push({ row: [], cell: undefined });
        } else if (name === 'tr') {
          if (tables.length) tables[tables.length - 1]!.row = [];
        } else if (name === 'td' || name === 'th') {
          flush();
          if (tables.length) tables[tables.length - 1]!.cell = [];
        } else if (name === 'li') {
          flush();
          buffer.push('- ');
        } else if (BLOCKS.has(name)) flush();
      },
      text(text) {
        if (dropped === 0) buffer.push(pre > 0 ? text : text.replace(/\s+/g, ' '));
      },
      close(name) {
        const drop = stack.pop();
        if (drop) {
          dropped--;
          return;
        }
        if (dropped > 0) return;
        if (/^h[1-6]$/.test(name)) {
          flush();
          heading = undefined;
        } else if (name === 'pre') {
          flush();
          pre = Math.max(0, pre - 1);
        } else if (name === 'td' || name === 'th') {
          const table = tables[tables.length - 1];
          const text = buffer.join('');
          buffer = [];
          if (table) {
            table.row.push([...(table.cell ?? []), text].join(' '));
            table.cell = undefined;
          }
        } else if (name === 'tr') {
          const table = tables[tables.length - 1];
          if (table && tables.length === 1) out.row(table.row);
          else if (table) tables[tables.length - 2]!.cell?.push(table.row.join(' ; '));
        } else if (name === 'table') {
          tables.pop();
          out.endTable();
        } else if (BLOCKS.has(name)) flush();
      },
    },
    { maxDepth: limits.maxDepth, html: true },
  );
  flush();
  return out.text();
}
