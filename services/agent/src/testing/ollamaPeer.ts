/**
 * A scripted stand-in for an Ollama server: enough of `/api/chat` (streamed NDJSON and single
 * replies), `/api/tags`, `/api/show` and `/api/version` to drive the Ollama provider without a
 * model. Each `/api/chat` request takes the next script from a queue; every request is recorded
 * with its parsed body and when its connection closed, so tests can assert on prompts and prove
 * that cancellation reached the upstream request.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chaosScript, type ChaosMode } from '@memex/testing';

/** One piece of a scripted reply, sent after `delayMs`. */
export type PeerStep =
  | { content: string; delayMs?: number }
  | { toolCall: { name: string; arguments: Record<string, unknown> }; delayMs?: number }
  /** An `{ error }` line inside the stream (how Ollama reports a failure after it started answering). */
  | { error: string; delayMs?: number }
  /** Stops writing and keeps the connection open: a server that stalls mid-stream. */
  | { stopMidStream: true; delayMs?: number }
  /** Destroys the socket without finishing the reply. */
  | { dropConnection: true; delayMs?: number }
  /** Tokens every `delayMs` (default 5) until the client goes away: a stream that never stops. */
  | { endless: true; delayMs?: number };

/** What the peer does with one `/api/chat` request. */
export type ChatScript =
  | PeerStep[]
  /** An HTTP error with Ollama's `{ error }` body. */
  | { status: number; error: string }
  /** Never sends a status line. */
  | { hang: true };

/** Overrides one of the metadata endpoints until cleared. */
export type EndpointScript = { status: number; error: string } | { hang: true };

export interface PeerModel {
  name: string;
  /** What `/api/show` reports; Ollama lists e.g. `completion`, `tools`, `vision`. */
  capabilities?: string[];
}

export interface PeerRequest {
  method: string;
  path: string;
  /** The parsed JSON body, or `undefined` for requests without one. */
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- whatever the client sent
  receivedAt: number;
  /** When the connection carrying this request closed or its reply finished; `undefined` while open. */
  closedAt: number | undefined;
  /** True when the client went away before the reply was complete. */
  abandoned: boolean;
  /** Settles when the request is no longer open. */
  closed: Promise<void>;
}

export interface OllamaPeerOptions {
  /** Models `/api/tags` lists (default: `llama3.1:8b` with tool support). */
  models?: PeerModel[];
  version?: string;
}

export interface OllamaPeer {
  /** Base URL, e.g. `http://127.0.0.1:41234`: what `OLLAMA_HOST` would be. */
  readonly url: string;
  /** Every request received, in order. */
  readonly requests: PeerRequest[];
  /** Requests whose reply has neither finished nor been abandoned by the client. */
  readonly openRequests: number;
  /** The models `/api/tags` and `/api/show` know; replace to simulate a missing model. */
  models: PeerModel[];
  /** Queues scripts for the next `/api/chat` requests, first in first out. */
  script(...scripts: ChatScript[]): void;
  /** Answers every `/api/chat` request with this misbehaviour (the OpenAI peer's modes) while no script is queued. */
  chaos(mode: ChaosMode | undefined, options?: { slowMs?: number }): void;
  /** Scripts still waiting for a request. */
  readonly pending: number;
  /** The bodies of the `/api/chat` requests received so far. */
  chatBodies(): any[]; // eslint-disable-line @typescript-eslint/no-explicit-any -- request bodies as sent
  /** Makes `/api/tags`, `/api/show` or `/api/version` fail or hang; `undefined` restores it. */
  override(path: '/api/tags' | '/api/show' | '/api/version', script: EndpointScript | undefined): void;
  /** Forgets scripts, overrides and recorded requests (open connections stay as they are). */
  reset(): void;
  close(): Promise<void>;
}

const DEFAULT_MODELS: PeerModel[] = [{ name: 'llama3.1:8b', capabilities: ['completion', 'tools'] }];

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

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function matches(model: PeerModel, name: unknown): boolean {
  if (typeof name !== 'string') return false;
  return model.name === name || model.name === `${name}:latest`;
}

