import { readFileSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '../../test/support/paths';

/** Real technical prose: consecutive Vaswani abstracts, cut at a sentence near the target length. */
export function memoTexts(count: number, chars: number): string[] {
  const lines = readFileSync(path.join(REPO_ROOT, '..', 'shared', 'eval', 'vaswani', 'corpus.jsonl'), 'utf8').trim().split('\n');
  const docs = lines.map((l) => (JSON.parse(l) as { text: string }).text);
  const out: string[] = [];
  let i = 0;
  while (out.length < count) {
    let text = '';
    while (text.length < chars) text += `${docs[i++ % docs.length]!.trim()}.\n\n`;
    const cut = text.lastIndexOf('.', chars + 100);
    out.push(text.slice(0, cut > chars / 2 ? cut + 1 : chars));
  }
  return out;
}
