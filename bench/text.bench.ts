/**
 * The text steps each memo goes through outside the embedder, per memo of `--chars` characters:
 * the indexer's chunking and BM25 term counts (of the memo's text whole; the indexer counts each
 * chunk's), the extractive agent's summary and keyphrases (its tags). With `--base <another
 * checkout>`, that tree's `@memex/text` runs beside this one's in the same process, step by step,
 * the trees' order alternating by round, and every output of the two is compared: a speed change
 * here must leave every chunk, term, summary and tag as it was.
 *
 *   pnpm bench:text [--memos 2000] [--chars 1500] [--rounds 7] [--base ../base]
 *   (git worktree add ../base <rev> && (cd ../base && pnpm install --frozen-lockfile --offline))
 *
 * The equality check also runs over every Cranfield and Vaswani document and judged query, and over
 * `--random` texts drawn from pieces that take the analyzer's and the sentence splitter's rarer
 * paths (accents, CJK, apostrophes of three kinds, hyphens of three kinds, decimals, abbreviations).
 * `--base .` (this tree against itself) shows the method's own spread: on 2026-11-29, with the
 * defaults, 0.98-1.03× for three steps and 0.79× for keyphrases (the step that allocates most), so
 * a keyphrase change needs several runs, or separate processes, to tell.
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import * as thisTree from '@memex/text';
import { seededRandom } from '@memex/testing';
import { REPO_ROOT } from '../test/support/paths';
import { loadCollection } from './support/eval';
import { memoTexts } from './support/memoTexts';
import { percentile, printTable } from './support/stats';

const { values } = parseArgs({
  options: {
    memos: { type: 'string', default: '2000' },
    chars: { type: 'string', default: '1500' },
    rounds: { type: 'string', default: '7' },
    random: { type: 'string', default: '20000' },
    base: { type: 'string' },
  },
});
const ROUNDS = Number(values.rounds);

type Text = typeof thisTree;
/** A step over one memo's text, as the services run it. */
type Step = (text: Text, content: string) => unknown;

const STEPS: Record<string, Step> = {
  'chunking (indexer)': (t, content) => t.chunkText(content),
  'BM25 term counts (indexer)': (t, content) => t.termFrequencies(content),
  'summary (agent)': (t, content) => t.summarize(content, { maxSentences: 3 }),
  'keyphrases (agent)': (t, content) => t.extractKeyphrases(content, { max: 8 }),
};

const trees: [string, Text][] = [['this', thisTree]];
if (values.base) {
  const entry = path.join(path.resolve(values.base), 'packages', 'text', 'src', 'index.ts');
  trees.unshift(['base', (await import(pathToFileURL(entry).href)) as Text]);
}

const memos = memoTexts(Number(values.memos), Number(values.chars));

// Same outputs, or the figures mean nothing.
if (trees.length === 2) {
  const random = seededRandom(13);
  const pieces = ['Café', 'naïve', "don't", "memo's", 'O’Brien', 'rockʼs', '3.14', 'v1.2.3', '1,000', 'state-of-the-art', 'a‐b', 'x‑y', 'a\u00a0b',
    '東京', 'タワー', '한국어', 'ﬁle', '½', '٣.٤', 'ΣΊΣΥΦΟΣ', 'İstanbul', 'Dr.', 'e.g.', 'U.S.A.', 'No. 5', '250 °C', 'THE', 'running',
    'relational', 'I', '7', "it's", '’', 'e\u0301', '## Heading', '- item', '1. item', '…', '?!', '。', '"Quoted."', '(see above).'];
  const separators = [' ', ' ', ' ', '', '. ', '\n', '\n\n', ', ', '\t'];
  const randomTexts = Array.from({ length: Number(values.random) }, () =>
    Array.from({ length: 1 + Math.floor(random() * 60) }, () => pieces[Math.floor(random() * pieces.length)]! + separators[Math.floor(random() * separators.length)]!).join(''),
  );
  const collections = ['cranfield', 'vaswani'].map(loadCollection);
  const texts = [...memos, ...collections.flatMap((c) => [...c.docs, ...c.queries].map((d) => d.text)), ...randomTexts];
  const outputs = (t: Text, s: string) => JSON.stringify([t.tokenizeWithOffsets(s), t.splitSentences(s), ...Object.values(STEPS).map((step) => step(t, s)), t.extractKeyphrases(s, { max: 30 })]);
  let differ = 0;
  for (const s of texts) {
    if (outputs(trees[0]![1], s) !== outputs(trees[1]![1], s) && differ++ < 3) console.error(`outputs differ for ${JSON.stringify(s.slice(0, 200))}`);
  }
  console.log(`outputs compared on ${texts.length} texts (${memos.length} memos, the eval collections' documents and queries, ${randomTexts.length} random): ${differ === 0 ? 'all the same' : `${differ} differ`}`);
  if (differ > 0) process.exitCode = 1;
}

/** µs per memo of one step over every memo, once. */
function run(step: Step, text: Text): number {
  const started = performance.now();
  for (const content of memos) step(text, content);
  return ((performance.now() - started) * 1000) / memos.length;
}

const rows: [string, string][] = [];
for (const [name, step] of Object.entries(STEPS)) {
  const times = new Map<string, number[]>(trees.map(([tree]) => [tree, []]));
  for (const [, text] of trees) run(step, text); // warm-up
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? trees : [...trees].reverse();
    for (const [tree, text] of order) times.get(tree)!.push(run(step, text));
  }
  const p50 = (tree: string) => percentile(times.get(tree)!, 50);
  const figures = trees.map(([tree]) => `${tree} ${p50(tree).toFixed(1)} µs`).join(', ');
  rows.push([name, trees.length === 2 ? `${figures} (${(p50('this') / p50('base')).toFixed(2)}×)` : figures]);
}
printTable(`text steps per memo of ~${values.chars} chars (${memos.length} memos, median of ${ROUNDS} rounds${trees.length === 2 ? `, base ${path.resolve(values.base!)} vs this tree ${REPO_ROOT}, alternating` : ''})`, rows);
