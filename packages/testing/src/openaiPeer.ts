/**
 * A scripted stand-in for an OpenAI-compatible model server (what vLLM, llama.cpp server, LM Studio,
 * TEI and Ollama's `/v1` serve): `/v1/chat/completions` (SSE chunks ending in `[DONE]`, or one JSON
 * reply), `/v1/models`, and deterministic `/v1/embeddings`, Ollama `/api/embed` and `/v1/rerank` +
 * `/rerank`, so chat, embedding and rerank adapters run without a model. Each chat request takes the
 * next script from a queue; every request is recorded with its body and when its connection closed.
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type OpenAiPeerStep =
  | { content: string; delayMs?: number }
  | { toolCall: { name: string; arguments: Record<string, unknown> | string }; delayMs?: number }
  /** An `{ error }` event inside the stream. */
  | { error: string; delayMs?: number }
  | { stopMidStream: true; delayMs?: number }
  | { dropConnection: true; delayMs?: number }
  /** Tokens every `delayMs` (default 5) until the client goes away: a stream that never stops. */
  | { endless: true; delayMs?: number };

/**
 * Ways a real model server misbehaves, served for every chat request while no script is queued
 * (`peer.chaos(mode)`). Summary requests (those asking for JSON) and answers both get the mode.
 */
export type ChaosMode =
  /** Plain prose for everything, summaries included; `tools` accepted and never called. */
  | 'prose'
  /** Summaries as JSON inside a Markdown code fence; answers in prose. */
  | 'fenced-json'
  /** Summaries as JSON cut off before its end; answers in prose. */
  | 'invalid-json'
  /** A reply with no text at all. */
  | 'empty'
  /** 500 for every chat request. */
  | 'server-error'
  /** 429 with `Retry-After: 1` for every chat request. */
  | 'rate-limited'
  /** Prose whose first token comes after `slowMs` (default 1500). */
  | 'slow-first-token'
  /** Half of a prose answer, then the connection is dropped. */
  | 'cut-mid-stream'
  /** Streams never end (a non-streamed reply never comes). */
  | 'endless'
  /** Accepts `tools` and never calls them: prose. */
  | 'tools-ignored';

export const CHAOS_MODES: readonly ChaosMode[] = [
  'prose',
  'fenced-json',
  'invalid-json',
  'empty',
  'server-error',
  'rate-limited',
  'slow-first-token',
  'cut-mid-stream',
  'endless',
  'tools-ignored',
];

/** What a prose-only model says to a request: a sentence about the text it was given. */
export function chaosProse(body: any): string { // eslint-disable-line @typescript-eslint/no-explicit-any -- a request body as sent
  const last = Array.isArray(body?.messages) ? String(body.messages.at(-1)?.content ?? '') : '';
  const quoted = /<(?:note|passage)[^>]*>\s*([\s\S]*?)<\/(?:note|passage)>/.exec(last)?.[1] ?? last;
  const words = quoted.replace(/<[^>]+>/g, ' ').split(/\s+/).filter(Boolean).slice(0, 12).join(' ');
  return `This text is mostly about ${words || 'nothing in particular'}. It reads like a short note.`;
}

