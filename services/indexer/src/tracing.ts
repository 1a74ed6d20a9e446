/**
 * Spans around the indexer's ports while tracing is on: the embedder's calls and the vector index's
 * writes and searches. Off, both are returned as they are.
 */
import { traceMethods } from '@memex/runtime';
import type { Embedder } from './embedding/port';
import type { SearchIndex } from './searchIndex/port';

export function traceEmbedder(embedder: Embedder): Embedder {
  return traceMethods(embedder, {
    embed: (texts: readonly string[], kind: 'query' | 'document') => ({
      name: `embed ${embedder.modelId}`,
      attributes: { 'gen_ai.operation.name': 'embeddings', 'gen_ai.request.model': embedder.modelId, 'memex.embed.kind': kind, 'memex.embed.texts': texts.length },
    }),
  });
}

export function traceIndex(index: SearchIndex): SearchIndex {
  const db = { 'db.system.name': `memex.${index.kind}` };
  return traceMethods(index, {
    putChunks: (model: string, _memo: unknown, chunks: readonly unknown[]) => ({ name: 'index putChunks', attributes: { ...db, 'db.operation.name': 'putChunks', 'memex.index.model': model, 'memex.index.chunks': chunks.length } }),
    putChunksOfMemos: (model: string, items: readonly unknown[]) => ({ name: 'index putChunksOfMemos', attributes: { ...db, 'db.operation.name': 'putChunksOfMemos', 'memex.index.model': model, 'db.operation.batch.size': items.length } }),
    applyCatalog: () => ({ name: 'index applyCatalog', attributes: { ...db, 'db.operation.name': 'applyCatalog' } }),
    applyCatalogs: (updates: readonly unknown[]) => ({ name: 'index applyCatalogs', attributes: { ...db, 'db.operation.name': 'applyCatalogs', 'db.operation.batch.size': updates.length } }),
    searchDense: (model: string) => ({ name: 'index searchDense', attributes: { ...db, 'db.operation.name': 'searchDense', 'memex.index.model': model } }),
    searchSparse: (model: string) => ({ name: 'index searchSparse', attributes: { ...db, 'db.operation.name': 'searchSparse', 'memex.index.model': model } }),
  });
}
