/**
 * Sanity checks on the real default model. Needs `pnpm --filter @memex/indexer build:model`
 * (writes <repo>/models/memex-glove-100d); skipped with a message when it is not built.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { AutoTokenizer } from '@huggingface/transformers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { DEFAULT_EMBEDDING_MODEL, loadEmbedder } from './embedder.js';
import type { Embedder } from './port.js';
import { readStamp } from './staticModel/build.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');
const modelsDir = path.join(repoRoot, 'models');
const modelDir = path.join(modelsDir, DEFAULT_EMBEDDING_MODEL);
const built = fs.existsSync(path.join(modelDir, 'memex-build.json')) && fs.existsSync(path.join(modelDir, 'onnx', 'model.onnx'));

if (!built) {
  console.warn(
    `[gloveModel.int.test] SKIPPED: ${modelDir} is not built. Run "pnpm --filter @memex/indexer build:model" to enable these tests.`,
  );
}

const cosine = (a: Float32Array, b: Float32Array) => a.reduce((s, x, k) => s + x * b[k]!, 0);

describe.skipIf(!built)(`real model ${DEFAULT_EMBEDDING_MODEL}`, () => {
  let embedder: Embedder;
  beforeAll(async () => {
    embedder = await loadEmbedder({ model: DEFAULT_EMBEDDING_MODEL, modelsDir, allowRemote: false });
  });
  afterAll(async () => {
    await embedder?.dispose();
  });

  it('has dimension 100 and unit-length outputs', async () => {
    expect(embedder.dimension).toBe(100);
    const [v] = await embedder.embed(['A short sentence about nothing in particular.'], 'document');
    expect(v!.length).toBe(100);
    expect(Math.hypot(...v!)).toBeCloseTo(1, 5);
  });

  it('stores its table as float16, scaled so that no value is subnormal or flushed to zero', () => {
    const stamp = readStamp(modelDir)!;
    expect(stamp.table).toMatchObject({ dtype: 'float16', subnormal: 0, underflowed: 0 });
    expect(stamp.table.maxAbs * stamp.table.scale).toBeLessThan(2 ** 14);
    // Two bytes per value, plus well under 1% for the graph and metadata.
    const rows = stamp.vocabulary.keptWords + stamp.vocabulary.specialTokens;
    expect(fs.statSync(path.join(modelDir, 'onnx', 'model.onnx')).size).toBeLessThan(rows * 100 * 2 * 1.01);
  });

  it('ranks related sentences above unrelated ones', async () => {
    const [wing, airplane, stocks] = await embedder.embed(
      ['the aircraft wing lift', 'aerodynamic lift of an airplane wing', 'the stock market fell sharply'],
      'document',
    );
    expect(cosine(wing!, airplane!)).toBeGreaterThan(cosine(wing!, stocks!));

    const [q, relevant, irrelevant] = await embedder.embed(
      ['how do I bake bread at home', 'a simple recipe for homemade sourdough loaves', 'quarterly earnings beat analyst expectations'],
      'query',
    );
    expect(cosine(q!, relevant!)).toBeGreaterThan(cosine(q!, irrelevant!));

    const [cat, kitten, treaty] = await embedder.embed(['the cat sat on the mat', 'a kitten slept on the rug', 'the treaty was ratified by parliament'], 'document');
    expect(cosine(cat!, kitten!)).toBeGreaterThan(cosine(cat!, treaty!));
  });

  it('returns a finite zero vector when no word is known', async () => {
    const [empty, unknown] = await embedder.embed(['', 'qwxzv zzkqj'], 'document');
    expect(empty!.every((x) => x === 0)).toBe(true);
    expect(unknown!.every((x) => x === 0)).toBe(true);
  });

  it('tokenizes every vocabulary word to its own id with transformers.js', async () => {
    const tokenizer = await AutoTokenizer.from_pretrained(modelDir, { local_files_only: true });
    const vocab = tokenizer.get_vocab() as Record<string, number> | Map<string, number>;
    const entries = vocab instanceof Map ? [...vocab.entries()] : Object.entries(vocab);
    expect(entries.length).toBeGreaterThan(300_000);
    const mismatches: string[] = [];
    for (const [word, id] of entries) {
      if (id < 4) continue;
      const ids = tokenizer.encode(word, { add_special_tokens: false });
      if (ids.length !== 1 || ids[0] !== id) mismatches.push(`${word} -> ${ids.join(',')}`);
    }
    expect(mismatches.slice(0, 20)).toEqual([]);
  }, 120_000);
});
