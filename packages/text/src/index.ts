export { splitParagraphs, splitSentences } from './sentences.js';
export { chunkText, chunkTextSteps, DEFAULT_CHUNK_OPTIONS } from './chunker.js';
export { analyze, STOPWORDS, stem, tokenize, tokenizeWithOffsets } from './analyzer.js';
export {
  DEFAULT_BM25_OPTIONS,
  bm25TermWeight,
  encodeDocument,
  encodeQuery,
  idf,
  termFrequencies,
  termId,
  weighDocument,
} from './sparse.js';
export { fuseScores, minMaxNormalize, reciprocalRankFusion } from './fusion.js';
export { DEFAULT_SUMMARIZE_OPTIONS, summarize } from './summarize.js';
export { collapseWhitespace, truncateAtWord } from './truncate.js';
export { DEFAULT_KEYPHRASE_OPTIONS, extractKeyphrases } from './keyphrases.js';
export { FUNCTION_WORDS } from './function-words.js';
export { hasLexicalOverlap, scoreSentences } from './answer.js';

export type { Span } from './sentences.js';
export type { Chunk, ChunkOptions } from './chunker.js';
export type { TokenSpan } from './analyzer.js';
export type { Bm25Options, EncodedDocument, SparseVector } from './sparse.js';
export type { ScoredItem } from './fusion.js';
export type { SummarizeOptions } from './summarize.js';
export type { KeyphraseOptions } from './keyphrases.js';
export type { Passage, ScoredSentence, ScoreSentencesOptions } from './answer.js';
