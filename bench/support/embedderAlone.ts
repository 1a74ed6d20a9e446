import path from 'node:path';
import { DEFAULT_CHUNK_OPTIONS } from '@memex/text';
import { DEFAULT_EMBEDDING_MODEL, loadEmbedder } from '../../services/indexer/src/embedding/embedder';
import { chunkMemo, embedChunks } from '../../services/indexer/src/processing/chunks';
import { REPO_ROOT } from '../../test/support/paths';

/**
 * The embedder alone on these memos, in this process: chunked as the indexer chunks them, embedded
 * 64 chunk texts at a time (title + text, with term frequencies) after one warm-up call. Memos/s;
 * the stack's rate over this is the share of its work that is embedding.
 */
export async function embedderAloneMemosPerSecond(texts: readonly string[]): Promise<number> {
  const embedder = await loadEmbedder({ model: DEFAULT_EMBEDDING_MODEL, modelsDir: path.join(REPO_ROOT, 'models'), allowRemote: false });
  try {
    const chunks = await Promise.all(texts.map((text, i) => chunkMemo(`m${i}`, 1, text, DEFAULT_CHUNK_OPTIONS)));
    await embedChunks(embedder, 'warm-up', chunks[0]!);
    const t = performance.now();
    const all = chunks.flat();
    for (let i = 0; i < all.length; i += 64) await embedChunks(embedder, 'Memo', all.slice(i, i + 64));
    return texts.length / ((performance.now() - t) / 1000);
  } finally {
    await embedder.dispose();
  }
}
