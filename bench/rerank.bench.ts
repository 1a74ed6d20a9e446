/**
 * Reranking latency: what reranking adds to one search, for N fused candidates of ~1,000 chars.
 *
 *   tsx bench/rerank.bench.ts [--candidates 30] [--runs 50] [--model <cross-encoder dir>]
 *
 * Rows: the local transformers.js adapter on the tiny cross-encoder the tests build (pipeline and
 * tokenizer overhead, no real model weight), or on `--model` (e.g. an ONNX export of
 * ms-marco-MiniLM-L-6-v2 under MEMEX_MODELS_DIR) when given; and the remote adapter against the
 * scripted peer over loopback HTTP (client, JSON and HTTP overhead, not a server's inference).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { startOpenAiPeer } from '@memex/testing';
import { LocalReranker } from '../services/indexer/src/reranking/local';
import type { Reranker } from '../services/indexer/src/reranking/port';
import { RemoteReranker } from '../services/indexer/src/reranking/remote';
import { rerankHits } from '../services/indexer/src/reranking/rerank';
import { TINY_CROSS_ENCODER_WORDS, buildTinyCrossEncoder } from '../services/indexer/src/reranking/tinyCrossEncoder';
import { percentile, printTable } from './support/stats';

const { values } = parseArgs({
  options: { candidates: { type: 'string', default: '30' }, runs: { type: 'string', default: '50' }, model: { type: 'string' } },
});
const candidates = Number(values.candidates);
const runs = Number(values.runs);

const words = TINY_CROSS_ENCODER_WORDS;
const passage = (i: number) => Array.from({ length: 180 }, (_, k) => words[(i * 7 + k * 3) % words.length]).join(' ');
const hits = Array.from({ length: candidates }, (_, i) => ({ content: passage(i), memoTitle: `Memo ${i}`, distance: i / candidates }));

async function measure(name: string, reranker: Reranker): Promise<[string, string]> {
  for (let i = 0; i < 3; i++) await rerankHits(reranker, 'cat market shares', hits, 10);
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    await rerankHits(reranker, 'cat market shares', hits, 10);
    times.push(performance.now() - started);
  }
  return [name, `p50 ${percentile(times, 50).toFixed(1)} ms   p95 ${percentile(times, 95).toFixed(1)} ms   (${candidates} candidates, ${runs} runs)`];
}

const rows: [string, string][] = [];
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'memex-rerank-bench-'));
const peer = await startOpenAiPeer();
try {
  buildTinyCrossEncoder(path.join(dir, 'tiny-cross-encoder'));
  const tiny = await LocalReranker.load({ model: 'tiny-cross-encoder', modelsDir: dir });
  rows.push(await measure('local, tiny cross-encoder (overhead only)', tiny));
  await tiny.dispose();
  if (values.model) {
    const real = await LocalReranker.load({ model: values.model, modelsDir: process.env.MEMEX_MODELS_DIR ?? 'models' });
    rows.push(await measure(`local, ${values.model}`, real));
    await real.dispose();
  }
  rows.push(await measure('remote, Cohere shape, loopback peer', new RemoteReranker({ api: 'cohere', baseUrl: peer.url })));
  rows.push(await measure('remote, TEI shape, loopback peer', new RemoteReranker({ api: 'tei', baseUrl: peer.root })));
  printTable('Reranking latency per search', rows);
} finally {
  await peer.close();
  fs.rmSync(dir, { recursive: true, force: true });
}
