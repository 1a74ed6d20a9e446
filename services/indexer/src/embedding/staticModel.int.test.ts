/**
 * Builds static models from a tiny synthetic vocabulary, loads them through transformers.js via
 * loadEmbedder, and checks the vectors against the expected weighted word means: exactly (up to
 * float32 arithmetic) against the table as stored, float16 or float32, and within float16's
 * precision against the unrounded float32 weighting.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { AutoTokenizer, env } from '@huggingface/transformers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { EmbeddingModelNotFoundError, loadEmbedder } from './embedder.js';
import type { Embedder } from './port.js';
import { BUILDER_VERSION, buildStaticModel, ensureStaticModel, readStamp, selectVocabulary, STAMP_FILE } from './staticModel/build.js';
import { float16Value } from '../numeric/float16.js';
import { toFloat16Table } from './staticModel/float16Table.js';
import type { StaticModelSource } from './staticModel/source.js';
import { applyWeighting, zipfProbabilities } from './staticModel/weighting.js';

const DIM = 8;
// Source order = frequency order. Includes entries the tokenizer can never produce.
const WORDS = [
  'the', 'of', 'and', 'a', 'to', 'in', 'is', 'on', ',', '.', 'was', 'for',
  'cat', 'dog', 'e-mail', 'kitten', 'puppy', 'sat', 'mat', 'barked', 'Hello',
  'plane', 'wing', 'lift', 'pilot', 'flew', 'new york',
  'stock', 'market', 'bank', 'money', 'fell', 'shares', 'price', '1990', 'sharply',
];
const TOPIC: Record<string, number> = {
  cat: 0, dog: 0, kitten: 0, puppy: 0, sat: 0, mat: 0, barked: 0,
  plane: 1, wing: 1, lift: 1, pilot: 1, flew: 1,
  stock: 2, market: 2, bank: 2, money: 2, fell: 2, shares: 2, price: 2, sharply: 2,
};

function syntheticSource(version = '1.0.0'): StaticModelSource {
  const vectors = new Float32Array(WORDS.length * DIM);
  WORDS.forEach((word, i) => {
    const topic = TOPIC[word];
    for (let k = 0; k < DIM; k++) {
      // Shared "frequent word" direction in dim 7, a topic direction, and a word-specific wiggle.
      let v = k === 7 ? 1.5 : 0;
      if (topic !== undefined && k === topic) v += 2;
      v += Math.sin(i * 1.7 + k * 0.9) * 0.4;
      vectors[i * DIM + k] = v;
    }
  });
  return { name: 'synthetic-vectors', version, dimension: DIM, words: WORDS, vectors, provenance: 'Hand-made test vectors.' };
}

/** Expected per-word vectors after the builder's weighting, keyed by word. */
function expectedWordVectors(source: StaticModelSource, options: { sifA: number; removePrincipalComponent: boolean }) {
  const { words, ranks } = selectVocabulary(source.words);
  const rows = new Float32Array(words.length * DIM);
  ranks.forEach((rank, i) => rows.set(source.vectors.subarray((rank - 1) * DIM, rank * DIM), i * DIM));
  applyWeighting(rows, DIM, ranks, source.words.length, options);
  return new Map(words.map((w, i) => [w, rows.subarray(i * DIM, (i + 1) * DIM)]));
}

/** The same vectors as stored in a float16 build: scaled by the builder's power of two and rounded. */
function float16Rounded(vectors: Map<string, Float32Array>): { vectors: Map<string, Float32Array>; scale: number } {
  const words = [...vectors.keys()];
  const flat = new Float32Array(words.length * DIM);
  words.forEach((w, i) => flat.set(vectors.get(w)!, i * DIM));
  const { bits, scale } = toFloat16Table(flat);
  const decoded = Float32Array.from(bits, float16Value);
  return { vectors: new Map(words.map((w, i) => [w, decoded.subarray(i * DIM, (i + 1) * DIM)])), scale };
}

