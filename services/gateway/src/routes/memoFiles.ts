/**
 * Documents in and out: the multipart upload on POST /api/v1/memo (Skald's fields; also on Skald's
 * older path POST /api/v1/memo/upload) and the original file's download. The bytes go to the blob store sealed with the memo's key; the memo
 * records a reference, and the extractor turns the file into the memo's content.
 */
import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  ErrorResponse,
  MemexError,
  MemoIdParams,
  MemoIdQuery,
  Subjects,
  fileBlobName,
  parseCreateMemoBody,
  sniffFileType,
  type StoredCreateInput,
  type MemoAddressRequest,
  type MemoFile,
  type MemoFileReply,
} from '@memex/contracts';
import { SEAL_FOR_TRANSIT, isKeyErased, query, uuidV5, uuidV7, verifyBlob } from '@memex/runtime';
import { requestContext, requestedProject, type GatewayDeps } from '../http/context';
import { memoRef } from './memos';
import { noteMemoIds } from '../auth/scopes';
import { createInSpace } from '../auth/space';

/** Form fields an upload takes besides `file` (Skald's names; metadata and tags as JSON text). */
const FORM_FIELDS = new Set(['title', 'reference_id', 'source', 'expiration_date', 'metadata', 'tags', 'project_id']);
/** Room for the multipart framing and form fields on top of the file itself. */
const FORM_OVERHEAD_BYTES = 1024 * 1024;
const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

function isMultipartRequest(request: FastifyRequest): boolean {
  return /^multipart\/form-data/i.test(String(request.headers['content-type'] ?? ''));
}

const UPLOAD_PATHS = new Set(['/api/v1/memo', '/api/v1/memo/upload']);

function isUploadRoute(request: FastifyRequest): boolean {
  return request.method === 'POST' && UPLOAD_PATHS.has(request.url.split('?')[0]!);
}

