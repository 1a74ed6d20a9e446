/**
 * The one table of Memex errors: a stable code, the HTTP status the gateway answers with, and the
 * exact text of the interface spec where it gives one. Services send `{ code, message }` over NATS;
 * only the gateway turns a code into an HTTP status.
 */
export const ERRORS = {
  InvalidRequest: { status: 400, text: 'Invalid request' },
  InvalidUrl: { status: 400, text: 'The request URL is not valid' },
  InvalidJson: { status: 400, text: 'Request body is not valid JSON' },
  InvalidIdType: { status: 400, text: "id_type must be either 'memo_uuid' or 'reference_id'" },
  QueryRequired: { status: 400, text: 'Query is required' },
  PromptRequired: { status: 400, text: 'Prompt is required' },
  FiltersNotList: { status: 400, text: 'Filters must be a list' },
  InvalidFilter: { status: 400, text: 'Invalid filter' },
  InvalidSearchMethod: {
    status: 400,
    text: 'Search method is required and must be one of: title_contains, title_startswith, chunk_vector_search',
  },
  LimitTooHigh: { status: 400, text: 'Limit must be less than or equal to 50' },
  /** POST /api/v1/memo/batch whose body is not `{ memos: [...] }` with 1 to MAX_BATCH_MEMOS memos. */
  InvalidBatch: { status: 400, text: 'The body must be { "memos": [ ... ] } with 1 to 1000 memos' },
  ProjectIdRequired: { status: 400, text: 'project_id is required with token authentication' },
  MissingApiKey: { status: 401, text: 'API key is required' },
  InvalidApiKey: { status: 403, text: 'Invalid API key' },
  ResourceNotInProject: { status: 403, text: 'Resource does not belong to the project' },
  AccessDenied: { status: 403, text: 'Access denied' },
  MemoNotFound: { status: 404, text: 'Memo not found' },
  ChatNotFound: { status: 404, text: 'Chat not found' },
  NotFound: { status: 404, text: 'Not found' },
  /** DELETE /api/v1/project/keys/{key_id} of a key the project does not have. */
  KeyNotFound: { status: 404, text: 'Key not found' },
  WebhookNotFound: { status: 404, text: 'Webhook not found' },
  /** A webhook URL that resolves to loopback, private, link-local or metadata addresses. */
  WebhookUrlRefused: { status: 400, text: 'The webhook URL resolves to an address that is not allowed' },
  ReferenceIdTaken: { status: 409, text: 'reference_id is already used by another memo in this project' },
  PayloadTooLarge: { status: 413, text: 'Request body is too large' },
  FileTooLarge: { status: 413, text: 'The file is larger than the upload limit' },
  /** A batch of more memos than the project's rate limit counts in one window: no wait would let it through. */
  BatchOverRateLimit: { status: 413, text: 'The batch holds more memos than the rate limit allows in one window' },
  EmptyFile: { status: 400, text: 'The file is empty' },
  FileRequired: { status: 400, text: 'A multipart upload needs a file part named "file"' },
  UnsupportedFileType: { status: 415, text: 'Unsupported file type' },
  FileTypeMismatch: { status: 415, text: 'The file content does not match its name' },
  NoOriginalFile: { status: 404, text: 'This memo has no original file' },
  UnsupportedMediaType: { status: 415, text: 'Content-Type must be application/json' },
  RateLimited: { status: 429, text: 'Rate limit exceeded' },
  /** Too many missing or invalid keys from one client address. */
  TooManyFailedAuthentications: { status: 429, text: 'Too many failed authentications from this address; retry later' },
  /** The same Idempotency-Key was sent earlier with another body. */
  IdempotencyKeyReused: { status: 422, text: 'Idempotency-Key was already used with a different request body' },
  AgentError: { status: 500, text: 'Agent error' },
  Internal: { status: 500, text: 'Internal error' },
  /** A service's answer would exceed the NATS max_payload; it was refused rather than sent. */
  ReplyTooLarge: { status: 500, text: 'The answer is too large to send' },
  ServiceUnavailable: { status: 503, text: 'Service unavailable' },
  Timeout: { status: 504, text: 'The request timed out' },
} as const satisfies Record<string, { status: number; text: string }>;

export type ErrorCode = keyof typeof ERRORS;

/** Codes whose spec text is a prefix followed by `: <details>`. */
const PREFIXED: ReadonlySet<ErrorCode> = new Set(['WebhookUrlRefused', 'InvalidFilter', 'AgentError', 'UnsupportedFileType', 'FileTypeMismatch', 'FileTooLarge', 'BatchOverRateLimit']);
/** Codes whose detail is the whole client-facing text (validation messages the spec leaves open). */
const REPLACED: ReadonlySet<ErrorCode> = new Set(['InvalidRequest']);

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.hasOwn(ERRORS, value);
}

/** The `error` text clients see for a code, with details where the spec's text takes them. */
export function errorText(code: ErrorCode, detail?: string): string {
  const { text } = ERRORS[code];
  if (detail === undefined || detail === '') return text;
  if (PREFIXED.has(code)) return `${text}: ${detail}`;
  return REPLACED.has(code) ? detail : text;
}

export function httpStatus(code: ErrorCode): number {
  return ERRORS[code].status;
}

/**
 * The error every Memex component throws for an expected failure. `detail` completes the spec text
 * for codes that take one ("Invalid filter: <detail>"); `message` is always the client-facing text.
 */
export class MemexError extends Error {
  readonly code: ErrorCode;
  readonly detail: string | undefined;

  constructor(code: ErrorCode, detail?: string, options?: { cause?: unknown }) {
    super(errorText(code, detail), options);
    this.name = 'MemexError';
    this.code = code;
    this.detail = detail;
  }

  get status(): number {
    return httpStatus(this.code);
  }

  /** The shape that travels over NATS between services. */
  toWire(): WireError {
    return { code: this.code, ...(this.detail === undefined ? {} : { detail: this.detail }) };
  }

  static fromWire(wire: WireError): MemexError {
    return new MemexError(isErrorCode(wire.code) ? wire.code : 'Internal', wire.detail);
  }
}

export interface WireError {
  code: string;
  detail?: string;
}

export function isMemexError(error: unknown): error is MemexError {
  return error instanceof MemexError;
}
