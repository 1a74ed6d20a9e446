/**
 * The local cross-encoder adapter, run through transformers.js on a tiny cross-encoder built here:
 * a BERT-layout directory whose ONNX graph scores a (query, passage) pair by how many distinct
 * words they share (logit = 2·shared − 1). Real ms-marco models load the same way.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTinyCrossEncoder } from './tinyCrossEncoder';
import { LocalReranker } from './local';
import { sigmoid } from './port';
import { rerankHits } from './rerank';

describe('local cross-encoder reranker (transformers.js)', () => {
  let root: string;
  let reranker: LocalReranker;
  beforeAll(async () => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'memex-reranker-'));
    buildTinyCrossEncoder(path.join(root, 'tiny-cross-encoder'));
    reranker = await LocalReranker.load({ model: 'tiny-cross-encoder', modelsDir: root, batchSize: 2 });
  }, 60_000);
  afterAll(async () => {
    await reranker?.dispose();
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('scores each (query, passage) pair through the model, in input order, across batches', async () => {
    const docs = ['the cat sat on the mat', 'stock market shares fell', 'the market for cat food', 'planes and pilots', ''];
    const scores = await reranker.score('cat market', docs);
    // Shared distinct words: 1, 1, 2, 0, 0 → sigmoid(2·shared − 1).
    expect(scores.map((s) => Number(s.toFixed(6)))).toEqual([1, 1, 2, 0, 0].map((n) => Number(sigmoid(2 * n - 1).toFixed(6))));
  });

  it('re-orders fused candidates by its scores', async () => {
    const hits = ['planes and pilots', 'the cat sat', 'cat food market'].map((content, i) => ({ content, memoTitle: '', distance: i / 10 }));
    const out = await rerankHits(reranker, 'cat market', hits, 2);
    expect(out.map((h) => h.content)).toEqual(['cat food market', 'the cat sat']);
  });

  it('says what is missing when the directory is not a model', async () => {
    await expect(LocalReranker.load({ model: 'nothing-here', modelsDir: root })).rejects.toThrow(/missing config.json/);
  });
});
