import { MemexApiError, MemexConnectionError } from './errors';
import { OPERATIONS, type OperationId } from './operations';
import { parseEventStream } from './sse';
import type {
  AuditQuery,
  AuditResponse,
  Chat,
  ChatBody,
  CreateKeyBody,
  CreateTokenBody,
  CreatedKey,
  CreatedToken,
  KeyListResponse,
  ChatListResponse,
  ChatResponse,
  CreateMemoBody,
  CreateMemoResponse,
  CreateMemosItem,
  CreatedWebhook,
  CreateWebhookBody,
  DownloadedFile,
  EventsPage,
  EventsQuery,
  FeedEvent,
  Webhook,
  WebhookDelivery,
  Filter,
  GenerateBody,
  GenerateResponse,
  IdType,
  Memo,
  MemoHistory,
  MemoListResponse,
  MemoStatus,
  OkResponse,
  ProjectInfo,
  ResummarizeBody,
  ResummarizeResponse,
  ResummarizeStatus,
  RotatedKey,
  SearchBody,
  SearchResponse,
  StreamEvent,
  UpdateMemoBody,
} from './types';

export interface MemexClientOptions {
  /** The gateway's origin, e.g. `https://localhost:8443` (a trailing `/api/v1` is accepted too). */
  baseUrl: string;
  /** A project API key (`mxp_…`) or an organization token (`mxo_…`, then set `projectId`). */
  apiKey: string;
  /** With an organization token: the project every call acts on. */
  projectId?: string;
  /** Retries of a request answered 429 or 503 (and of a safe request that got no answer). Default 3. */
  maxRetries?: number;
  /** First backoff when the answer has no `Retry-After`; doubles per retry, with jitter. Default 500 ms. */
  retryBaseMs?: number;
  /** Longest single wait between retries, `Retry-After` included. Default 30 s. */
  maxRetryDelayMs?: number;
  /** Told of each wait before a 429 or 503 is retried: the status and the wait chosen (e.g. to show it). */
  onRetry?: (status: 429 | 503, delayMs: number) => void;
  /** Defaults to the global `fetch`. */
  fetch?: typeof fetch;
}

export interface MemoRefOptions {
  /** How `memo_id` is meant: a memo UUID (default) or the client's reference id. */
  idType?: IdType;
  signal?: AbortSignal;
}

export interface CreateOptions {
  /** Sent as `Idempotency-Key`; by default a fresh UUID per call, kept across its retries. */
  idempotencyKey?: string;
  signal?: AbortSignal;
}

/** The most memos one call of the batch route takes. */
export const MAX_BATCH_MEMOS = 1000;

export interface CreateMemosOptions extends CreateOptions {
  /**
   * Memos per call of the batch route, 1 to 1000 (default 1000). With more memos than that, call `n`
   * (from 0) sends `Idempotency-Key: <idempotencyKey>.<n>`; one call sends the key as it is.
   */
  batchSize?: number;
}

export interface UploadFields {
  title?: string;
  reference_id?: string;
  source?: string;
  expiration_date?: string;
  metadata?: Record<string, unknown>;
  tags?: string[];
}

export interface UploadOptions extends CreateOptions {
  /** Called as bytes go out (in browsers; Node's fetch reports only the end). */
  onProgress?: (sent: number, total: number) => void;
}

export interface ListMemosQuery {
  page?: number;
  page_size?: number;
  filters?: Filter[];
}

interface RequestSpec {
  query?: Record<string, string | number | undefined>;
  params?: Record<string, string>;
  body?: unknown;
  form?: FormData;
  headers?: Record<string, string>;
  signal?: AbortSignal | undefined;
  /** May be sent again after a lost connection (GET, or a create with an idempotency key). */
  replayable?: boolean;
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(timer);
      reject(signal.reason);
    }, { once: true });
  });

function newKey(): string {
  return globalThis.crypto.randomUUID();
}

/** Seconds (or an HTTP date) of a `Retry-After` header, as milliseconds. */
export function retryAfterMs(value: string | null, now = Date.now()): number | undefined {
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value.trim())) return Number(value) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/**
 * The Memex API over `fetch`. Every method is one API operation (named by its OpenAPI
 * `operationId`); failures throw {@link MemexApiError} with the status and the API's message.
 */
