import { Type, type Static } from '@sinclair/typebox';
import { Filters } from '../filters';
import { Nullable, Uuid } from './common';
import { SearchRagConfig } from './ragConfig';

export const SEARCH_METHODS = ['title_contains', 'title_startswith', 'chunk_vector_search'] as const;
export type SearchMethod = (typeof SEARCH_METHODS)[number];

export const SEARCH_LIMIT_MAX = 50;
export const SEARCH_LIMIT_DEFAULT = 10;

export const SearchBody = Type.Object(
  {
    query: Type.String({ minLength: 1 }),
    project_id: Type.Optional(Uuid),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: SEARCH_LIMIT_MAX, default: SEARCH_LIMIT_DEFAULT })),
    filters: Type.Optional(Filters),
    search_method: Type.Union(SEARCH_METHODS.map((m) => Type.Literal(m))),
    rag_config: Type.Optional(SearchRagConfig),
  },
  { $id: 'SearchBody', additionalProperties: false },
);
export type SearchBody = Static<typeof SearchBody>;

export const SearchResultItem = Type.Object(
  {
    memo_title: Type.String(),
    memo_uuid: Uuid,
    chunk_uuid: Nullable(Uuid),
    chunk_content: Nullable(Type.String()),
    memo_summary: Type.String(),
    distance: Nullable(
      Type.Number({
        description:
          'chunk_vector_search: 1 − fused relevance, in [0, 1], lower is closer (see docs/search.md). ' +
          'Title methods: null.',
      }),
    ),
    score: Type.Optional(
      Nullable(
        Type.Object(
          {
            relevance: Type.Number({ description: '1 − distance' }),
            lexical: Type.Number({ description: 'The BM25 part: weight × bm25 / best bm25 among the candidates' }),
            dense: Type.Number({ description: 'The dense part: (1 − weight) × max(0, cosine)' }),
          },
          { description: 'chunk_vector_search only: the fused relevance and its two parts (lexical + dense = relevance)' },
        ),
      ),
    ),
  },
  { $id: 'SearchResultItem' },
);
export type SearchResultItem = Static<typeof SearchResultItem>;

export const SearchResponse = Type.Object({ results: Type.Array(SearchResultItem) }, { $id: 'SearchResponse' });
export type SearchResponse = Static<typeof SearchResponse>;