const isSummaryRequest = (body: any) => // eslint-disable-line @typescript-eslint/no-explicit-any -- a request body as sent
  body?.stream !== true && Array.isArray(body?.messages) && /\{"summary"/.test(String(body.messages[0]?.content ?? ''));

function pieces(text: string, delayMs = 0): OpenAiPeerStep[] {
  return (text.match(/\S+\s*/g) ?? []).map((content) => ({ content, ...(delayMs ? { delayMs } : {}) }));
}

/** The script a chaos mode answers `body` with. */
export function chaosScript(mode: ChaosMode, body: any, slowMs = 1_500): OpenAiChatScript { // eslint-disable-line @typescript-eslint/no-explicit-any -- a request body as sent
  const prose = chaosProse(body);
  const summary = isSummaryRequest(body);
  switch (mode) {
    case 'prose':
    case 'tools-ignored':
      return pieces(prose);
    case 'fenced-json':
      return summary ? [{ content: '```json\n' + JSON.stringify({ summary: prose, tags: ['chaos', 'fenced'] }) + '\n```' }] : pieces(prose);
    case 'invalid-json':
      return summary ? [{ content: JSON.stringify({ summary: prose, tags: ['chaos', 'invalid'] }).slice(0, -12) }] : pieces(prose);
    case 'empty':
      return [{ content: '' }];
    case 'server-error':
      return { status: 500, error: 'chaos: internal server error' };
    case 'rate-limited':
      return { status: 429, error: 'chaos: rate limit reached', retryAfter: '1' };
    case 'slow-first-token': {
      const [first, ...rest] = pieces(prose);
      return [{ ...first!, delayMs: slowMs }, ...rest];
    }
    case 'cut-mid-stream': {
      if (summary) return [{ dropConnection: true }];
      const all = pieces(prose, 5);
      return [...all.slice(0, Math.ceil(all.length / 2)), { dropConnection: true }];
    }
    case 'endless':
      return body?.stream === true ? [{ endless: true }] : { hang: true };
    default: {
      const never: never = mode;
      throw new Error(`unknown chaos mode ${String(never)}`);
    }
  }
}

export type OpenAiChatScript =
  | OpenAiPeerStep[]
  | { status: number; error: string; retryAfter?: string }
  | { hang: true };

export interface OpenAiPeerRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- whatever the client sent
  receivedAt: number;
  closedAt: number | undefined;
  abandoned: boolean;
  closed: Promise<void>;
}

export interface OpenAiPeerOptions {
  /** Ids `/v1/models` lists (default: `test-model`, `test-embed`, `test-rerank`). */
  models?: string[];
  /** When false, a chat request carrying `tools` is rejected with 400, as servers without tool support do. */
  tools?: boolean;
  /** When false, `response_format` is rejected with 400. */
  jsonMode?: boolean;
  /** Dimension of the embeddings served (default 16). */
  dimension?: number;
  /** Requires `Authorization: Bearer <apiKey>` on every request when set. */
  apiKey?: string;
}

export interface OpenAiPeer {
  /** `http://127.0.0.1:<port>/v1`: what `OPENAI_BASE_URL` would be. */
  readonly url: string;
  /** `http://127.0.0.1:<port>`: the server root (Ollama's `/api/embed`, TEI's `/rerank`). */
  readonly root: string;
  readonly requests: OpenAiPeerRequest[];
  readonly openRequests: number;
  script(...scripts: OpenAiChatScript[]): void;
  /** Answers every chat request with this misbehaviour while no script is queued; `undefined` ends it. */
  chaos(mode: ChaosMode | undefined, options?: { slowMs?: number }): void;
  readonly pending: number;
  chatBodies(): any[]; // eslint-disable-line @typescript-eslint/no-explicit-any -- request bodies as sent
  /** Makes the next `count` embedding or rerank requests fail with `status`. */
  failNext(path: 'embeddings' | 'rerank', status: number, count?: number): void;
  /** Changes the embedding dimension served (a "model switch" on the remote side). */
  dimension: number;
  reset(): void;
  close(): Promise<void>;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

const words = (text: string) => text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];

/** A deterministic, L2-normalised bag-of-words vector: texts sharing words are close. */
export function peerEmbedding(text: string, dimension: number, model = ''): number[] {
  const v = new Array<number>(dimension).fill(0);
  for (const w of words(text)) {
    const h = createHash('sha256').update(`${model}|${w}`).digest();
    v[h.readUInt32LE(0) % dimension]! += h[4]! & 1 ? 1 : -1;
  }
  const norm = Math.hypot(...v) || 1;
  return v.map((x) => x / norm);
}

/** Relevance the peer's "reranker" gives: the share of query words found in the document. */
export function peerRerankScore(query: string, document: string): number {
  const q = new Set(words(query));
  if (q.size === 0) return 0;
  const d = new Set(words(document));
  let hit = 0;
  for (const w of q) if (d.has(w)) hit += 1;
  return hit / q.size;
}

