import { fork, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { DocumentFormat } from '@memex/contracts';
import { ExtractionError, type ExtractLimits } from '../extract/errors';
import type { Extracted } from '../extract/extract';
import type { SandboxReply, SandboxRequest } from './child';

export interface SandboxLimits extends ExtractLimits {
  /** Wall-clock time for one document, parsing included; the child is killed after it. */
  timeoutMs: number;
  /** V8 heap of the child process (`--max-old-space-size`). */
  maxMemoryMb: number;
}

const HERE = dirname(fileURLToPath(import.meta.url));
/** The compiled child beside a compiled extractor (deploy/bundle.ts builds both). */
const BUNDLED_CHILD = join(HERE, 'extractor-child.mjs');

/** What the child process runs: the bundled child beside a bundle, else child.ts through tsx. */
function childModule(): { path: string; loader: string[] } {
  if (existsSync(BUNDLED_CHILD)) return { path: BUNDLED_CHILD, loader: [] };
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
  return { path: join(HERE, 'child.ts'), loader: ['--import', tsx] };
}
/** How long a new child may take to load its parsers (not counted against a document's time). */
const STARTUP_TIMEOUT_MS = 120_000;

/**
 * One child process that extracts documents one at a time under a heap limit, each within a
 * deadline. A document that times out, exhausts the heap or crashes the process ends with an
 * `ExtractionError`, and the process is gone (`alive` false): the pool starts another.
 */
export class SandboxWorker {
  private readonly child: ChildProcess;
  private readonly ready: Promise<void>;
  private stderr = '';
  private nextId = 1;
  private pending: { id: number; resolve: (r: SandboxReply) => void; reject: (e: Error) => void } | undefined;
  private exited = false;
  documents = 0;

  constructor(
    private readonly limits: SandboxLimits,
    { preload = false }: { preload?: boolean } = {},
  ) {
    const child = childModule();
    this.child = fork(child.path, [], {
      execArgv: [...child.loader, `--max-old-space-size=${limits.maxMemoryMb}`, '--stack-size=2000'],
      serialization: 'advanced',
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
      // Nothing of the service's environment (credentials, URLs) reaches the parsers.
      env: { PATH: process.env.PATH ?? '', NODE_ENV: 'production', ...(preload ? { MEMEX_SANDBOX_PRELOAD: '1' } : {}) },
    });
    this.child.stderr?.setEncoding('utf8');
    this.child.stderr?.on('data', (chunk: string) => {
      if (this.stderr.length < 8_000) this.stderr += chunk;
    });
    this.ready = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.kill();
        reject(new ExtractionError('crashed', 'the extraction process did not start in time'));
      }, STARTUP_TIMEOUT_MS);
      this.child.on('message', (reply: SandboxReply) => {
        if ('ready' in reply) {
          clearTimeout(timer);
          resolve();
        } else if (this.pending?.id === reply.id) this.pending.resolve(reply);
      });
      this.child.once('exit', (code, signal) => {
        this.exited = true;
        clearTimeout(timer);
        const error = this.exitError(code, signal);
        reject(error);
        this.pending?.reject(error);
      });
      this.child.once('error', (error) => {
        clearTimeout(timer);
        reject(new ExtractionError('crashed', `the extraction process failed: ${error.message}`));
      });
    });
    this.ready.catch(() => undefined);
  }

  get alive(): boolean {
    return !this.exited && !this.child.killed;
  }

  /** Resolves when the parsers are loaded. */
  started(): Promise<void> {
    return this.ready;
  }

  /** `timeoutMs` overrides the limit for this document. */
  async extract(bytes: Uint8Array, format: DocumentFormat, { timeoutMs = this.limits.timeoutMs }: { timeoutMs?: number } = {}): Promise<Extracted> {
    await this.ready;
    if (this.pending) throw new Error('a sandbox worker takes one document at a time');
    const { timeoutMs: _t, maxMemoryMb: _m, ...extractLimits } = this.limits;
    const id = this.nextId++;
    this.documents++;
    try {
      const reply = await new Promise<SandboxReply>((resolve, reject) => {
        const timer = setTimeout(() => {
          this.kill();
          reject(new ExtractionError('timeout', `extraction took longer than ${Math.round(timeoutMs / 1000)} s`));
        }, timeoutMs);
        this.pending = {
          id,
          resolve: (r) => {
            clearTimeout(timer);
            resolve(r);
          },
          reject: (e) => {
            clearTimeout(timer);
            reject(e);
          },
        };
        const request: SandboxRequest = { id, bytes, format, limits: extractLimits };
        this.child.send(request, (error) => {
          if (error) this.pending?.reject(new ExtractionError('crashed', `could not hand the document over: ${error.message}`));
        });
      });
      if ('ready' in reply) throw new Error('unexpected ready message');
      if (reply.ok) return { format, text: reply.text, pages: reply.pages };
      throw new ExtractionError(reply.failure, reply.message);
    } finally {
      this.pending = undefined;
    }
  }

  kill(): void {
    if (!this.exited) this.child.kill('SIGKILL');
  }

  private exitError(code: number | null, signal: NodeJS.Signals | null): ExtractionError {
    if (/heap out of memory|allocation failed/i.test(this.stderr)) {
      return new ExtractionError('out_of_memory', `extraction needed more than ${this.limits.maxMemoryMb} MB of memory`);
    }
    return new ExtractionError('crashed', `the extraction process ended (${signal ?? `exit ${code}`}) without an answer`);
  }
}

