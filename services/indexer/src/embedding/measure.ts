/**
 * Embedding throughput measurement, shared by `bench/embedder.bench.ts` and any later benchmark
 * (e.g. ingestion) that wants embedder figures from the same run.
 */
import { loadEmbedder } from './embedder.js';
import type { EmbedderOptions } from './embedder.js';
import type { Embedder } from './port.js';

interface EmbedderMeasurement {
  modelId: string;
  dimension: number;
  /** Time for loadEmbedder (incl. the dimension probe); null when an already loaded embedder was measured. */
  loadMs: number | null;
  batchSize: number;
  sentences: number;
  meanWordsPerSentence: number;
  totalMs: number;
  sentencesPerSecond: number;
  batchMs: { median: number; p95: number; max: number };
}

interface MeasureEmbedderOptions {
  /** Measure this embedder (left open), or load one from `load` (disposed afterwards). */
  embedder?: Embedder;
  load?: EmbedderOptions;
  /** Sentences to embed in the timed run. Default 64 * 50. */
  sentences?: number;
  /** Texts per embed() call. Default 64. */
  batchSize?: number;
  /** Untimed embed() calls before timing. Default 3. */
  warmupBatches?: number;
  /** 'document' (default) or 'query'. */
  kind?: 'query' | 'document';
  /** Seed for the sentence generator. */
  seed?: number;
}

// Fragments for plausible ~20-word sentences on everyday and technical topics.
const SUBJECTS = [
  'The city council', 'Our support team', 'A small startup in Lisbon', 'The research group', 'My neighbour',
  'The new project manager', 'Several engineers', 'The local bakery', 'The database administrator', 'A visiting professor',
  'The school board', 'The airline', 'Her older brother', 'The hospital staff', 'The football club',
];
const VERBS = [
  'approved', 'rejected', 'reviewed', 'announced', 'postponed', 'documented', 'migrated', 'measured', 'repaired',
  'discussed', 'questioned', 'published', 'cancelled', 'tested', 'explained',
];
const OBJECTS = [
  'the annual budget for road repairs', 'a proposal for cheaper public transport', 'the nightly backup schedule',
  'the results of the wind tunnel experiment', 'the recipe for sourdough bread', 'a plan to renovate the old library',
  'the quarterly sales figures', 'the new search index', 'the contract with the cleaning company',
  'the security patch for the mail server', 'the route of the summer marathon', 'the treatment guidelines for asthma',
];
const TAILS = [
  'after a long meeting on Tuesday afternoon', 'because the previous version kept crashing under heavy load',
  'although several customers had complained about the delay', 'so that the archive could be rebuilt overnight',
  'before the heavy rain flooded the northern districts', 'while the stock market fell sharply in early trading',
  'once the auditors had checked every invoice twice', 'despite strong objections from the neighbouring villages',
  'as soon as the spare parts arrived from the supplier', 'without telling anyone in the finance department',
];
const EXTRAS = ['', '', '', '', ', which surprised most people', ', according to a statement on Friday', ', but nobody knows why'];

/** Small deterministic PRNG (xorshift32) so runs are comparable. */
function rng(seed: number): () => number {
  let state = seed >>> 0 || 0x9e3779b9;
  return () => {
    state ^= state << 13;
    state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5;
    state >>>= 0;
    return state / 0x1_0000_0000;
  };
}

/** `count` deterministic, varied English sentences of roughly 20 words. */
function realisticSentences(count: number, seed = 42): string[] {
  const next = rng(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    out.push(`${pick(SUBJECTS)} ${pick(VERBS)} ${pick(OBJECTS)} ${pick(TAILS)}${pick(EXTRAS)}.`);
  }
  return out;
}

function percentile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

/** Loads (optionally) and times an embedder on batches of realistic sentences. */
export async function measureEmbedder(options: MeasureEmbedderOptions): Promise<EmbedderMeasurement> {
  const batchSize = options.batchSize ?? 64;
  const count = options.sentences ?? batchSize * 50;
  const warmup = options.warmupBatches ?? 3;
  const kind = options.kind ?? 'document';
  let embedder = options.embedder;
  let loadMs: number | null = null;
  if (!embedder) {
    if (!options.load) throw new Error('measureEmbedder: pass either `embedder` or `load`');
    const t0 = performance.now();
    embedder = await loadEmbedder(options.load);
    loadMs = performance.now() - t0;
  }
  try {
    const sentences = realisticSentences(count, options.seed);
    const warmupTexts = realisticSentences(batchSize, (options.seed ?? 42) + 1);
    for (let i = 0; i < warmup; i++) await embedder.embed(warmupTexts, kind);
    const batchTimes: number[] = [];
    const started = performance.now();
    for (let i = 0; i < sentences.length; i += batchSize) {
      const t = performance.now();
      await embedder.embed(sentences.slice(i, i + batchSize), kind);
      batchTimes.push(performance.now() - t);
    }
    const totalMs = performance.now() - started;
    batchTimes.sort((a, b) => a - b);
    const words = sentences.reduce((n, s) => n + s.split(/\s+/).length, 0);
    return {
      modelId: embedder.modelId,
      dimension: embedder.dimension,
      loadMs,
      batchSize,
      sentences: sentences.length,
      meanWordsPerSentence: words / sentences.length,
      totalMs,
      sentencesPerSecond: sentences.length / (totalMs / 1000),
      batchMs: { median: percentile(batchTimes, 0.5), p95: percentile(batchTimes, 0.95), max: batchTimes[batchTimes.length - 1] ?? 0 },
    };
  } finally {
    if (!options.embedder) await embedder.dispose();
  }
}

/** One line per figure, for benchmark output. */
export function formatMeasurement(m: EmbedderMeasurement): string {
  return [
    `model ${m.modelId} (dimension ${m.dimension})`,
    `load ${m.loadMs === null ? 'n/a' : `${m.loadMs.toFixed(0)} ms`}`,
    `${m.sentencesPerSecond.toFixed(0)} sentences/s (${m.sentences} sentences, ~${m.meanWordsPerSentence.toFixed(1)} words each, batch ${m.batchSize})`,
    `batch latency median ${m.batchMs.median.toFixed(2)} ms, p95 ${m.batchMs.p95.toFixed(2)} ms, max ${m.batchMs.max.toFixed(2)} ms`,
  ].join('\n');
}
