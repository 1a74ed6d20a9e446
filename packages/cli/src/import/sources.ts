import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import type { CreateMemoBody } from '@memex/client';
import { ERRORS } from '@memex/contracts';

/**
 * One thing to import, named by `item`: `line:<n>` (1-based) of an NDJSON file, or `file:<path>`
 * relative to the folder. A line that is not a JSON object is refused here, never sent.
 */
export type ImportItem =
  | { item: string; kind: 'memo'; body: CreateMemoBody }
  | { item: string; kind: 'file'; path: string; name: string }
  | { item: string; kind: 'invalid'; status: number; error: string };

/** Where an item came from, as the output names it: `{ line }` or `{ path }`. */
export function itemPlace(item: string): { line: number } | { path: string } {
  return item.startsWith('line:') ? { line: Number(item.slice(5)) } : { path: item.slice(5) };
}

export function describeItem(item: string): string {
  return item.startsWith('line:') ? `line ${item.slice(5)}` : item.slice(5);
}

/** The items of an NDJSON file (blank lines are not items), in file order. */
export function ndjsonItems(file: string): ImportItem[] {
  const items: ImportItem[] = [];
  const lines = readFileSync(file, 'utf8').split('\n');
  lines.forEach((raw, i) => {
    const line = raw.trim();
    if (line === '') return;
    const item = `line:${i + 1}`;
    let body: unknown;
    try {
      body = JSON.parse(line);
    } catch {
      items.push({ item, kind: 'invalid', status: ERRORS.InvalidJson.status, error: ERRORS.InvalidJson.text });
      return;
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      items.push({ item, kind: 'invalid', status: ERRORS.InvalidRequest.status, error: 'body must be a JSON object' });
      return;
    }
    items.push({ item, kind: 'memo', body: body as CreateMemoBody });
  });
  return items;
}

/**
 * Every regular file under `folder` (hidden files and folders skipped), sorted by relative path,
 * each uploaded as it is: the server decides which formats it takes.
 */
export function folderItems(folder: string, skip: ReadonlySet<string> = new Set()): ImportItem[] {
  const items: ImportItem[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      if (entry.name.startsWith('.')) continue;
      const path = join(dir, entry.name);
      if (skip.has(path)) continue;
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile() || (entry.isSymbolicLink() && statSync(path).isFile())) {
        items.push({ item: `file:${relative(folder, path).split(sep).join('/')}`, kind: 'file', path, name: entry.name });
      }
    }
  };
  walk(folder);
  return items;
}
