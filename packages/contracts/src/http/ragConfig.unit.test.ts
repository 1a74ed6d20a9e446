import { Value } from '@sinclair/typebox/value';
import { describe, expect, it } from 'vitest';
import { MemexError, errorText } from '../errors';
import { RagConfig, indexRequestFromRag, parseRagConfig } from './ragConfig';
import { parseChatBody, parseGenerateBody, parseSearchBody } from './validation';

const fails = (value: unknown, message: string, where: 'chat' | 'generate' | 'search' = 'chat') => {
  let error: unknown;
  try {
    parseRagConfig(value, where);
  } catch (e) {
    error = e;
  }
  expect(error, JSON.stringify(value)).toBeInstanceOf(MemexError);
  expect((error as MemexError).code).toBe('InvalidRequest');
  expect((error as MemexError).message).toBe(message);
};

describe('rag_config', () => {
  it('is optional: absent or null means server defaults', () => {
    expect(parseRagConfig(undefined, 'chat')).toBeUndefined();
    expect(parseRagConfig(null, 'chat')).toBeUndefined();
    expect(parseRagConfig({}, 'chat')).toEqual({});
  });

  it('reads every knob of the full Skald shape, and the value passes the schema', () => {
    const full = {
      llm_provider: 'openai',
      query_rewrite: { enabled: true },
      vector_search: { top_k: 200, similarity_threshold: 0.25 },
      reranking: { enabled: true, top_k: 100 },
      references: { enabled: true },
    };
    expect(Value.Check(RagConfig, full)).toBe(true);
    expect(parseRagConfig(full, 'chat')).toEqual({
      llmProvider: 'openai',
      queryRewrite: true,
      vectorTopK: 200,
      similarityThreshold: 0.25,
      rerank: true,
      rerankTopK: 100,
      references: true,
    });
    expect(parseRagConfig({ query_rewrite: {}, reranking: { enabled: false }, references: { enabled: false } }, 'generate')).toEqual({ rerank: false, references: false });
  });

  it("takes the Skald Node SDK's camelCase spelling of every knob, and the value passes the schema", () => {
    // What the SDK's RAGConfig type produces (llmProvider, queryRewrite, vectorSearch.topK, …).
    const sdk = {
      llmProvider: 'openai',
      queryRewrite: { enabled: true },
      vectorSearch: { topK: 150, similarityThreshold: 0.75 },
      reranking: { enabled: true, topK: 50 },
      references: { enabled: true },
    };
    expect(Value.Check(RagConfig, sdk)).toBe(true);
    expect(parseRagConfig(sdk, 'chat')).toEqual({
      llmProvider: 'openai',
      queryRewrite: true,
      vectorTopK: 150,
      similarityThreshold: 0.75,
      rerank: true,
      rerankTopK: 50,
      references: true,
    });
    expect(parseRagConfig({ vectorSearch: { topK: 20 }, reranking: { topK: 3 } }, 'search')).toEqual({ vectorTopK: 20, rerankTopK: 3 });
    expect(parseRagConfig({ vector_search: { topK: 20, similarity_threshold: 0.5 } }, 'generate')).toEqual({ vectorTopK: 20, similarityThreshold: 0.5 });
  });

  it('checks camelCase values by the same rules, naming the snake_case field, and refuses both spellings at once', () => {
    fails({ vectorSearch: { topK: 201 } }, 'rag_config.vector_search.top_k must be an integer from 1 to 200');
    fails({ vectorSearch: { topK: 10 }, reranking: { topK: 11 } }, 'rag_config.reranking.top_k must be less than or equal to rag_config.vector_search.top_k');
    fails({ llmProvider: 'anthropic' }, 'rag_config.llm_provider must be one of extractive, ollama, openai');
    fails({ queryRewrite: { enabled: 'yes' } }, 'rag_config.query_rewrite.enabled must be a boolean');
    fails({ vector_search: { top_k: 5 }, vectorSearch: { topK: 5 } }, 'rag_config.vector_search and rag_config.vectorSearch are the same setting: give one');
    fails({ reranking: { top_k: 5, topK: 5 } }, 'rag_config.reranking.top_k and rag_config.reranking.topK are the same setting: give one');
    fails({ llmProvider: 'openai' }, "Unknown field: 'rag_config.llmProvider'", 'search');
  });

  it('must be an object, as must each section', () => {
    fails('yes', 'rag_config must be an object');
    fails([], 'rag_config must be an object');
    fails({ vector_search: 5 }, 'rag_config.vector_search must be an object');
    fails({ reranking: true }, 'rag_config.reranking must be an object');
    fails({ references: [] }, 'rag_config.references must be an object');
    fails({ query_rewrite: 'on' }, 'rag_config.query_rewrite must be an object');
  });

  it('names unknown fields at any depth', () => {
    fails({ top_k: 5 }, "Unknown field: 'rag_config.top_k'");
    fails({ vector_search: { top_n: 5 } }, "Unknown field: 'rag_config.vector_search.top_n'");
    fails({ references: { topK: 5 } }, "Unknown field: 'rag_config.references.topK'");
    fails({ reranking: { model: 'x' } }, "Unknown field: 'rag_config.reranking.model'");
    fails({ references: { enabled: true, format: 'x' } }, "Unknown field: 'rag_config.references.format'");
  });

  it('takes booleans only for the enabled flags', () => {
    fails({ query_rewrite: { enabled: 'true' } }, 'rag_config.query_rewrite.enabled must be a boolean');
    fails({ reranking: { enabled: 1 } }, 'rag_config.reranking.enabled must be a boolean');
    fails({ references: { enabled: 'yes' } }, 'rag_config.references.enabled must be a boolean');
  });

  it('bounds vector_search.top_k to 1–200 and reranking.top_k to 1–100, integers', () => {
    for (const bad of [0, 201, 1.5, '10', -1]) fails({ vector_search: { top_k: bad } }, 'rag_config.vector_search.top_k must be an integer from 1 to 200');
    for (const bad of [0, 101, 2.5, '5']) fails({ reranking: { top_k: bad } }, 'rag_config.reranking.top_k must be an integer from 1 to 100');
    expect(parseRagConfig({ vector_search: { top_k: 1 }, reranking: { top_k: 1 } }, 'chat')).toEqual({ vectorTopK: 1, rerankTopK: 1 });
  });

  it('keeps reranking.top_k at or below vector_search.top_k', () => {
    fails({ vector_search: { top_k: 10 }, reranking: { top_k: 11 } }, 'rag_config.reranking.top_k must be less than or equal to rag_config.vector_search.top_k');
    expect(parseRagConfig({ vector_search: { top_k: 10 }, reranking: { top_k: 10 } }, 'chat')).toEqual({ vectorTopK: 10, rerankTopK: 10 });
  });

  it('takes a similarity_threshold from 0 to 1', () => {
    for (const bad of [-0.1, 1.1, '0.5', Number.NaN]) fails({ vector_search: { similarity_threshold: bad } }, 'rag_config.vector_search.similarity_threshold must be a number from 0 to 1');
    expect(parseRagConfig({ vector_search: { similarity_threshold: 0 } }, 'chat')).toEqual({ similarityThreshold: 0 });
    expect(parseRagConfig({ vector_search: { similarity_threshold: 1 } }, 'chat')).toEqual({ similarityThreshold: 1 });
  });

  it('names a known provider in llm_provider', () => {
    fails({ llm_provider: 'anthropic' }, 'rag_config.llm_provider must be one of extractive, ollama, openai');
    fails({ llm_provider: 3 }, 'rag_config.llm_provider must be one of extractive, ollama, openai');
  });

  it('on search, takes the retrieval knobs only', () => {
    expect(parseRagConfig({ vector_search: { top_k: 20 }, reranking: { enabled: false } }, 'search')).toEqual({ vectorTopK: 20, rerank: false });
    fails({ references: { enabled: true } }, "Unknown field: 'rag_config.references'", 'search');
    fails({ llm_provider: 'openai' }, "Unknown field: 'rag_config.llm_provider'", 'search');
  });

  it('reaches chat, generate and search bodies, whose errors are 400 with the message', () => {
    expect(parseChatBody({ query: 'q', rag_config: { references: { enabled: true } } }).rag).toEqual({ references: true });
    expect(parseGenerateBody({ prompt: 'p', rag_config: { vector_search: { top_k: 5 } } }).rag).toEqual({ vectorTopK: 5 });
    expect(parseSearchBody({ query: 'q', search_method: 'chunk_vector_search', rag_config: { reranking: { top_k: 3 } } }).rag).toEqual({ rerankTopK: 3 });
    expect(parseChatBody({ query: 'q' }).rag).toBeUndefined();
    try {
      parseChatBody({ query: 'q', rag_config: { vector_search: { top_k: 0 } } });
      expect.unreachable();
    } catch (e) {
      expect(errorText((e as MemexError).code, (e as MemexError).message)).toBe('rag_config.vector_search.top_k must be an integer from 1 to 200');
    }
  });
});