export async function startOpenAiPeer(options: OpenAiPeerOptions = {}): Promise<OpenAiPeer> {
  const requests: OpenAiPeerRequest[] = [];
  const queue: OpenAiChatScript[] = [];
  const failures = new Map<string, { status: number; count: number }>();
  const models = options.models ?? ['test-model', 'test-embed', 'test-rerank'];
  let dimension = options.dimension ?? 16;
  let counter = 0;
  let chaos: { mode: ChaosMode; slowMs: number } | undefined;

  const failure = (kind: string): number | undefined => {
    const f = failures.get(kind);
    if (!f || f.count <= 0) return undefined;
    f.count -= 1;
    return f.status;
  };

  async function chat(body: any, res: ServerResponse, gone: () => boolean): Promise<void> { // eslint-disable-line @typescript-eslint/no-explicit-any
    if (options.tools === false && Array.isArray(body?.tools)) {
      sendJson(res, 400, { error: { message: '"tools" is not supported by this server', type: 'invalid_request_error' } });
      return;
    }
    if (options.jsonMode === false && body?.response_format) {
      sendJson(res, 400, { error: { message: 'response_format is not supported', type: 'invalid_request_error' } });
      return;
    }
    const script = queue.shift() ?? (chaos ? chaosScript(chaos.mode, body, chaos.slowMs) : undefined);
    if (!script) {
      sendJson(res, 500, { error: { message: 'openai peer: no script queued for this request' } });
      return;
    }
    if ('hang' in script) return;
    if ('status' in script) {
      sendJson(res, script.status, { error: { message: script.error } }, script.retryAfter !== undefined ? { 'retry-after': script.retryAfter } : {});
      return;
    }
    const id = `chatcmpl-${++counter}`;
    const model = typeof body?.model === 'string' ? body.model : 'unknown';
    const args = (a: Record<string, unknown> | string) => (typeof a === 'string' ? a : JSON.stringify(a));
    if (body?.stream !== true) {
      let content = '';
      const toolCalls: unknown[] = [];
      for (const step of script) {
        if (step.delayMs) await sleep(step.delayMs);
        if (gone() || 'stopMidStream' in step || 'endless' in step) return;
        if ('dropConnection' in step) {
          res.socket?.destroy();
          return;
        }
        if ('error' in step) {
          sendJson(res, 500, { error: { message: step.error } });
          return;
        }
        if ('content' in step) content += step.content;
        else toolCalls.push({ id: `call_${toolCalls.length}`, type: 'function', function: { name: step.toolCall.name, arguments: args(step.toolCall.arguments) } });
      }
      sendJson(res, 200, {
        id,
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model,
        choices: [{ index: 0, message: { role: 'assistant', content, ...(toolCalls.length ? { tool_calls: toolCalls } : {}) }, finish_reason: toolCalls.length ? 'tool_calls' : 'stop' }],
      });
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    res.flushHeaders();
    const event = (delta: unknown, finish: string | null = null) =>
      res.write(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created: 0, model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`);
    event({ role: 'assistant', content: '' });
    let tools = 0;
    for (const step of script) {
      if (step.delayMs) await sleep(step.delayMs);
      if (gone() || 'stopMidStream' in step) return;
      if ('dropConnection' in step) {
        res.socket?.destroy();
        return;
      }
      if ('error' in step) {
        res.write(`data: ${JSON.stringify({ error: { message: step.error } })}\n\n`);
        res.end();
        return;
      }
      if ('endless' in step) {
        for (let i = 0; !gone(); i++) {
          event({ content: `more${i} ` });
          await sleep(step.delayMs ?? 5);
        }
        return;
      }
      if ('content' in step) event({ content: step.content });
      else {
        // Arguments arrive in two pieces, as real servers stream them.
        const whole = args(step.toolCall.arguments);
        const half = Math.floor(whole.length / 2);
        event({ tool_calls: [{ index: tools, id: `call_${tools}`, type: 'function', function: { name: step.toolCall.name, arguments: whole.slice(0, half) } }] });
        event({ tool_calls: [{ index: tools, function: { arguments: whole.slice(half) } }] });
        tools += 1;
      }
    }
    event({}, tools > 0 ? 'tool_calls' : 'stop');
    res.write('data: [DONE]\n\n');
    res.end();
  }

  async function handle(req: IncomingMessage, res: ServerResponse, record: OpenAiPeerRequest): Promise<void> {
    if (options.apiKey && req.headers.authorization !== `Bearer ${options.apiKey}`) {
      sendJson(res, 401, { error: { message: 'invalid api key' } });
      return;
    }
    const { path, body } = record;
    if (req.method === 'POST' && path === '/v1/chat/completions') return chat(body, res, () => record.closedAt !== undefined);
    if (req.method === 'GET' && path === '/v1/models') {
      sendJson(res, 200, { object: 'list', data: models.map((id) => ({ id, object: 'model', owned_by: 'peer' })) });
      return;
    }
    if (req.method === 'POST' && (path === '/v1/embeddings' || path === '/api/embed')) {
      const status = failure('embeddings');
      if (status) {
        sendJson(res, status, { error: { message: `scripted ${status}` } });
        return;
      }
      const input: unknown = body?.input;
      const texts = typeof input === 'string' ? [input] : Array.isArray(input) ? input : undefined;
      if (!texts || texts.some((t) => typeof t !== 'string')) {
        sendJson(res, 400, { error: { message: 'input must be a string or an array of strings' } });
        return;
      }
      const vectors = (texts as string[]).map((t) => peerEmbedding(t, dimension, String(body.model)));
      if (path === '/api/embed') sendJson(res, 200, { model: body.model, embeddings: vectors });
      else sendJson(res, 200, { object: 'list', model: body.model, data: vectors.map((embedding, index) => ({ object: 'embedding', index, embedding })) });
      return;
    }
    if (req.method === 'POST' && (path === '/v1/rerank' || path === '/rerank')) {
      const status = failure('rerank');
      if (status) {
        sendJson(res, status, { error: { message: `scripted ${status}` } });
        return;
      }
      // TEI takes {query, texts} and answers [{index, score}]; Jina/Cohere/vLLM take {query, documents} and answer {results: [{index, relevance_score}]}.
      const docs: unknown = body?.texts ?? body?.documents;
      if (typeof body?.query !== 'string' || !Array.isArray(docs)) {
        sendJson(res, 400, { error: { message: 'query and documents are required' } });
        return;
      }
      const scored = docs
        .map((d, index) => ({ index, score: peerRerankScore(body.query, typeof d === 'string' ? d : String((d as { text?: unknown })?.text ?? '')) }))
        .sort((a, b) => b.score - a.score);
      if (body.texts) sendJson(res, 200, scored);
      else sendJson(res, 200, { model: body.model, results: scored.slice(0, body.top_n ?? scored.length).map((s) => ({ index: s.index, relevance_score: s.score })) });
      return;
    }
    sendJson(res, 404, { error: { message: `openai peer: ${req.method} ${path} is not served` } });
  }

  const server: Server = createServer((req, res) => {
    let resolveClosed!: () => void;
    const record: OpenAiPeerRequest = {
      method: req.method ?? 'GET',
      path: new URL(req.url ?? '/', 'http://peer').pathname,
      headers: req.headers,
      body: undefined,
      receivedAt: Date.now(),
      closedAt: undefined,
      abandoned: false,
      closed: new Promise<void>((resolve) => (resolveClosed = resolve)),
    };
    requests.push(record);
    res.on('close', () => {
      record.closedAt = Date.now();
      record.abandoned = !res.writableFinished;
      resolveClosed();
    });
    readBody(req)
      .then((body) => {
        record.body = body;
        return handle(req, res, record);
      })
      .catch(() => res.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const root = `http://127.0.0.1:${port}`;

  return {
    url: `${root}/v1`,
    root,
    requests,
    get openRequests() {
      return requests.filter((r) => r.closedAt === undefined).length;
    },
    script(...scripts) {
      queue.push(...scripts);
    },
    chaos(mode, chaosOptions = {}) {
      chaos = mode === undefined ? undefined : { mode, slowMs: chaosOptions.slowMs ?? 1_500 };
    },
    get pending() {
      return queue.length;
    },
    chatBodies() {
      return requests.filter((r) => r.path === '/v1/chat/completions').map((r) => r.body);
    },
    failNext(kind, status, count = 1) {
      failures.set(kind, { status, count });
    },
    get dimension() {
      return dimension;
    },
    set dimension(value: number) {
      dimension = value;
    },
    reset() {
      queue.length = 0;
      chaos = undefined;
      failures.clear();
      requests.length = 0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