function jsonField(value: string | undefined, field: string): unknown {
  if (value === undefined) return undefined;
  try {
    return JSON.parse(value);
  } catch {
    throw new MemexError('InvalidRequest', `${field} must be JSON text (an ${field === 'tags' ? 'array of strings' : 'object'})`);
  }
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

  // Skald's upload path before uploads moved onto POST /api/v1/memo; its 0.3 Node SDK posts the same
  // form here. Kept out of the OpenAPI document: the documented route is POST /api/v1/memo.
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

/**
 * The multipart branch of POST /api/v1/memo (memos.ts hands multipart requests here): one `file`
 * part and the usual fields as form strings. Answers once the memo exists (pending, status
 * `processing`); extraction runs in the extractor service.
 */
export async function uploadMemo(deps: GatewayDeps, request: FastifyRequest, reply: FastifyReply): Promise<{ ok: true; memo_uuid: string }> {
  const { config, commands } = deps;
  const uploadLimit = config.MEMEX_UPLOAD_LIMIT;
  const fields = new Map<string, string>();
  let upload: { filename: string; bytes: Buffer } | undefined;
  const parts = request.parts({ limits: { fileSize: uploadLimit, files: 1, fields: 32, fieldSize: 128 * 1024, parts: 40 } });
  try {
    for await (const part of parts) {
      if (part.type === 'file') {
        if (part.fieldname !== 'file') throw new MemexError('InvalidRequest', `Unknown file field: '${part.fieldname}' (send the file as 'file')`);
        upload = { filename: part.filename || 'upload', bytes: await part.toBuffer() };
      } else {
        if (!FORM_FIELDS.has(part.fieldname)) throw new MemexError('InvalidRequest', `Unknown field: '${part.fieldname}'`);
        if (typeof part.value !== 'string') throw new MemexError('InvalidRequest', `${part.fieldname} must be text`);
        fields.set(part.fieldname, part.value);
      }
    }
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === 'FST_REQ_FILE_TOO_LARGE') throw new MemexError('FileTooLarge', `at most ${uploadLimit} bytes`);
    if (code === 'FST_FILES_LIMIT') throw new MemexError('InvalidRequest', 'An upload takes one file');
    if (code === 'FST_PARTS_LIMIT' || code === 'FST_FIELDS_LIMIT') throw new MemexError('InvalidRequest', 'Too many form fields');
    if (code === 'FST_INVALID_MULTIPART_CONTENT_TYPE' || code === 'FST_NO_FORM_DATA') throw new MemexError('FileRequired');
    throw error;
  }
  const ctx = requestContext(deps, request, reply, fields.get('project_id') ?? requestedProject(request.query));
  if (request.auditNote) request.auditNote.action = 'memo.upload';
  if (!upload) throw new MemexError('FileRequired');
  const { filename, bytes } = upload;
  const { format, mimetype } = sniffFileType(bytes, filename);

  const callerMetadata = jsonField(fields.get('metadata'), 'metadata');
  if (callerMetadata !== undefined && (typeof callerMetadata !== 'object' || callerMetadata === null || Array.isArray(callerMetadata))) {
    throw new MemexError('InvalidRequest', 'metadata must be a JSON object');
  }
  const parsed = parseCreateMemoBody({
    title: fields.get('title') ?? filename.slice(0, 255),
    // The content comes from extraction; the parser requires some for JSON bodies.
    content: '-',
    metadata: { ...(callerMetadata as Record<string, unknown> | undefined), original_filename: filename, mimetype, size: bytes.byteLength },
    type: 'document',
    ...(fields.has('reference_id') ? { reference_id: fields.get('reference_id') } : {}),
    ...(fields.has('source') ? { source: fields.get('source') } : {}),
    ...(fields.has('expiration_date') ? { expiration_date: fields.get('expiration_date') } : {}),
    ...(fields.has('tags') ? { tags: jsonField(fields.get('tags'), 'tags') } : {}),
  });
  const { content: _placeholder, ...input } = createInSpace(ctx.space, parsed);

  const key = request.headers['idempotency-key'];
  let memoId = uuidV7();
  let commandId: string | undefined;
  if (typeof key === 'string') {
    if (!IDEMPOTENCY_KEY.test(key)) throw new MemexError('InvalidRequest', 'Idempotency-Key must be 1-255 visible ASCII characters');
    memoId = uuidV5(`idempotency:${ctx.projectId}:${key}`);
    commandId = memoId;
    // A retry of an upload that went through: the memo has its file already.
    const existing = await query<MemoAddressRequest, MemoFileReply>(
      deps.nc,
      Subjects.query.memoFile,
      { projectId: ctx.projectId, ref: { idType: 'memo_uuid', id: memoId } },
      { requestId: ctx.requestId, timeoutMs: config.MEMEX_QUERY_TIMEOUT_MS },
    ).catch(() => undefined);
    if (existing) {
      reply.header('Location', `/api/v1/memo/${memoId}`);
      return { ok: true as const, memo_uuid: memoId };
    }
  }
  const { content } = deps;
  const { blobs, keyring } = content;
  await keyring.create(ctx.projectId, memoId);
  // One blob per attempt: a retried upload never overwrites the bytes a memo already refers to.
  const name = fileBlobName(ctx.projectId, memoId, uuidV7());
  const blob = await blobs.put(name, await keyring.seal(ctx.projectId, memoId, bytes));
  const file: MemoFile = {
    blob,
    filename,
    mimetype,
    format,
    size: bytes.byteLength,
    sha256: createHash('sha256').update(bytes).digest('hex'),
  };
  // The content stays empty (a blob of no text) until the extractor records the file's text.
  const empty = await content.write(ctx.projectId, memoId, '');
  try {
    const stored: StoredCreateInput = { ...input, content: empty, file };
    const sealed = await keyring.sealJson(ctx.projectId, memoId, stored, SEAL_FOR_TRANSIT);
    await commands.send(
      'create',
      { projectId: ctx.projectId, memoId, sealed },
      { requestId: ctx.requestId, timeoutMs: config.MEMEX_COMMAND_TIMEOUT_MS, ...(commandId ? { commandId } : {}) },
    );
  } catch (error) {
    // No memo, no file.
    await blobs.delete(name).catch(() => undefined);
    await content.remove(empty).catch(() => undefined);
    throw error;
  }
  noteMemoIds(request, [memoId]);
  reply.header('Location', `/api/v1/memo/${memoId}`);
  return { ok: true as const, memo_uuid: memoId };
}
