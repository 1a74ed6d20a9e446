import { Type, type Static } from '@sinclair/typebox';
import { DateTime, MAX_SHORT_TEXT, Nullable, Uuid } from './common';

export const Tag = Type.Object({ uuid: Uuid, tag: Type.String() }, { $id: 'Tag' });
export type Tag = Static<typeof Tag>;

export const Chunk = Type.Object(
  { uuid: Uuid, chunk_content: Type.String(), chunk_index: Type.Integer({ minimum: 0 }) },
  { $id: 'Chunk' },
);
export type Chunk = Static<typeof Chunk>;

// Not Type.Record: its `^(.*)$` key pattern makes the response serializer drop keys holding \n or \r.
export const Metadata = Type.Unsafe<Record<string, unknown>>(Type.Object({}, { additionalProperties: true, description: 'Free-form custom JSON object' }));
export type Metadata = Static<typeof Metadata>;

export const ProcessingError = Type.Object(
  {
    stage: Type.Union([Type.Literal('extracting'), Type.Literal('indexing'), Type.Literal('summarizing')]),
    message: Type.String(),
    revision: Type.Integer(),
    at: DateTime,
  },
  { $id: 'ProcessingError', description: 'Set when processing of the current content revision failed for good' },
);
export type ProcessingError = Static<typeof ProcessingError>;

export const Memo = Type.Object(
  {
    uuid: Uuid,
    created_at: DateTime,
    updated_at: DateTime,
    title: Type.String({ maxLength: MAX_SHORT_TEXT }),
    content: Type.String(),
    summary: Type.String({ description: 'Empty until processing has summarized the current content' }),
    content_length: Type.Integer({ minimum: 0 }),
    metadata: Metadata,
    client_reference_id: Nullable(Type.String({ maxLength: MAX_SHORT_TEXT })),
    source: Nullable(Type.String({ maxLength: MAX_SHORT_TEXT })),
    type: Type.String(),
    expiration_date: Nullable(DateTime),
    archived: Type.Boolean({ description: 'Always false: a memo whose expiration_date passes is erased (GET then answers 404)' }),
    pending: Type.Boolean({ description: 'True until chunks, summary and tags exist for the current content' }),
    tags: Type.Array(Tag),
    chunks: Type.Array(Chunk),
    processing_error: Nullable(ProcessingError),
  },
  { $id: 'Memo' },
);
export type Memo = Static<typeof Memo>;

export const CreateMemoBody = Type.Object(
  {
    title: Type.String({ minLength: 1, maxLength: MAX_SHORT_TEXT }),
    content: Type.String({ minLength: 1 }),
    metadata: Type.Optional(Metadata),
    reference_id: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_SHORT_TEXT })),
    tags: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 100 })),
    source: Type.Optional(Type.String({ maxLength: MAX_SHORT_TEXT })),
    type: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    expiration_date: Type.Optional(DateTime),
  },
  { $id: 'CreateMemoBody', additionalProperties: false },
);
export type CreateMemoBody = Static<typeof CreateMemoBody>;

export const CreateMemoResponse = Type.Object({ ok: Type.Literal(true), memo_uuid: Uuid }, { $id: 'CreateMemoResponse' });
export type CreateMemoResponse = Static<typeof CreateMemoResponse>;

/** The most memos one POST /api/v1/memo/batch carries. */
export const MAX_BATCH_MEMOS = 1000;

export const CreateMemosBody = Type.Object(
  { memos: Type.Array(CreateMemoBody, { minItems: 1, maxItems: MAX_BATCH_MEMOS, description: 'Each a POST /api/v1/memo body' }) },
  { $id: 'CreateMemosBody', additionalProperties: false },
);
export type CreateMemosBody = Static<typeof CreateMemosBody>;

export const CreateMemosItem = Type.Union(
  [
    Type.Object({ ok: Type.Literal(true), memo_uuid: Uuid }),
    Type.Object({
      ok: Type.Literal(false),
      status: Type.Integer({ description: 'The status POST /api/v1/memo would have answered for this memo' }),
      error: Type.String({ description: 'Its error text' }),
    }),
  ],
  { $id: 'CreateMemosItem' },
);
export type CreateMemosItem = Static<typeof CreateMemosItem>;

export const CreateMemosResponse = Type.Object(
  { ok: Type.Literal(true), results: Type.Array(CreateMemosItem, { description: 'One per memo, in request order' }) },
  { $id: 'CreateMemosResponse' },
);
export type CreateMemosResponse = Static<typeof CreateMemosResponse>;

export const UpdateMemoBody = Type.Object(
  {
    title: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_SHORT_TEXT })),
    metadata: Type.Optional(Metadata),
    client_reference_id: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: MAX_SHORT_TEXT }))),
    source: Type.Optional(Nullable(Type.String({ maxLength: MAX_SHORT_TEXT }))),
    type: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    expiration_date: Type.Optional(Nullable(DateTime)),
    content: Type.Optional(Type.String({ minLength: 1 })),
  },
  { $id: 'UpdateMemoBody', additionalProperties: false },
);
export type UpdateMemoBody = Static<typeof UpdateMemoBody>;

export const IdType = Type.Union([Type.Literal('memo_uuid'), Type.Literal('reference_id')]);
export type IdType = Static<typeof IdType>;

export const MemoIdQuery = Type.Object({
  id_type: Type.Optional(IdType),
  project_id: Type.Optional(Type.String({ description: 'Only with an organization token' })),
});
export type MemoIdQuery = Static<typeof MemoIdQuery>;

export const MemoIdParams = Type.Object({
  memo_id: Type.String({ description: 'A memo UUID, or a client reference id with id_type=reference_id' }),
});
export type MemoIdParams = Static<typeof MemoIdParams>;