/**
 * Largest per-component difference a float16 table can make to a unit output vector here: each
 * stored value is within 2^-11 (relative) of the float32 one, so the sum moves by at most
 * 2^-11 * sum |v| per component, and normalising at most doubles the relative change.
 */
const FLOAT16_TOLERANCE = 2e-3;

function normalisedMean(vectors: Map<string, Float32Array>, tokens: string[]): Float32Array {
  const sum = new Float64Array(DIM);
  for (const t of tokens) vectors.get(t)!.forEach((x, k) => (sum[k] = sum[k]! + x));
  const norm = Math.hypot(...sum);
  return Float32Array.from(sum, (x) => x / norm);
}

function expectClose(actual: Float32Array, expected: Float32Array, tolerance = 1e-5) {
  expect(actual.length).toBe(expected.length);
  actual.forEach((x, k) => expect(Math.abs(x - expected[k]!)).toBeLessThan(tolerance));
}

const cosine = (a: Float32Array, b: Float32Array) => a.reduce((s, x, k) => s + x * b[k]!, 0);

let tmp: string;
beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'memex-static-model-'));
});
afterAll(() => {
  fs.rmSync(tmp, { recursive: true, force: true });
});

describe('static model built from a synthetic vocabulary', () => {
  let embedder: Embedder;
  let modelDir: string;
  const source = syntheticSource();
  const unrounded = expectedWordVectors(source, { sifA: 1e-4, removePrincipalComponent: true });
  // The default build stores the table as float16.
  const { vectors: expected, scale } = float16Rounded(unrounded);

  beforeAll(async () => {
    modelDir = path.join(tmp, 'synthetic-model');
    const result = ensureStaticModel(modelDir, source, () => source);
    expect(result.status).toBe('built');
    embedder = await loadEmbedder({ model: modelDir, modelsDir: path.join(tmp, 'unused-models-dir'), allowRemote: false });
  });
  afterAll(async () => {
    await embedder?.dispose();
  });

  it('writes the Hugging Face layout and a build stamp', () => {
    for (const f of ['config.json', 'tokenizer.json', 'tokenizer_config.json', 'onnx/model.onnx', 'README.md', 'memex-build.json']) {
      expect(fs.existsSync(path.join(modelDir, f)), f).toBe(true);
    }
    const stamp = readStamp(modelDir)!;
    expect(stamp.builderVersion).toBe(BUILDER_VERSION);
    expect(stamp.vocabulary).toMatchObject({ sourceWords: WORDS.length, keptWords: WORDS.length - 3, specialTokens: 4 });
    expect(stamp.options).toEqual({ sifA: 1e-4, removePrincipalComponent: true, modelMaxLength: 8192, dtype: 'float16' });
    expect(stamp.table).toMatchObject({ dtype: 'float16', scale, subnormal: 0, underflowed: 0 });
    expect(stamp.table.maxAbs * stamp.table.scale).toBeGreaterThanOrEqual(2 ** 13);
    expect(stamp.table.maxAbs * stamp.table.scale).toBeLessThan(2 ** 14);
    expect(fs.readFileSync(path.join(modelDir, 'README.md'), 'utf8')).toContain(`stored\nas float16 (round to nearest, ties to even) after multiplying the weighted vectors by 2^${Math.log2(scale)}`);
    const config = JSON.parse(fs.readFileSync(path.join(modelDir, 'config.json'), 'utf8')) as Record<string, unknown>;
    expect(config).toMatchObject({ model_type: 'bert', hidden_size: DIM, vocab_size: WORDS.length - 3 + 4 });
    // No build directories left behind.
    expect(fs.readdirSync(tmp).filter((f) => f.startsWith('.'))).toEqual([]);
  });

  it('reports the model dimension', () => {
    expect(embedder.dimension).toBe(DIM);
    expect(embedder.modelId).toBe(modelDir);
  });

  it('returns the normalised mean of the weighted word vectors', async () => {
    const [v] = await embedder.embed(['The cat sat on the mat.'], 'document');
    const tokens = ['the', 'cat', 'sat', 'on', 'the', 'mat', '.'];
    expectClose(v!, normalisedMean(expected, tokens));
    expectClose(v!, normalisedMean(unrounded, tokens), FLOAT16_TOLERANCE);
    expect(Math.hypot(...v!)).toBeCloseTo(1, 5);
  });

  it('ignores unknown words and unreachable vocabulary, and is case- and accent-insensitive', async () => {
    const [a, b, c] = await embedder.embed(['the cat sat', 'THE Cät zorblax sat', 'the cat e-mail sat'], 'query');
    expectClose(b!, a!);
    // "e-mail" is split into "e", "-", "mail", none of which is in the vocabulary.
    expectClose(c!, a!);
  });

  it('gives the same vectors in a batch as one at a time, in input order', async () => {
    const texts = ['the stock market fell sharply', 'a pilot flew the plane', 'the dog barked', 'money in the bank', 'cat'];
    const batched = await embedder.embed(texts, 'document');
    for (let i = 0; i < texts.length; i++) {
      const [single] = await embedder.embed([texts[i]!], 'document');
      expectClose(batched[i]!, single!, 1e-6);
    }
    expect(cosine(batched[0]!, batched[3]!)).toBeGreaterThan(cosine(batched[0]!, batched[2]!));
  });

  it('batches internally without changing results', async () => {
    const small = await loadEmbedder({ model: modelDir, modelsDir: tmp, allowRemote: false, batchSize: 2 });
    try {
      const texts = ['the cat sat', 'the plane', 'stock price fell', 'the mat', 'shares and money'];
      const a = await small.embed(texts, 'document');
      const b = await embedder.embed(texts, 'document');
      a.forEach((v, i) => expectClose(v, b[i]!, 1e-6));
    } finally {
      await small.dispose();
    }
  });

  it('returns finite all-zero vectors for empty and unknown-only texts', async () => {
    const out = await embedder.embed(['', '   ', 'zorblax quux', '東京', 'the cat'], 'document');
    for (const v of out.slice(0, 4)) {
      expect(v.every((x) => x === 0)).toBe(true);
    }
    expect(out[4]!.every(Number.isFinite)).toBe(true);
    expect(await embedder.embed([], 'document')).toEqual([]);
  });

  it('maps every kept word to exactly one token id with the transformers.js tokenizer', async () => {
    const tokenizer = await AutoTokenizer.from_pretrained(modelDir, { local_files_only: true });
    const vocab = tokenizer.get_vocab() as Record<string, number> | Map<string, number>;
    const entries = vocab instanceof Map ? [...vocab.entries()] : Object.entries(vocab);
    for (const [word, id] of entries) {
      if (word.startsWith('[')) continue;
      expect(tokenizer.encode(word, { add_special_tokens: false }), word).toEqual([id]);
    }
    expect(tokenizer.encode('cat', { add_special_tokens: true })).toEqual([2, entries.find(([w]) => w === 'cat')![1], 3]);
  });

  it('restores the global transformers.js env after loading', async () => {
    const before = { localModelPath: env.localModelPath, allowRemoteModels: env.allowRemoteModels, cacheDir: env.cacheDir, useFSCache: env.useFSCache };
    const other = await loadEmbedder({ model: 'synthetic-model', modelsDir: tmp, allowRemote: false });
    await other.dispose();
    expect({ localModelPath: env.localModelPath, allowRemoteModels: env.allowRemoteModels, cacheDir: env.cacheDir, useFSCache: env.useFSCache }).toEqual(before);
  });

  it('applies query and document prefixes', async () => {
    const prefixed = await loadEmbedder({ model: modelDir, modelsDir: tmp, allowRemote: false, queryPrefix: 'stock market: ' });
    try {
      const [q] = await prefixed.embed(['the cat'], 'query');
      const [d] = await prefixed.embed(['the cat'], 'document');
      const [ref] = await embedder.embed(['stock market: the cat'], 'document');
      expectClose(q!, ref!);
      expect(cosine(q!, d!)).toBeLessThan(0.999);
    } finally {
      await prefixed.dispose();
    }
  });
});

