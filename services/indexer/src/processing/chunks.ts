import { chunkId } from '@memex/runtime';
import { chunkText, termFrequencies, type ChunkOptions } from '@memex/text';
import type { Embedder } from '../embedding/embedder';
import type { IndexedChunk } from '../searchIndex/port';

export interface TextChunk {
  chunkId: string;
  index: number;
  content: string;
  /** `content` is `text.slice(start, end)` of the memo revision. */
  start: number;
  end: number;
}

/** Splits a memo revision into chunks with ids that depend only on (memo, revision, position). */
export function chunkMemo(memoId: string, revision: number, content: string, options: ChunkOptions): TextChunk[] {
  return chunkText(content, options).map((c) => ({ chunkId: chunkId(memoId, revision, c.index), index: c.index, content: c.content, start: c.start, end: c.end }));
}

/** Dense vectors from the model, term frequencies (for BM25) from the analyzer. */
export async function embedChunks(embedder: Embedder, chunks: readonly TextChunk[]): Promise<IndexedChunk[]> {
  const dense = await embedder.embed(
    chunks.map((c) => c.content),
    'document',
  );
  return chunks.map((c, i) => ({ chunkId: c.chunkId, index: c.index, content: c.content, dense: dense[i]!, terms: termFrequencies(c.content) }));
}
