/**
 * The static model run by StaticEmbedder (tokenizers.js + a table lookup) gives exactly the vectors
 * transformers.js + onnxruntime give for the same model: on real prose and on the edges of
 * tokenisation (accents, CJK, punctuation, control characters, unknown words, empty text, prefixes,
 * truncation at model_max_length). Needs the built default model (`pnpm install` builds it).
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../../../test/support/paths';
import { DEFAULT_EMBEDDING_MODEL, loadEmbedder } from './embedder';
import type { Embedder } from './port';
import { StaticEmbedder } from './staticEmbedder';

const modelsDir = path.join(REPO_ROOT, 'models');
const built = fs.existsSync(path.join(modelsDir, DEFAULT_EMBEDDING_MODEL, 'memex-build.json'));
if (!built) console.warn(`[staticEmbedder.int.test] SKIPPED: ${DEFAULT_EMBEDDING_MODEL} is not built (pnpm --filter @memex/indexer build:model)`);

const prose = ['cranfield', 'vaswani'].flatMap((name) =>
  fs
    .readFileSync(path.join(REPO_ROOT, '..', 'shared', 'eval', name, 'corpus.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .slice(0, 300)
    .map((l) => (JSON.parse(l) as { text: string }).text),
);
const edges = [
  '',
  ' ',
  'xyzzy qwertyuiop',
  'Café naïve résumé Ångström façade',
  '東京タワーは高い。北京 and Beijing',
  'Hello,world!!! (parenthesised) [bracketed] {braced} «quoted» — dashes – and ‘curly’ “quotes”',
  'tabs\tand\nnewlines\r\nand\u0000control\u0007chars\u200bzero-width',
  'UPPER lower MiXeD 12345 3.14159 1,000,000 e=mc^2 x_1 a-b a/b',
  'emoji 🚀🔥 and symbols ©®™ ∑∫√ ½',
  "don't won't it's O'Brien's rock'n'roll",
  'unbelievably antidisestablishmentarianism pneumonoultramicroscopicsilicovolcanoconiosis',
  Array.from({ length: 9000 }, (_, i) => ['turbine', 'blade', 'heat', 'xqzv', 'flow'][i % 5]).join(' '), // > 8192 tokens
];

describe.skipIf(!built)('StaticEmbedder: the static model without onnxruntime', () => {
  let viaOnnx: Embedder;
  let direct: Embedder;
  beforeAll(async () => {
    const options = { model: DEFAULT_EMBEDDING_MODEL, modelsDir, allowRemote: false, queryPrefix: 'query: ', documentPrefix: '' };
    viaOnnx = await loadEmbedder({ ...options, runtime: 'onnxruntime' });
    direct = await loadEmbedder(options);
  }, 60_000);
  afterAll(async () => {
    await viaOnnx?.dispose();
    await direct?.dispose();
  });

  it('is what loadEmbedder picks for a static model, with its dimension', () => {
    expect(direct).toBeInstanceOf(StaticEmbedder);
    expect(viaOnnx).not.toBeInstanceOf(StaticEmbedder);
    expect(direct.dimension).toBe(viaOnnx.dimension);
  });

  it.each([['document'], ['query']] as const)('gives bit-identical %s vectors to transformers.js + onnxruntime', async (kind) => {
    const texts = [...prose, ...edges];
    const [expected, actual] = await Promise.all([viaOnnx.embed(texts, kind), direct.embed(texts, kind)]);
    expect(actual).toHaveLength(texts.length);
    for (let i = 0; i < texts.length; i++) expect(actual[i], JSON.stringify(texts[i]!.slice(0, 80))).toEqual(expected[i]);
    // Not all zero: the comparison is of real vectors (the edge cases include all-zero ones).
    expect(actual.filter((v) => v.some((x) => x !== 0)).length).toBeGreaterThan(prose.length);
  });

  it('lets other work run between batches of a long call', async () => {
    const small = await loadEmbedder({ model: DEFAULT_EMBEDDING_MODEL, modelsDir, allowRemote: false, batchSize: 8 });
    let turns = 0;
    let counting = true;
    const tick = () => {
      turns += 1;
      if (counting) setImmediate(tick);
    };
    setImmediate(tick);
    // (long enough to take several turns' budgets: ~20-60 ms of tokenizing and summing, at 2 ms a turn)
    const texts = Array.from({ length: 4 }, () => prose).flat();
    const vectors = await small.embed(texts, 'document');
    counting = false;
    expect(vectors).toHaveLength(texts.length);
    expect(turns).toBeGreaterThanOrEqual(5);
    expect(vectors.slice(0, 80)).toEqual(await direct.embed(prose.slice(0, 80), 'document'));
  });

  it('keeps the table in the file: a row cache of any size gives the same vectors', async () => {
    const dir = path.join(modelsDir, DEFAULT_EMBEDDING_MODEL);
    const prefixes = { query: 'query: ', document: '' };
    const oneRow = StaticEmbedder.open(DEFAULT_EMBEDDING_MODEL, dir, prefixes, 1)!;
    try {
      const texts = [...prose.slice(0, 100), ...edges];
      expect(await oneRow.embed(texts, 'document')).toEqual(await direct.embed(texts, 'document'));
    } finally {
      await oneRow.dispose();
    }
    await expect(oneRow.embed(['after dispose'], 'query')).rejects.toThrow(/disposed/);
  });
});