describe('SIF-only build (common component kept)', () => {
  it('matches a / (a + p(rank)) weighting computed independently', async () => {
    const source = syntheticSource();
    const dir = path.join(tmp, 'sif-only');
    buildStaticModel(source, dir, { sifA: 1e-3, removePrincipalComponent: false, dtype: 'float32' });
    const embedder = await loadEmbedder({ model: dir, modelsDir: tmp, allowRemote: false });
    try {
      const p = zipfProbabilities(WORDS.length);
      const weighted = (word: string) => {
        const rank = WORDS.indexOf(word) + 1;
        const w = 1e-3 / (1e-3 + p[rank - 1]!);
        return Float32Array.from(source.vectors.subarray((rank - 1) * DIM, rank * DIM), (x) => x * w);
      };
      const tokens = ['a', 'pilot', 'flew', 'the', 'plane'];
      const sum = new Float64Array(DIM);
      for (const t of tokens) weighted(t).forEach((x, k) => (sum[k] = sum[k]! + x));
      const norm = Math.hypot(...sum);
      const [v] = await embedder.embed(['A pilot flew the plane'], 'document');
      expectClose(v!, Float32Array.from(sum, (x) => x / norm));
    } finally {
      await embedder.dispose();
    }
  });
});

describe('float16 and float32 tables', () => {
  it('give the same vectors within float16 precision, from a model half the size', async () => {
    const source = syntheticSource();
    const half = path.join(tmp, 'table-float16');
    const full = path.join(tmp, 'table-float32');
    const halfStamp = buildStaticModel(source, half, { dtype: 'float16' });
    const fullStamp = buildStaticModel(source, full, { dtype: 'float32' });
    expect(fullStamp.table).toEqual({ dtype: 'float32', scale: 1, maxAbs: halfStamp.table.maxAbs, subnormal: 0, underflowed: 0 });
    const rows = fullStamp.vocabulary.keptWords + fullStamp.vocabulary.specialTokens;
    // Two bytes less per value; the Cast node and the extra metadata cost a few hundred bytes.
    expect(Math.abs(fullStamp.files['onnx/model.onnx']! - halfStamp.files['onnx/model.onnx']! - rows * DIM * 2)).toBeLessThan(300);
    const a = await loadEmbedder({ model: half, modelsDir: tmp, allowRemote: false });
    const b = await loadEmbedder({ model: full, modelsDir: tmp, allowRemote: false });
    try {
      const unrounded = expectedWordVectors(source, { sifA: 1e-4, removePrincipalComponent: true });
      const texts = ['the stock market fell sharply', 'A pilot flew the plane.', 'the dog barked', 'money in the bank', 'cat', 'kitten and puppy on a mat'];
      const va = await a.embed(texts, 'document');
      const vb = await b.embed(texts, 'document');
      let worst = 0;
      texts.forEach((text, i) => {
        const tokens = text.toLowerCase().match(/[a-z]+|[.]/g)!;
        expectClose(vb[i]!, normalisedMean(unrounded, tokens));
        expectClose(va[i]!, vb[i]!, FLOAT16_TOLERANCE);
        expect(cosine(va[i]!, vb[i]!)).toBeGreaterThan(0.99999);
        va[i]!.forEach((x, k) => (worst = Math.max(worst, Math.abs(x - vb[i]![k]!))));
      });
      // Rounding is visible, but far below the tolerance.
      expect(worst).toBeGreaterThan(0);
      expect(worst).toBeLessThan(FLOAT16_TOLERANCE / 4);
    } finally {
      await a.dispose();
      await b.dispose();
    }
  });
});

