/**
 * Fetches (when needed) and test-loads embedding models for an image:
 *
 *   node --import tsx deploy/docker/fetch-model.ts <models dir> <model>...
 *
 * A model already in <models dir> (a directory such as memex-glove-100d) is only test-loaded. A
 * Hugging Face id is downloaded by transformers.js into <models dir>/.cache/<id> (the indexer's
 * own cache layout), then loaded again with remote models disallowed, as the indexer runs.
 */
import { loadEmbedder } from '@memex/indexer/embedding/embedder';

const [modelsDir, ...models] = process.argv.slice(2);
if (!modelsDir || models.length === 0) {
  console.error('usage: fetch-model.ts <models dir> <model>...');
  process.exit(2);
}

for (const model of models) {
  const started = Date.now();
  const fetched = await loadEmbedder({ model, modelsDir, allowRemote: true });
  await fetched.dispose();
  const offline = await loadEmbedder({ model, modelsDir, allowRemote: false });
  const [vector] = await offline.embed(['container ships unload at the harbour'], 'document');
  await offline.dispose();
  if (!vector || vector.length !== offline.dimension || !vector.some((x) => x !== 0)) {
    throw new Error(`model ${model} loaded but produced no usable vector`);
  }
  console.log(`[fetch-model] ${model}: ${offline.dimension} dimensions, loads offline from ${modelsDir} (${Date.now() - started} ms)`);
}
