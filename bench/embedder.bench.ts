/**
 * Embedder benchmark: load time and sentences/s for batches of ~20-word sentences.
 *
 *   tsx bench/embedder.bench.ts [--model <id|dir>] [--sentences N] [--batch N] [--allow-remote]
 *
 * Defaults: the built-in model (memex-glove-100d) from MEMEX_MODELS_DIR or <repo>/models,
 * 3200 sentences in batches of 64. Build the model first: pnpm --filter @memex/indexer build:model
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

import { DEFAULT_EMBEDDING_MODEL } from '../services/indexer/src/embedding/embedder.js';
import { formatMeasurement, measureEmbedder } from '../services/indexer/src/embedding/measure.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { values } = parseArgs({
  options: {
    model: { type: 'string', default: process.env.MEMEX_EMBEDDING_MODEL ?? DEFAULT_EMBEDDING_MODEL },
    sentences: { type: 'string', default: '3200' },
    batch: { type: 'string', default: '64' },
    'allow-remote': { type: 'boolean', default: process.env.MEMEX_ALLOW_REMOTE_MODELS === 'true' },
  },
});

const batchSize = Number(values.batch);
const result = await measureEmbedder({
  load: {
    model: values.model,
    modelsDir: process.env.MEMEX_MODELS_DIR ?? path.join(repoRoot, 'models'),
    allowRemote: values['allow-remote'],
    batchSize,
  },
  sentences: Number(values.sentences),
  batchSize,
});
console.log(formatMeasurement(result));
console.log(`peak RSS ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MB`);