export class MemexClient {
  readonly baseUrl: string;
  private readonly options: Required<Pick<MemexClientOptions, 'maxRetries' | 'retryBaseMs' | 'maxRetryDelayMs'>> & MemexClientOptions;

  constructor(options: MemexClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '').replace(/\/api\/v1$/, '');
    this.options = { maxRetries: 3, retryBaseMs: 500, maxRetryDelayMs: 30_000, ...options };
  }

  /** The same client acting with another key or project (e.g. after a key rotation). */
  with(changes: Partial<MemexClientOptions>): MemexClient {
    return new MemexClient({ ...this.options, ...changes });
  }

  // Memos

  createMemo(body: CreateMemoBody, options: CreateOptions = {}): Promise<CreateMemoResponse> {
    return this.json('createMemo', {
      body,
      headers: { 'idempotency-key': options.idempotencyKey ?? newKey() },
      signal: options.signal,
      replayable: true,
    });
  }

  /**
   * Creates many memos through `POST /api/v1/memo/batch`, in calls of up to `batchSize` made one
   * after another. Answers one result per memo in input order: a refused memo (its status and the
   * text a single POST would give) never fails its neighbours. A call that fails as a whole throws;
   * every call carries an idempotency key kept across its retries, so a retry creates nothing twice.
   */
  async createMemos(memos: readonly CreateMemoBody[], options: CreateMemosOptions = {}): Promise<CreateMemosItem[]> {
    const size = options.batchSize ?? MAX_BATCH_MEMOS;
    if (!Number.isInteger(size) || size < 1 || size > MAX_BATCH_MEMOS) throw new RangeError(`batchSize must be 1 to ${MAX_BATCH_MEMOS}`);
    const calls = Math.ceil(memos.length / size);
    const results: CreateMemosItem[] = [];
    for (let n = 0; n < calls; n++) {
      const key = options.idempotencyKey === undefined ? newKey() : calls === 1 ? options.idempotencyKey : `${options.idempotencyKey}.${n}`;
      const part = memos.slice(n * size, (n + 1) * size);
      const answer = await this.json<{ results: CreateMemosItem[] }>('createMemos', {
        body: { memos: part },
        headers: { 'idempotency-key': key },
        signal: options.signal,
        replayable: true,
      });
      if (answer.results.length !== part.length) throw new Error(`the batch route answered ${answer.results.length} results for ${part.length} memos`);
      results.push(...answer.results);
    }
    return results;
  }

  /** Uploads a file as a new memo (`multipart/form-data`; the server extracts its text). */
  async uploadMemo(file: Blob, filename: string, fields: UploadFields = {}, options: UploadOptions = {}): Promise<CreateMemoResponse> {
    const form = new FormData();
    for (const [name, value] of Object.entries(fields)) {
      if (value === undefined) continue;
      form.append(name, typeof value === 'string' ? value : JSON.stringify(value));
    }
    form.append('file', file, filename);
    const headers = { 'idempotency-key': options.idempotencyKey ?? newKey() };
    if (options.onProgress && typeof (globalThis as { XMLHttpRequest?: unknown }).XMLHttpRequest === 'function') {
      return this.uploadWithProgress(form, headers, options.onProgress, options.signal);
    }
    const result = await this.json<CreateMemoResponse>('createMemo', { form, headers, signal: options.signal, replayable: true });
    options.onProgress?.(file.size, file.size);
    return result;
  }

  listMemos(query: ListMemosQuery = {}, options: { signal?: AbortSignal } = {}): Promise<MemoListResponse> {
    return this.json('listMemos', {
      query: {
        page: query.page,
        page_size: query.page_size,
        filters: query.filters && query.filters.length > 0 ? JSON.stringify(query.filters) : undefined,
      },
      signal: options.signal,
    });
  }

  getMemo(memoId: string, options: MemoRefOptions = {}): Promise<Memo> {
    return this.json('getMemo', this.memoRef(memoId, options));
  }

  updateMemo(memoId: string, body: UpdateMemoBody, options: MemoRefOptions = {}): Promise<OkResponse> {
    return this.json('updateMemo', { ...this.memoRef(memoId, options), body });
  }

  async deleteMemo(memoId: string, options: MemoRefOptions = {}): Promise<void> {
    await this.send('deleteMemo', this.memoRef(memoId, options));
  }

  getMemoStatus(memoId: string, options: MemoRefOptions = {}): Promise<MemoStatus> {
    return this.json('getMemoStatus', this.memoRef(memoId, options));
  }

  getMemoHistory(memoId: string, options: MemoRefOptions = {}): Promise<MemoHistory> {
    return this.json('getMemoHistory', this.memoRef(memoId, options));
  }

  /** The memo's original file, byte for byte, with its content type and file name. */
  async downloadMemoFile(memoId: string, options: MemoRefOptions = {}): Promise<DownloadedFile> {
    const res = await this.send('downloadMemoFile', this.memoRef(memoId, options));
    const disposition = res.headers.get('content-disposition') ?? '';
    const star = /filename\*=UTF-8''([^;]+)/i.exec(disposition);
    const plain = /filename="?([^";]+)"?/i.exec(disposition);
    return {
      bytes: new Uint8Array(await res.arrayBuffer()),
      content_type: res.headers.get('content-type') ?? 'application/octet-stream',
      filename: star ? decodeURIComponent(star[1]!) : plain ? plain[1]! : null,
    };
  }

  /** Polls the memo's status until it is `processed` or `error` (or the time runs out). */
  async waitForMemo(memoId: string, options: MemoRefOptions & { timeoutMs?: number; intervalMs?: number } = {}): Promise<MemoStatus> {
    const deadline = Date.now() + (options.timeoutMs ?? 60_000);
    for (;;) {
      const status = await this.getMemoStatus(memoId, options);
      if (status.status !== 'processing') return status;
      if (Date.now() > deadline) throw new MemexConnectionError(`memo ${memoId} still processing after ${options.timeoutMs ?? 60_000} ms`);
      await sleep(options.intervalMs ?? 250, options.signal);
    }
  }

  // Search and the agent

  search(body: SearchBody, options: { signal?: AbortSignal } = {}): Promise<SearchResponse> {
    return this.json('search', { body: this.withProject(body), signal: options.signal });
  }

  chat(body: ChatBody, options: { signal?: AbortSignal } = {}): Promise<ChatResponse> {
    return this.json('chat', { body: this.withProject({ ...body, stream: false }), signal: options.signal });
  }

  /** A streamed chat: token events, a citations event, then `done` with the chat id. Break (or abort) to stop. */
  chatStream(body: ChatBody, options: { signal?: AbortSignal } = {}): AsyncGenerator<StreamEvent, void, undefined> {
    return this.stream('chat', this.withProject({ ...body, stream: true }), options.signal);
  }

  generate(body: GenerateBody, options: { signal?: AbortSignal } = {}): Promise<GenerateResponse> {
    return this.json('generate', { body: this.withProject({ ...body, stream: false }), signal: options.signal });
  }

  generateStream(body: GenerateBody, options: { signal?: AbortSignal } = {}): AsyncGenerator<StreamEvent, void, undefined> {
    return this.stream('generate', this.withProject({ ...body, stream: true }), options.signal);
  }

  listChats(query: { page?: number; page_size?: number } = {}, options: { signal?: AbortSignal } = {}): Promise<ChatListResponse> {
    return this.json('listChats', { query: { page: query.page, page_size: query.page_size }, signal: options.signal });
  }

  getChat(chatId: string, options: { signal?: AbortSignal } = {}): Promise<Chat> {
    return this.json('getChat', { params: { chat_uuid: chatId }, signal: options.signal });
  }

  // The project

  getProject(options: { signal?: AbortSignal } = {}): Promise<ProjectInfo> {
    return this.json('getProject', { signal: options.signal });
  }

  /** Replaces the project's key; the old one stops working. The new key is in the answer only. */
  rotateProjectKey(options: { signal?: AbortSignal } = {}): Promise<RotatedKey> {
    return this.json('rotateProjectKey', { signal: options.signal });
  }

  /** Queues the project's summaries to be redone by the model (owner keys); `getResummarizeStatus` counts what is left. */
  resummarizeProject(body: ResummarizeBody = {}, options: { signal?: AbortSignal } = {}): Promise<ResummarizeResponse> {
    return this.json('resummarizeProject', { body, signal: options.signal });
  }

  getResummarizeStatus(options: { signal?: AbortSignal } = {}): Promise<ResummarizeStatus> {
    return this.json('getResummarizeStatus', { signal: options.signal });
  }

  // Scoped access

  /** A key confined to `scopes` and the space `filters`; the secret is in the answer only. */
  createKey(body: CreateKeyBody, options: { signal?: AbortSignal } = {}): Promise<CreatedKey> {
    return this.json('createKey', { body, signal: options.signal });
  }

  listKeys(options: { signal?: AbortSignal } = {}): Promise<KeyListResponse> {
    return this.json('listKeys', { signal: options.signal });
  }

  async deleteKey(keyId: string, options: { signal?: AbortSignal } = {}): Promise<void> {
    await this.send('deleteKey', { params: { key_id: keyId }, signal: options.signal });
  }

  /** A short-lived signed token for an end user (`Authorization: Bearer <token>`). */
  createToken(body: CreateTokenBody, options: { signal?: AbortSignal } = {}): Promise<CreatedToken> {
    return this.json('createToken', { body, signal: options.signal });
  }

  /** A page of the audit trail, oldest first; pass `next` as `after` for what follows. */
  listAudit(query: AuditQuery = {}, options: { signal?: AbortSignal } = {}): Promise<AuditResponse> {
    return this.json('listAudit', { query: { ...query }, signal: options.signal });
  }

  // The event feed and webhooks

  /** One page of the project's event feed, oldest first; pass `next` as `after` for the next page. */
  listEvents(query: EventsQuery = {}, options: { signal?: AbortSignal } = {}): Promise<EventsPage> {
    return this.json('listEvents', {
      query: { after: query.after, limit: query.limit, types: query.types?.join(',') },
      signal: options.signal,
    });
  }

  /**
   * Every event of the feed after `after` (default: from the start of retention), as an async
   * iterator. Without `follow` it ends at the feed's end (read in pages of `limit`); with `follow`
   * it streams new events as they happen (SSE), reconnecting after a dropped connection from the
   * last event it yielded. Break (or abort) to stop.
   */
  async *events(options: EventsQuery & { follow?: boolean; signal?: AbortSignal } = {}): AsyncGenerator<FeedEvent, void, undefined> {
    let after = options.after;
    if (!options.follow) {
      for (;;) {
        const page = await this.listEvents({ ...options, ...(after ? { after } : {}) }, { signal: options.signal });
        for (const event of page.events) yield event;
        if (page.events.length === 0) return;
        after = page.next ?? undefined;
      }
    }
    for (let failures = 0; ; ) {
      const controller = new AbortController();
      const onAbort = () => controller.abort(options.signal?.reason);
      options.signal?.addEventListener('abort', onAbort, { once: true });
      try {
        const res = await this.send('listEvents', {
          query: { types: options.types?.join(',') },
          headers: { accept: 'text/event-stream', ...(after ? { 'last-event-id': after } : {}) },
          signal: controller.signal,
        });
        if (!res.body) throw new MemexConnectionError('the feed has no body to stream');
        for await (const data of parseEventStream(res.body)) {
          const event = data as FeedEvent;
          after = event.id;
          failures = 0;
          yield event;
        }
      } catch (error) {
        if (options.signal?.aborted || error instanceof MemexApiError) throw error;
        if (++failures > this.options.maxRetries) throw error;
      } finally {
        options.signal?.removeEventListener('abort', onAbort);
        controller.abort();
      }
      await sleep(this.backoff(failures), options.signal);
    }
  }

  /** Registers a webhook; the answer holds its signing secret, shown this once. */
  createWebhook(body: CreateWebhookBody, options: { signal?: AbortSignal } = {}): Promise<CreatedWebhook> {
    return this.json('createWebhook', { body: this.withProject(body), signal: options.signal });
  }

  /** The project's webhooks (never their secrets). */
  async listWebhooks(options: { signal?: AbortSignal } = {}): Promise<Webhook[]> {
    return (await this.json<{ results: Webhook[] }>('listWebhooks', { signal: options.signal })).results;
  }

  async deleteWebhook(webhookId: string, options: { signal?: AbortSignal } = {}): Promise<void> {
    await this.send('deleteWebhook', { params: { webhook_id: webhookId }, signal: options.signal });
  }

  /** A webhook's latest delivery attempts, newest first. */
  async listWebhookDeliveries(webhookId: string, options: { signal?: AbortSignal } = {}): Promise<WebhookDelivery[]> {
    return (await this.json<{ results: WebhookDelivery[] }>('listWebhookDeliveries', { params: { webhook_id: webhookId }, signal: options.signal })).results;
  }

  // Plumbing

  /** The URL of an operation, with path parameters and the query string filled in. */
  url(operation: OperationId, spec: Pick<RequestSpec, 'params' | 'query'> = {}): string {
    const path = OPERATIONS[operation].path.replace(/\{(\w+)\}/g, (_, name: string) => {
      const value = spec.params?.[name];
      if (value === undefined) throw new TypeError(`${operation}: missing ${name}`);
      return encodeURIComponent(value);
    });
    const search = new URLSearchParams();
    for (const [name, value] of Object.entries(spec.query ?? {})) if (value !== undefined) search.set(name, String(value));
    if (this.options.projectId && OPERATIONS[operation].method !== 'POST') search.set('project_id', this.options.projectId);
    else if (
      this.options.projectId &&
      (operation === 'createMemo' || operation === 'createMemos' || operation === 'rotateProjectKey' || operation === 'resummarizeProject' || operation === 'createKey' || operation === 'createToken')
    ) {
      search.set('project_id', this.options.projectId);
    }
    const qs = search.toString();
    return `${this.baseUrl}${path}${qs ? `?${qs}` : ''}`;
  }

  private memoRef(memoId: string, options: MemoRefOptions): RequestSpec {
    return {
      params: { memo_id: memoId },
      query: { id_type: options.idType && options.idType !== 'memo_uuid' ? options.idType : undefined },
      signal: options.signal,
    };
  }

  private withProject<T extends object>(body: T): T {
    return this.options.projectId ? { ...body, project_id: this.options.projectId } : body;
  }

  private async json<T>(operation: OperationId, spec: RequestSpec): Promise<T> {
    const res = await this.send(operation, spec);
    return (await res.json()) as T;
  }

  private async *stream(operation: 'chat' | 'generate', body: unknown, signal?: AbortSignal): AsyncGenerator<StreamEvent, void, undefined> {
    const controller = new AbortController();
    const onAbort = () => controller.abort(signal?.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const res = await this.send(operation, { body, signal: controller.signal, headers: { accept: 'text/event-stream' } });
      if (!res.body) throw new MemexConnectionError('the answer has no body to stream');
      for await (const event of parseEventStream(res.body)) {
        yield event as StreamEvent;
        if ((event as StreamEvent).type === 'done') return;
      }
    } finally {
      signal?.removeEventListener('abort', onAbort);
      // Leaving early (break, return, an error) closes the connection, which stops generation.
      controller.abort();
    }
  }

  /**
   * Any request to the gateway (`path` from the origin, e.g. `/api/v1/memo`), with the key, retries and
   * backoff of every call, answering the raw Response whatever its status. For tools like `memex api`.
   */
  raw(method: string, path: string, options: { body?: unknown; signal?: AbortSignal } = {}): Promise<Response> {
    const url = new URL(path, `${this.baseUrl}/`).href;
    return this.sendTo(method.toUpperCase(), url, { body: options.body, signal: options.signal }, false);
  }

  /** One API call with retries on 429/503 (honouring Retry-After) and on lost connections when safe. */
  private send(operation: OperationId, spec: RequestSpec): Promise<Response> {
    return this.sendTo(OPERATIONS[operation].method, this.url(operation, spec), spec, true);
  }

  private async sendTo(method: string, url: string, spec: RequestSpec, throwOnError: boolean): Promise<Response> {
    const doFetch = this.options.fetch ?? globalThis.fetch;
    const replayable = spec.replayable ?? method === 'GET';
    for (let attempt = 0; ; attempt++) {
      const headers: Record<string, string> = { authorization: `Bearer ${this.options.apiKey}`, ...spec.headers };
      let body: FormData | string | undefined;
      if (spec.form) body = spec.form;
      else if (spec.body !== undefined) {
        headers['content-type'] = 'application/json';
        body = JSON.stringify(spec.body);
      }
      let res: Response;
      try {
        res = await doFetch(url, { method, headers, ...(body !== undefined ? { body } : {}), ...(spec.signal ? { signal: spec.signal } : {}) });
      } catch (error) {
        if (spec.signal?.aborted || !replayable || attempt >= this.options.maxRetries) {
          throw new MemexConnectionError(`${method} ${url}: ${(error as Error).message}`, { cause: error });
        }
        await sleep(this.backoff(attempt), spec.signal);
        continue;
      }
      if (res.ok) return res;
      const retryAfter = retryAfterMs(res.headers.get('retry-after'));
      if ((res.status === 429 || res.status === 503) && attempt < this.options.maxRetries) {
        await res.body?.cancel().catch(() => undefined);
        const delayMs = Math.min(this.options.maxRetryDelayMs, retryAfter ?? this.backoff(attempt));
        this.options.onRetry?.(res.status, delayMs);
        await sleep(delayMs, spec.signal);
        continue;
      }
      if (!throwOnError) return res;
      throw await this.apiError(res, retryAfter);
    }
  }

  private backoff(attempt: number): number {
    const base = this.options.retryBaseMs * 2 ** attempt;
    return Math.min(this.options.maxRetryDelayMs, base / 2 + Math.random() * (base / 2));
  }

  private async apiError(res: Response, retryAfter: number | undefined): Promise<MemexApiError> {
    const text = await res.text().catch(() => '');
    let body: unknown = text;
    let message = text || res.statusText || `HTTP ${res.status}`;
    try {
      body = JSON.parse(text);
      if (body && typeof body === 'object' && typeof (body as { error?: unknown }).error === 'string') message = (body as { error: string }).error;
    } catch {
      // Not JSON (a proxy's page): keep the text.
    }
    return new MemexApiError(res.status, message, {
      requestId: res.headers.get('x-request-id'),
      retryAfterS: retryAfter === undefined ? null : retryAfter / 1000,
      body,
    });
  }

  /** Browsers: XMLHttpRequest is the one way to see upload progress. */
  private uploadWithProgress(form: FormData, headers: Record<string, string>, onProgress: (sent: number, total: number) => void, signal?: AbortSignal): Promise<CreateMemoResponse> {
    interface Xhr {
      open(method: string, url: string): void;
      setRequestHeader(name: string, value: string): void;
      send(body: FormData): void;
      abort(): void;
      upload: { onprogress: ((e: { loaded: number; total: number }) => void) | null };
      onload: (() => void) | null;
      onerror: (() => void) | null;
      status: number;
      responseText: string;
      getResponseHeader(name: string): string | null;
    }
    const Ctor = (globalThis as unknown as { XMLHttpRequest: new () => Xhr }).XMLHttpRequest;
    return new Promise((resolve, reject) => {
      const xhr = new Ctor();
      xhr.open('POST', this.url('createMemo'));
      xhr.setRequestHeader('authorization', `Bearer ${this.options.apiKey}`);
      for (const [name, value] of Object.entries(headers)) xhr.setRequestHeader(name, value);
      xhr.upload.onprogress = (e) => onProgress(e.loaded, e.total);
      xhr.onerror = () => reject(new MemexConnectionError('upload failed: no answer'));
      xhr.onload = () => {
        let body: unknown;
        try {
          body = JSON.parse(xhr.responseText);
        } catch {
          body = xhr.responseText;
        }
        if (xhr.status >= 200 && xhr.status < 300) resolve(body as CreateMemoResponse);
        else {
          const message = body && typeof body === 'object' && 'error' in body ? String((body as { error: unknown }).error) : `HTTP ${xhr.status}`;
          reject(new MemexApiError(xhr.status, message, { requestId: xhr.getResponseHeader('x-request-id'), body }));
        }
      };
      signal?.addEventListener('abort', () => xhr.abort(), { once: true });
      xhr.send(form);
    });
  }
}
