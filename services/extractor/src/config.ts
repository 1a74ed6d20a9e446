import { Type, type Static } from '@sinclair/typebox';
import { loadEnv, ServiceEnv } from '@memex/runtime';
import { MAX_CONTENT_BYTES } from '@memex/contracts';

export const ExtractorEnv = Type.Object({
  ...ServiceEnv.properties,
  EXTRACT_CONCURRENCY: Type.Integer({ minimum: 1, maximum: 64, default: 2, description: 'Documents extracted at once (one child process each)' }),
  EXTRACT_IDLE_MS: Type.Integer({
    minimum: 0,
    default: 60_000,
    description: 'An extraction child idle this long is ended (it holds every parser); 0 keeps them',
  }),
  EXTRACT_TIMEOUT_MS: Type.Integer({ minimum: 100, default: 120_000, description: 'Longest one document may take; the child is killed after it' }),
  EXTRACT_MAX_MEMORY_MB: Type.Integer({ minimum: 32, default: 1024, description: 'V8 heap of each extraction child process' }),
  EXTRACT_MAX_INFLATED_MB: Type.Integer({
    minimum: 1,
    default: 512,
    description: 'What the ZIP entries of one DOCX/PPTX/XLSX/ODT may inflate to in all (zip bombs stop here)',
  }),
  EXTRACT_MAX_PAGES: Type.Integer({ minimum: 1, default: 5_000, description: 'PDF pages, slides or sheets read at most; more is refused' }),
  EXTRACT_MAX_CELLS: Type.Integer({ minimum: 1, default: 2_000_000, description: 'Spreadsheet cells read at most' }),
  EXTRACT_MAX_DEPTH: Type.Integer({ minimum: 8, default: 256, description: 'Element nesting an XML/HTML document may have' }),
  EXTRACT_MAX_TEXT_BYTES: Type.Integer({
    minimum: 1,
    default: MAX_CONTENT_BYTES,
    description: 'Extracted text at most, UTF-8 bytes (keep it at most the gateway MEMEX_MAX_CONTENT_BYTES); a document with more ends in status error',
  }),
});
export type ExtractorConfig = Static<typeof ExtractorEnv>;

export function loadExtractorConfig(env: Record<string, string | undefined>): ExtractorConfig {
  return loadEnv(ExtractorEnv, env);
}
