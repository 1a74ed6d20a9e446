import { Type, type Static } from '@sinclair/typebox';
import { Filters } from '../filters';
import { DateTime, Nullable, Uuid } from './common';
import { RagConfig, References } from './ragConfig';

export const Citation = Type.Object(
  {
    index: Type.Integer({ minimum: 1, description: 'The n of the [n] marker in the text' }),
    memo_uuid: Uuid,
    memo_title: Type.String(),
    chunk_uuid: Uuid,
  },
  { $id: 'Citation' },
);
export type Citation = Static<typeof Citation>;

export const IntermediateStep = Type.Object(
  {
    tool: Type.String({ description: "The tool the agent used, e.g. 'search_memos'" }),
    input: Type.Object({ query: Type.String(), limit: Type.Integer() }),
    results: Type.Array(Type.Object({ memo_uuid: Uuid, chunk_uuid: Uuid, distance: Type.Number() })),
  },
  { $id: 'IntermediateStep' },
);
export type IntermediateStep = Static<typeof IntermediateStep>;

export const ChatBody = Type.Object(
  {
    query: Type.String({ minLength: 1 }),
    project_id: Type.Optional(Uuid),
    stream: Type.Optional(Type.Boolean({ default: false })),
    system_prompt: Type.Optional(Type.String()),
    filters: Type.Optional(Filters),
    chat_id: Type.Optional(Uuid),
    rag_config: Type.Optional(RagConfig),
  },
  { $id: 'ChatBody', additionalProperties: false },
);
export type ChatBody = Static<typeof ChatBody>;

export const ChatResponse = Type.Object(
  {
    ok: Type.Boolean(),
    response: Type.String(),
    intermediate_steps: Type.Array(IntermediateStep),
    chat_id: Uuid,
    citations: Type.Array(Citation),
    references: Type.Optional(References),
  },
  { $id: 'ChatResponse' },
);
export type ChatResponse = Static<typeof ChatResponse>;

export const GenerateBody = Type.Object(
  {
    prompt: Type.String({ minLength: 1 }),
    rules: Type.Optional(Type.String()),
    project_id: Type.Optional(Uuid),
    stream: Type.Optional(Type.Boolean({ default: false })),
    filters: Type.Optional(Filters),
    rag_config: Type.Optional(RagConfig),
  },
  { $id: 'GenerateBody', additionalProperties: false },
);
export type GenerateBody = Static<typeof GenerateBody>;

export const GenerateResponse = Type.Object(
  {
    ok: Type.Boolean(),
    response: Type.String({ description: 'The document, in Markdown, with [n] citation markers' }),
    intermediate_steps: Type.Array(IntermediateStep),
    citations: Type.Array(Citation),
    references: Type.Optional(References),
  },
  { $id: 'GenerateResponse' },
);
export type GenerateResponse = Static<typeof GenerateResponse>;

export const CHAT_PAGE_SIZE_MAX = 100;
export const CHAT_PAGE_SIZE_DEFAULT = 20;

export const ChatListQuery = Type.Object({
  page: Type.Optional(Type.Integer({ minimum: 1, default: 1 })),
  page_size: Type.Optional(Type.Integer({ minimum: 1, maximum: CHAT_PAGE_SIZE_MAX, default: CHAT_PAGE_SIZE_DEFAULT })),
  project_id: Type.Optional(Uuid),
});
export type ChatListQuery = Static<typeof ChatListQuery>;

export const ChatListItem = Type.Object(
  {
    uuid: Uuid,
    created_at: DateTime,
    title: Type.String({ description: 'The first user message' }),
    message_count: Type.Integer({ minimum: 0 }),
    last_message_at: DateTime,
  },
  { $id: 'ChatListItem' },
);
export type ChatListItem = Static<typeof ChatListItem>;

export const ChatListResponse = Type.Object(
  {
    results: Type.Array(ChatListItem),
    count: Type.Integer(),
    page: Type.Integer(),
    page_size: Type.Integer(),
    total_pages: Type.Integer(),
  },
  { $id: 'ChatListResponse' },
);
export type ChatListResponse = Static<typeof ChatListResponse>;

export const Message = Type.Object(
  {
    uuid: Uuid,
    content: Type.String(),
    sent_by: Type.Union([Type.Literal('user'), Type.Literal('model')]),
    sent_at: DateTime,
    client_system_prompt: Nullable(Type.String()),
    incomplete: Type.Optional(
      Type.Object(
        {
          reason: Type.Union([Type.Literal('max_tokens'), Type.Literal('timeout'), Type.Literal('error')]),
          detail: Type.String({ description: 'The cap and its value (`cut at LLM_MAX_TOKENS=2048`), or the agent error' }),
        },
        { description: 'Only on a model message that is not the whole answer: a cap cut it, or the model failed mid-stream' },
      ),
    ),
  },
  { $id: 'Message' },
);
export type Message = Static<typeof Message>;

export const Chat = Type.Object(
  { uuid: Uuid, created_at: DateTime, messages: Type.Array(Message) },
  { $id: 'Chat' },
);
export type Chat = Static<typeof Chat>;

export const ChatParams = Type.Object({ chat_uuid: Type.String() });
export type ChatParams = Static<typeof ChatParams>;

/** The JSON of one `data:` line of a chat or generate event stream. */
export type StreamEvent =
  | { type: 'token'; content: string }
  | { type: 'citations'; citations: Citation[] }
  /** With rag_config.references.enabled, just before `done`: the References object as JSON text (Skald's shape). */
  | { type: 'references'; content: string }
  /** The answer failed: `error` says why (`content` carries the same text, for older readers); `done` follows. */
  | { type: 'error'; error: string; content: string }
  | { type: 'done'; chat_id?: string };
