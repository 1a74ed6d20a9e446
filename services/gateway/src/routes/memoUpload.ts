/**
 * The multipart upload on POST /api/v1/memo (Skald's fields; memos.ts hands multipart requests here,
 * memoFiles.ts those on Skald's older path). The bytes go to the blob store sealed with the memo's key;
 * the memo records a reference, and the extractor turns the file into the memo's content.
 */
import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  MemexError,
  Subjects,
  fileBlobName,
  parseCreateMemoBody,
  sniffFileType,
  type StoredCreateInput,
  type MemoAddressRequest,
  type MemoFile,
  type MemoFileReply,
} from '@memex/contracts';
import { SEAL_FOR_TRANSIT, query, uuidV7 } from '@memex/runtime';
import { requestContext, requestedProject, type GatewayDeps } from '../http/context';
import { idempotentMemoId } from '../http/idempotencyKey';
import { noteMemoIds } from '../auth/scopes';
import { createInSpace } from '../auth/space';

/** Form fields an upload takes besides `file` (Skald's names; metadata and tags as JSON text). */
const FORM_FIELDS = new Set(['title', 'reference_id', 'source', 'expiration_date', 'metadata', 'tags', 'project_id']);
/** Room for the multipart framing and form fields on top of the file itself. */
export const FORM_OVERHEAD_BYTES = 1024 * 1024;

function jsonField(value: string | undefined, field: string): unknown {
  if (value === undefined) return undefined;
  try {
    return JSON.parse(value);
  } catch {
    throw new MemexError('InvalidRequest', `${field} must be JSON text (an ${field === 'tags' ? 'array of strings' : 'object'})`);
  }
}

/**
 * The multipart branch of POST /api/v1/memo: one `file` part and the usual fields as form strings.
 * Answers once the memo exists (pending, status `processing`); extraction runs in the extractor.
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

  const commandId = idempotentMemoId(ctx.projectId, request.headers['idempotency-key']);
  const memoId = commandId ?? uuidV7();
  if (commandId) {
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