export interface SandboxPoolOptions {
  /** Child processes at most (documents extracted at once). */
  size: number;
  /** Documents one child extracts before it is replaced (bounds what a long-lived heap can gather). */
  maxDocumentsPerProcess?: number;
  /**
   * A child left idle this long is ended (a warm child holds every parser, ~230 MB); the next
   * document starts one again. 0 keeps idle children for good.
   */
  idleTimeoutMs?: number;
}

/**
 * Warm extraction processes: loading the parsers costs a new process seconds, so children are
 * kept and reused one document at a time while documents keep coming, replaced after a failure that
 * killed them or after `maxDocumentsPerProcess` documents, and ended after `idleTimeoutMs` without
 * work, so an idle extractor holds no parser memory.
 */
export class SandboxPool {
  private readonly idle: SandboxWorker[] = [];
  private readonly idleTimers = new Map<SandboxWorker, NodeJS.Timeout>();
  private readonly waiting: ((worker: SandboxWorker) => void)[] = [];
  private live = 0;
  private closed = false;
  private readonly maxDocs: number;

  constructor(
    private readonly limits: SandboxLimits,
    private readonly options: SandboxPoolOptions,
  ) {
    this.maxDocs = options.maxDocumentsPerProcess ?? 200;
  }

  /** Starts every child now, so the first documents do not wait for parsers to load. */
  async warm(): Promise<void> {
    const started: SandboxWorker[] = [];
    while (this.live < this.options.size) {
      this.live++;
      started.push(new SandboxWorker(this.limits, { preload: true }));
    }
    await Promise.allSettled(started.map((w) => w.started()));
    for (const w of started) this.release(w);
  }

  async extract(bytes: Uint8Array, format: DocumentFormat, options: { timeoutMs?: number } = {}): Promise<Extracted> {
    const worker = await this.acquire();
    try {
      return await worker.extract(bytes, format, options);
    } finally {
      this.release(worker);
    }
  }

  /** Child processes running now (busy or idle). */
  get processes(): number {
    return this.live;
  }

  private acquire(): Promise<SandboxWorker> {
    if (this.closed) return Promise.reject(new Error('the sandbox pool is closed'));
    const worker = this.idle.pop();
    if (worker) {
      clearTimeout(this.idleTimers.get(worker));
      this.idleTimers.delete(worker);
      return Promise.resolve(worker);
    }
    if (this.live < this.options.size) {
      this.live++;
      return Promise.resolve(new SandboxWorker(this.limits, { preload: true }));
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private release(worker: SandboxWorker): void {
    let next: SandboxWorker | undefined = worker;
    if (this.closed || !worker.alive || worker.documents >= this.maxDocs) {
      worker.kill();
      this.live--;
      next = undefined;
      if (!this.closed && this.waiting.length > 0) {
        this.live++;
        next = new SandboxWorker(this.limits, { preload: true });
      }
    }
    if (!next) return;
    const waiter = this.waiting.shift();
    if (waiter) waiter(next);
    else this.park(next);
  }

  private park(worker: SandboxWorker): void {
    this.idle.push(worker);
    const idleMs = this.options.idleTimeoutMs ?? 0;
    if (idleMs <= 0) return;
    const timer = setTimeout(() => {
      this.idleTimers.delete(worker);
      const at = this.idle.indexOf(worker);
      if (at < 0) return;
      this.idle.splice(at, 1);
      worker.kill();
      this.live--;
    }, idleMs);
    timer.unref();
    this.idleTimers.set(worker, timer);
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const timer of this.idleTimers.values()) clearTimeout(timer);
    this.idleTimers.clear();
    for (const worker of this.idle.splice(0)) worker.kill();
  }
}

/** Extracts one document in a fresh child process of its own, then ends it. */
export async function runSandboxed(bytes: Uint8Array, format: DocumentFormat, limits: SandboxLimits): Promise<Extracted> {
  const worker = new SandboxWorker(limits);
  try {
    return await worker.extract(bytes, format);
  } finally {
    worker.kill();
  }
}