export async function startOllamaPeer(options: OllamaPeerOptions = {}): Promise<OllamaPeer> {
  const requests: PeerRequest[] = [];
  const queue: ChatScript[] = [];
  const overrides = new Map<string, EndpointScript>();
  let models = options.models ?? DEFAULT_MODELS.map((m) => ({ ...m }));
  const version = options.version ?? '0.12.0';

  const stamp = (model: unknown) => ({ model: typeof model === 'string' ? model : 'unknown', created_at: new Date().toISOString() });

  let chaos: { mode: ChaosMode; slowMs: number } | undefined;

  async function chat(body: any, res: ServerResponse, gone: () => boolean): Promise<void> { // eslint-disable-line @typescript-eslint/no-explicit-any
    // Ollama streams unless told not to; the chaos scripts read `stream: true` as streaming.
    const script: ChatScript | undefined = queue.shift() ?? (chaos ? (chaosScript(chaos.mode, { ...body, stream: body?.stream !== false }, chaos.slowMs) as ChatScript) : undefined);
    if (!script) {
      sendJson(res, 500, { error: 'ollama peer: no script queued for this /api/chat request' });
      return;
    }
    if ('hang' in script) return;
    if ('status' in script) {
      sendJson(res, script.status, { error: script.error });
      return;
    }
    const streaming = body?.stream !== false;
    if (!streaming) {
      let content = '';
      const toolCalls: unknown[] = [];
      for (const step of script) {
        if (step.delayMs) await sleep(step.delayMs);
        if (gone()) return;
        if ('stopMidStream' in step || 'endless' in step) return;
        if ('dropConnection' in step) {
          res.socket?.destroy();
          return;
        }
        if ('error' in step) {
          sendJson(res, 500, { error: step.error });
          return;
        }
        if ('content' in step) content += step.content;
        else toolCalls.push({ function: { name: step.toolCall.name, arguments: step.toolCall.arguments } });
      }
      sendJson(res, 200, {
        ...stamp(body?.model),
        message: { role: 'assistant', content, ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}) },
        done: true,
        done_reason: 'stop',
        total_duration: 1,
        eval_count: 1,
      });
      return;
    }
    res.writeHead(200, { 'content-type': 'application/x-ndjson' });
    res.flushHeaders();
    const line = (value: unknown) => res.write(`${JSON.stringify(value)}\n`);
    for (const step of script) {
      if (step.delayMs) await sleep(step.delayMs);
      if (gone()) return;
      if ('stopMidStream' in step) return;
      if ('dropConnection' in step) {
        res.socket?.destroy();
        return;
      }
      if ('error' in step) {
        line({ error: step.error });
        res.end();
        return;
      }
      if ('endless' in step) {
        for (let i = 0; !gone(); i++) {
          line({ ...stamp(body?.model), message: { role: 'assistant', content: `more${i} ` }, done: false });
          await sleep(step.delayMs ?? 5);
        }
        return;
      }
      if ('content' in step) line({ ...stamp(body?.model), message: { role: 'assistant', content: step.content }, done: false });
      else
        line({
          ...stamp(body?.model),
          message: { role: 'assistant', content: '', tool_calls: [{ function: { name: step.toolCall.name, arguments: step.toolCall.arguments } }] },
          done: false,
        });
    }
    line({ ...stamp(body?.model), message: { role: 'assistant', content: '' }, done: true, done_reason: 'stop', total_duration: 1, eval_count: 1 });
    res.end();
  }

  async function handle(req: IncomingMessage, res: ServerResponse, record: PeerRequest): Promise<void> {
    const path = record.path;
    const override = overrides.get(path);
    if (override) {
      if ('hang' in override) return;
      sendJson(res, override.status, { error: override.error });
      return;
    }
    const body = record.body;
    if (req.method === 'POST' && path === '/api/chat') return chat(body, res, () => record.closedAt !== undefined);
    if (req.method === 'GET' && path === '/api/tags') {
      sendJson(res, 200, {
        models: models.map((m) => ({
          name: m.name,
          model: m.name,
          modified_at: new Date().toISOString(),
          size: 1,
          digest: 'sha256:0',
          details: { format: 'gguf', family: 'llama', parameter_size: '8B', quantization_level: 'Q4_K_M' },
        })),
      });
      return;
    }
    if (req.method === 'POST' && path === '/api/show') {
      const model = models.find((m) => matches(m, body?.model ?? body?.name));
      if (!model) sendJson(res, 404, { error: `model '${String(body?.model)}' not found` });
      else sendJson(res, 200, { details: { family: 'llama' }, capabilities: model.capabilities ?? ['completion'], model_info: {} });
      return;
    }
    if (req.method === 'GET' && path === '/api/version') {
      sendJson(res, 200, { version });
      return;
    }
    sendJson(res, 404, { error: `ollama peer: ${req.method} ${path} is not served` });
  }

  const server: Server = createServer((req, res) => {
    let resolveClosed!: () => void;
    const record: PeerRequest = {
      method: req.method ?? 'GET',
      path: new URL(req.url ?? '/', 'http://peer').pathname,
      body: undefined,
      receivedAt: Date.now(),
      closedAt: undefined,
      abandoned: false,
      closed: new Promise<void>((resolve) => (resolveClosed = resolve)),
    };
    requests.push(record);
    // 'close' fires once the reply finished or the connection went away, whichever comes first.
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

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    get openRequests() {
      return requests.filter((r) => r.closedAt === undefined).length;
    },
    get models() {
      return models;
    },
    set models(value: PeerModel[]) {
      models = value;
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
      return requests.filter((r) => r.path === '/api/chat').map((r) => r.body);
    },
    override(path, script) {
      if (script) overrides.set(path, script);
      else overrides.delete(path);
    },
    reset() {
      queue.length = 0;
      chaos = undefined;
      overrides.clear();
      requests.length = 0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
