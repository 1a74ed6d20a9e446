/**
 * The real-text corpus the search benchmarks index (bench:search, bench:search-pair): memos of
 * chunks that each join three random Vaswani sentences, the chunks embedded by the given model and
 * written to an embedded index, and the Cranfield and Vaswani queries searched over them. One
 * builder, so that both benchmarks measure the same index.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { MemoAttributes } from '@memex/contracts';
import { chunkId } from '@memex/runtime';
import { termFrequencies } from '@memex/text';
import type { Embedder } from '../../services/indexer/src/embedding/port';
import type { EmbeddedSearchIndex } from '../../services/indexer/src/searchIndex/embedded/sqliteIndex';
import { REPO_ROOT } from '../../test/support/paths';

/** Teams the memos' `team` metadata cycles through (a filter on one selects 1/50 of the memos). */
export const SENTENCE_TEAMS = 50;

const evalLines = (collection: string, file: string) => readFileSync(path.join(REPO_ROOT, '..', 'shared', 'eval', collection, file), 'utf8').trim().split('\n');

/** Every sentence of the Vaswani corpus longer than 30 characters. */
export function vaswaniSentences(): string[] {
  return evalLines('vaswani', 'corpus.jsonl')
    .flatMap((l) => (JSON.parse(l) as { text: string }).text.split(/(?<=\.)\s+/))
    .filter((s) => s.length > 30);
}

/** Every Cranfield query's text, then every Vaswani query's (318). */
export function evalQueryTexts(): string[] {
  return [...evalLines('cranfield', 'queries.jsonl'), ...evalLines('vaswani', 'queries.jsonl')].map((l) => (JSON.parse(l) as { text: string }).text);
}

/** A benchmark memo's attributes: `title`, no summary or tags, `metadata` as given. */
export function sentenceMemo(projectId: string, memoId: string, title: string, metadata: MemoAttributes['metadata'] = {}): MemoAttributes {
  return { projectId, memoId, revision: 1, title, summary: '', source: null, clientReferenceId: null, memoType: 'text', tags: [], metadata, archived: false, expirationDate: null };
}

/**
 * Writes memo number `ordinal` (title `Memo <ordinal>`, team `team-<ordinal % 50>`) with `chunks`
 * chunks of three sentences each, drawn by `random`, embedded by `embedder` under `model`.
 */
export async function writeSentenceMemo(
  index: EmbeddedSearchIndex,
  embedder: Embedder,
  model: string,
  options: { projectId: string; memoId: string; ordinal: number; chunks: number; sentences: readonly string[]; random: () => number },
): Promise<{ texts: string[]; dense: Float32Array[] }> {
  const { projectId, memoId, ordinal, sentences, random } = options;
  await index.applyCatalog({ memoId, projectId, version: 1, memo: sentenceMemo(projectId, memoId, `Memo ${ordinal}`, { team: `team-${ordinal % SENTENCE_TEAMS}` }) });
  const texts = Array.from({ length: options.chunks }, () => Array.from({ length: 3 }, () => sentences[Math.floor(random() * sentences.length)]!).join(' '));
  const dense = await embedder.embed(texts, 'document');
  await index.putChunks(model, { memoId, projectId, revision: 1 }, texts.map((content, i) => ({ chunkId: chunkId(memoId, 1, i), index: i, content, dense: dense[i]!, terms: termFrequencies(content) })));
  return { texts, dense };
}