describe('ensureStaticModel', () => {
  it('skips up-to-date builds and rebuilds on --force, new source versions or new options', () => {
    const dir = path.join(tmp, 'ensure');
    let loads = 0;
    const load = (version: string) => () => {
      loads++;
      return syntheticSource(version);
    };
    expect(ensureStaticModel(dir, { name: 'synthetic-vectors', version: '1' }, load('1')).status).toBe('built');
    expect(ensureStaticModel(dir, { name: 'synthetic-vectors', version: '1' }, load('1')).status).toBe('up-to-date');
    expect(loads).toBe(1);
    expect(ensureStaticModel(dir, { name: 'synthetic-vectors', version: '1' }, load('1'), { force: true }).status).toBe('built');
    expect(ensureStaticModel(dir, { name: 'synthetic-vectors', version: '2' }, load('2')).status).toBe('built');
    expect(ensureStaticModel(dir, { name: 'synthetic-vectors', version: '2' }, load('2'), { sifA: 1e-3 }).status).toBe('built');
    expect(loads).toBe(4);
    expect(readStamp(dir)!.options.sifA).toBe(1e-3);
    expect(ensureStaticModel(dir, { name: 'synthetic-vectors', version: '2' }, load('2'), { sifA: 1e-3, dtype: 'float32' }).status).toBe('built');
    expect(ensureStaticModel(dir, { name: 'synthetic-vectors', version: '2' }, load('2'), { sifA: 1e-3, dtype: 'float32' }).status).toBe('up-to-date');
    expect(readStamp(dir)!.table.dtype).toBe('float32');
    expect(loads).toBe(5);
    // A float32 model from builder version 1 (stamp without a dtype) is rebuilt as float16.
    const stampFile = path.join(dir, STAMP_FILE);
    const old = JSON.parse(fs.readFileSync(stampFile, 'utf8')) as { builderVersion: string; options: Record<string, unknown> };
    old.builderVersion = '1';
    delete old.options.dtype;
    fs.writeFileSync(stampFile, JSON.stringify(old));
    expect(ensureStaticModel(dir, { name: 'synthetic-vectors', version: '2' }, load('2'), { sifA: 1e-3 }).status).toBe('built');
    expect(readStamp(dir)!).toMatchObject({ builderVersion: BUILDER_VERSION, options: { dtype: 'float16' }, table: { dtype: 'float16' } });
    expect(loads).toBe(6);
    expect(fs.readdirSync(tmp).filter((f) => f.startsWith('.'))).toEqual([]);
  });

  it('leaves no partial output when the build fails', () => {
    const dir = path.join(tmp, 'failing');
    const broken = () => ({ ...syntheticSource(), vectors: new Float32Array(3) });
    expect(() => ensureStaticModel(dir, { name: 'synthetic-vectors', version: '1' }, broken)).toThrow(/values for/);
    expect(fs.existsSync(dir)).toBe(false);
    expect(fs.readdirSync(tmp).filter((f) => f.startsWith('.'))).toEqual([]);
  });
});

describe('missing models', () => {
  it('names the model, the directory searched and how to get it', async () => {
    const modelsDir = path.join(tmp, 'empty-models');
    await expect(loadEmbedder({ model: 'memex-glove-100d', modelsDir, allowRemote: false })).rejects.toThrow(EmbeddingModelNotFoundError);
    await expect(loadEmbedder({ model: 'memex-glove-100d', modelsDir, allowRemote: false })).rejects.toThrow(
      new RegExp(`memex-glove-100d.*${path.join(modelsDir, 'memex-glove-100d').replaceAll('/', '\\/')}.*build:model`),
    );
    await expect(loadEmbedder({ model: 'Xenova/all-MiniLM-L6-v2', modelsDir, allowRemote: false })).rejects.toThrow(/MEMEX_ALLOW_REMOTE_MODELS=true/);
    const half = path.join(tmp, 'half-model');
    fs.mkdirSync(half);
    fs.writeFileSync(path.join(half, 'config.json'), '{}');
    await expect(loadEmbedder({ model: half, modelsDir, allowRemote: true })).rejects.toThrow(/missing tokenizer\.json, tokenizer_config\.json, onnx\/model\.onnx/);
  });
});
