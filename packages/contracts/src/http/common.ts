import { Type, type Static, type TSchema } from '@sinclair/typebox';

export const Uuid = Type.String({ format: 'uuid', description: 'A UUID' });
export const DateTime = Type.String({ format: 'date-time', description: 'ISO 8601 date-time' });

export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

export const ErrorResponse = Type.Object(
  { error: Type.String({ description: 'What went wrong, in words a client can show' }) },
  { $id: 'ErrorResponse' },
);
export type ErrorResponse = Static<typeof ErrorResponse>;

export const OkResponse = Type.Object({ ok: Type.Boolean() }, { $id: 'OkResponse' });
export type OkResponse = Static<typeof OkResponse>;

/** Longest title, source and reference id (spec section 8). */
export const MAX_SHORT_TEXT = 255;
