import { Type, type Static } from '@sinclair/typebox';
import { MemexError } from '../errors';

/** `POST /api/v1/project/resummarize`: which summaries to redo through the model. */
export const ResummarizeBody = Type.Object(
  {
    fallback_only: Type.Optional(
      Type.Boolean({ description: 'Only memos whose summary is `extractive-fallback` (the model was down); default: every summarized memo' }),
    ),
  },
  { $id: 'ResummarizeBody', additionalProperties: false },
);
export type ResummarizeBody = Static<typeof ResummarizeBody>;

export const ResummarizeResponse = Type.Object(
  {
    memos: Type.Integer({ minimum: 0, description: 'Memos queued: the current revision of each live memo chosen' }),
    fallback_only: Type.Boolean(),
  },
  { $id: 'ResummarizeResponse' },
);
export type ResummarizeResponse = Static<typeof ResummarizeResponse>;

export const ResummarizeStatus = Type.Object(
  { pending: Type.Integer({ minimum: 0, description: 'Queued summaries of the project not yet redone (or skipped)' }) },
  { $id: 'ResummarizeStatus' },
);
export type ResummarizeStatus = Static<typeof ResummarizeStatus>;

/** The body of `POST /api/v1/project/resummarize` (none, `{}` or `{ fallback_only }`), or `InvalidRequest` naming what is wrong. */
export function parseResummarizeBody(input: unknown): { fallbackOnly: boolean } {
  if (input === undefined || input === null) return { fallbackOnly: false };
  if (typeof input !== 'object' || Array.isArray(input)) throw new MemexError('InvalidRequest', 'The request body must be a JSON object');
  const body = input as Record<string, unknown>;
  for (const key of Object.keys(body)) if (key !== 'fallback_only') throw new MemexError('InvalidRequest', `Unknown field: '${key}'`);
  if (body.fallback_only !== undefined && typeof body.fallback_only !== 'boolean') throw new MemexError('InvalidRequest', 'fallback_only must be a boolean');
  return { fallbackOnly: body.fallback_only === true };
}
