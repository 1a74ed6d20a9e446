/**
 * The original file of an uploaded memo: the size guard on upload requests, Skald's older upload path
 * POST /api/v1/memo/upload, and the download. The upload itself is in memoUpload.ts.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import {
  ErrorResponse,
  MemexError,
  MemoIdParams,
  MemoIdQuery,
  Subjects,
  type MemoAddressRequest,
  type MemoFileReply,
} from '@memex/contracts';
import { isKeyErased, query, verifyBlob } from '@memex/runtime';
import { requestContext, requestedProject, type GatewayDeps } from '../http/context';
import { memoRef } from '../http/memoRef';
import { FORM_OVERHEAD_BYTES, uploadMemo } from './memoUpload';
import { noteMemoIds } from '../auth/scopes';

function isMultipartRequest(request: FastifyRequest): boolean {
  return /^multipart\/form-data/i.test(String(request.headers['content-type'] ?? ''));
}

const UPLOAD_PATHS = new Set(['/api/v1/memo', '/api/v1/memo/upload']);

function isUploadRoute(request: FastifyRequest): boolean {
  return request.method === 'POST' && UPLOAD_PATHS.has(request.url.split('?')[0]!);
}

/** `attachment; filename=...` with an ASCII fallback and the exact UTF-8 name (RFC 6266 / 5987). */
function contentDisposition(filename: string): string {
  const ascii = filename.replace(/[^\x20-\x7e]|["\\]/g, '_');
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(filename)}`;
}

export function memoFileRoutes(app: FastifyInstance, deps: GatewayDeps): void {
  const { config } = deps;
  const uploadLimit = config.MEMEX_UPLOAD_LIMIT;

  // A declared length over the limit is refused before a byte of the body is read.
  app.addHook('onRequest', async (request, reply) => {
    if (!isUploadRoute(request) || !isMultipartRequest(request)) return;
    const declared = Number(request.headers['content-length']);
    if (Number.isFinite(declared) && declared > uploadLimit + FORM_OVERHEAD_BYTES) {
      reply.header('connection', 'close');
      return reply.code(413).send({ error: new MemexError('FileTooLarge', `at most ${uploadLimit} bytes`).message });
    }
  });

  // Skald's older upload path, where its 0.3 Node SDK posts the same form. Kept out of the OpenAPI
  // document: the documented route is POST /api/v1/memo.
  app.post('/api/v1/memo/upload', { schema: { hide: true }, config: { access: { scope: 'memos:write', action: 'memo.upload' } } }, async (request, reply) => {
    if (request.isMultipart()) return uploadMemo(deps, request, reply);
    requestContext(deps, request, reply, requestedProject(request.query));
    throw new MemexError('FileRequired');
  });

  app.get(
    '/api/v1/memo/:memo_id/file',
    {
      config: { access: { scope: 'memos:read', action: 'memo.file' } },
      schema: {
        operationId: 'downloadMemoFile',
        summary: "Download a memo's original file",
        description:
          'The exact bytes that were uploaded, with the content type found at upload and the file name in ' +
          '`Content-Disposition`. 404 when the memo has no file, does not exist, or is in another project.',
        tags: ['documents'],
        params: MemoIdParams,
        querystring: MemoIdQuery,
        response: {
          200: { description: 'The original file', content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } } },
          400: ErrorResponse,
          401: ErrorResponse,
          403: ErrorResponse,
          404: ErrorResponse,
          429: ErrorResponse,
        },
      },
    },
    async (request, reply) => {
      const ctx = requestContext(deps, request, reply, requestedProject(request.query));
      const ref = memoRef(request.params, request.query);
      const { memoId, file } = await query<MemoAddressRequest, MemoFileReply>(deps.nc, Subjects.query.memoFile, { projectId: ctx.projectId, ref, ...(ctx.space.length ? { space: ctx.space } : {}) }, {
        requestId: ctx.requestId,
        timeoutMs: config.MEMEX_QUERY_TIMEOUT_MS,
      });
      noteMemoIds(request, [memoId]);
      const { blobs, keyring } = deps.content;
      const sealed = await blobs.get(file.blob.name);
      if (!sealed) throw new MemexError('MemoNotFound');
      let bytes: Buffer;
      try {
        bytes = await keyring.open(ctx.projectId, memoId, verifyBlob(file.blob, sealed));
      } catch (error) {
        // Erased between the look-up and the read.
        if (isKeyErased(error)) throw new MemexError('MemoNotFound');
        throw error;
      }
      return reply
        .header('content-type', file.mimetype)
        .header('content-disposition', contentDisposition(file.filename))
        .header('content-length', bytes.byteLength)
        .header('x-content-type-options', 'nosniff')
        .header('cache-control', 'private, no-store')
        .send(bytes);
    },
  );

}
