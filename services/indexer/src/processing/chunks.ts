import { chunkId, mapInTurns, runInTurns } from '@memex/runtime';
import { chunkTextSteps, termFrequencies, type ChunkOptions } from '@memex/text';
import type { Embedder } from '../embedding/port';
import type { IndexedChunk, SearchIndex } from '../searchIndex/port';

export interface TextChunk {
  chunkId: string;
  index: number;
  content: string;
  /** `content` is `text.slice(start, end)` of the memo revision. */
  start: number;
  end: number;
}

/**
 * Splits a memo revision into chunks with ids that depend only on (memo, revision, position), in
 * turns (a 2 MB document took ~0.5 s of one turn to chunk; searches are answered meanwhile).
 */
export async function chunkMemo(memoId: string, revision: number, content: string, options: ChunkOptions): Promise<TextChunk[]> {
  const chunks = await runInTurns(chunkTextSteps(content, options));
  return mapInTurns(chunks, (c) => ({ chunkId: chunkId(memoId, revision, c.index), index: c.index, content: c.content, start: c.start, end: c.end }));
}

/**
 * What a chunk is indexed as: its memo's title, then its text. A chunk deep in a long memo often
 * never names its subject; the title does (docs/benchmarks.md). The chunk's stored content, which search returns, stays the text alone.
 */
function indexedText(title: string, content: string): string {
  return title.trim() === '' ? content : `${title}\n\n${content}`;
}

/** Dense vectors from the model and term frequencies (for BM25), both of title + chunk text. */
export async function embedChunks(
  embedder: Embedder,
  title: string,
  chunks: readonly Pick<TextChunk, 'chunkId' | 'index' | 'content'>[],
): Promise<IndexedChunk[]> {
  const texts = chunks.map((c) => indexedText(title, c.content));
  const dense = await embedder.embed(texts, 'document');
  return chunks.map((c, i) => ({ chunkId: c.chunkId, index: c.index, content: c.content, dense: dense[i]!, terms: termFrequencies(texts[i]!) }));
}

/**
 * Whether `model` already holds exactly these chunks of the memo: a redelivered revision whose
 * first run stored them (and outlasted the consumer's ack wait, or crashed before acknowledging).
 * Embedding and writing them again cost tens of seconds for a memo of 20k chunks, during which the
 * indexer answered no search.
 */
export async function alreadyIndexed(index: Pick<SearchIndex, 'getChunks'>, model: string, memoId: string, chunks: readonly TextChunk[]): Promise<boolean> {
  if (chunks.length === 0) return false;
  const stored = await index.getChunks(model, memoId);
  if (stored.length !== chunks.length) return false;
  const byId = new Map(stored.map((c) => [c.chunkId, c.content]));
  return chunks.every((c) => byId.get(c.chunkId) === c.content);
}

/**
 * `embedChunks` for several memos in one embedder call: the embedder's batches then run full across
 * memo boundaries instead of one short batch per memo. Results in input order.
 */
export async function embedMemos(
  embedder: Embedder,
  memos: readonly { title: string; chunks: readonly Pick<TextChunk, 'chunkId' | 'index' | 'content'>[] }[],
): Promise<IndexedChunk[][]> {
  const texts = memos.flatMap(({ title, chunks }) => chunks.map((c) => indexedText(title, c.content)));
  const dense = texts.length > 0 ? await embedder.embed(texts, 'document') : [];
  // (~0.1 ms a chunk of ~1,000 characters: a batch's terms in slices, searches answered between)
  const terms = await mapInTurns(texts, (text) => termFrequencies(text));
  let at = 0;
  return memos.map(({ chunks }) =>
    chunks.map((c) => {
      const i = at++;
      return { chunkId: c.chunkId, index: c.index, content: c.content, dense: dense[i]!, terms: terms[i]! };
    }),
  );
}