describe('indexRequestFromRag', () => {
  const search = (rag: unknown, limit: number) => indexRequestFromRag(parseRagConfig(rag, 'search'), { limit });
  const chat = (rag: unknown, topK: number) => indexRequestFromRag(parseRagConfig(rag, 'chat'), { topK });

  it('search: limit hits, fewer when reranking.top_k says so, from at least as many candidates', () => {
    expect(search(undefined, 10)).toEqual({ limit: 10, rerank: { topK: 10 } });
    expect(search({ vector_search: { top_k: 50 } }, 10)).toEqual({ limit: 10, candidates: 50, rerank: { topK: 10 } });
    expect(search({ vector_search: { top_k: 5 } }, 10)).toEqual({ limit: 10, candidates: 10, rerank: { topK: 10 } });
    expect(search({ vector_search: { top_k: 50 }, reranking: { top_k: 3 } }, 10)).toEqual({ limit: 3, candidates: 50, rerank: { topK: 3 } });
    expect(search({ reranking: { top_k: 20 } }, 10)).toEqual({ limit: 10, rerank: { topK: 10 } });
  });

  it('chat and generate: AGENT_TOP_K kept by default, every candidate without a reranker', () => {
    expect(chat(undefined, 8)).toEqual({ limit: 8, rerank: { topK: 8 } });
    expect(chat({ vector_search: { top_k: 30 } }, 8)).toEqual({ limit: 30, candidates: 30, rerank: { topK: 8 } });
    expect(chat({ vector_search: { top_k: 4 } }, 8)).toEqual({ limit: 4, candidates: 4, rerank: { topK: 4 } });
    expect(chat({ reranking: { top_k: 20 } }, 8)).toEqual({ limit: 8, rerank: { topK: 20 } });
    expect(chat({ vector_search: { top_k: 50 }, reranking: { top_k: 20 } }, 8)).toEqual({ limit: 50, candidates: 50, rerank: { topK: 20 } });
  });

  it('passes reranking.enabled and turns similarity_threshold into a distance, in either spelling', () => {
    for (const rag of [
      { vector_search: { similarity_threshold: 0.25 }, reranking: { enabled: false } },
      { vectorSearch: { similarityThreshold: 0.25 }, reranking: { enabled: false } },
    ]) {
      expect(search(rag, 5)).toEqual({ limit: 5, maxDistance: 0.75, rerank: { enabled: false, topK: 5 } });
      expect(chat(rag, 8)).toEqual({ limit: 8, maxDistance: 0.75, rerank: { enabled: false, topK: 8 } });
    }
    expect(search({ reranking: { enabled: true } }, 5).rerank).toEqual({ enabled: true, topK: 5 });
  });
});
