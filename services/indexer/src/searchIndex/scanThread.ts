/**
 * The exact int8 scan of a large model on a second thread, so that a hybrid search's BM25 half runs
 * on the indexer's thread while its dense half scans (the native scan of @memex/vector-scan, the
 * same call the in-thread scan makes).
 *
 * The thread keeps its own copy of each model's codes, a mirror: slots' codes never change once
 * written, so a scan request carries the codes written since the last one (`append`), or all of
 * them after a compaction renumbered the slots (`reset`). Requests are answered in order; a model's
 * mirror is dropped with it.
 *
 * The worker runs a few lines of CommonJS given as a string, not a file of its own: the services run
 * as one bundled file each (deploy/bundle.ts), and the worker needs only the scan's addon.
 */
import { Worker } from 'node:worker_threads';
import { vectorScanAddonPath } from '@memex/vector-scan';

/**
 * An exact scan, in either thread: the top `wanted` of a model's first `total` slots (of `slots`
 * alone, ascending, when given) for the quantized `query`, by inner product or cosine.
 */
export interface ExactScan {
  dimension: number;
  total: number;
  query: Int8Array;
  wanted: number;
  metric: 'IP' | 'Cos';
  /** Only these slots (the findable ones, ascending); every slot below `total` when absent. */
  slots?: Uint32Array;
}

/** What one scan asks of the thread: the mirror's new codes, if any, then the scan over the mirror. */
export interface ScanRequest extends ExactScan {
  mirror: number;
  /** Every slot's codes, replacing the mirror's (a new model memory, or slots compacted). */
  reset?: Int8Array;
  /** Codes of slots `from`… written since the mirror last grew. */
  append?: { from: number; codes: Int8Array };
}

type WorkerReply = { id: number; keys: Uint32Array } | { id: number; error: string };

const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { scan } = require(workerData.addon);
const mirrors = new Map();
parentPort.on('message', (m) => {
  if (m.drop !== undefined) { mirrors.delete(m.drop); return; }
  try {
    let mirror = mirrors.get(m.mirror);
    if (m.reset) { mirror = { codes: m.reset }; mirrors.set(m.mirror, mirror); }
    if (!mirror) throw new Error('no codes for mirror ' + m.mirror);
    if (m.append) {
      const end = m.append.from * m.dimension + m.append.codes.length;
      if (end > mirror.codes.length) {
        const grown = new Int8Array(Math.max(end, mirror.codes.length * 2));
        grown.set(mirror.codes);
        mirror.codes = grown;
      }
      mirror.codes.set(m.append.codes, m.append.from * m.dimension);
    }
    const keys = scan(mirror.codes, m.total, m.dimension, m.query, m.wanted, m.metric === 'Cos', m.slots);
    parentPort.postMessage({ id: m.id, keys }, [keys.buffer]);
  } catch (error) {
    parentPort.postMessage({ id: m.id, error: String(error && error.message || error) });
  }
});
`;

export class ScanThread {
  private worker: Worker | undefined;
  private failed: string | undefined;
  private nextId = 0;
  private nextMirror = 0;
  private answered = 0;
  private readonly pending = new Map<number, { resolve: (keys: Uint32Array) => void; reject: (error: Error) => void }>();

  /** `onFailure` hears once why the thread stopped serving; scans then run in the caller's thread. */
  constructor(private readonly onFailure?: (reason: string) => void) {}

  /** False once the worker could not start or died: callers scan in their own thread. */
  get usable(): boolean {
    return this.failed === undefined;
  }

  /** Scans the thread has answered (for tests and diagnostics). */
  get served(): number {
    return this.answered;
  }

  /** A new mirror's id (one per model memory). */
  newMirror(): number {
    return this.nextMirror++;
  }

  /** Drops a mirror's codes (its model memory is gone). */
  drop(mirror: number): void {
    this.worker?.postMessage({ drop: mirror });
  }

  /**
   * The slot numbers of the `wanted` best, best first. The codes in
   * `reset`/`append` are moved to the thread (their buffers are detached here).
   */
  scan(request: ScanRequest): Promise<Uint32Array> {
    const worker = this.start();
    if (!worker) return Promise.reject(new Error(`scan thread unavailable: ${this.failed}`));
    const id = this.nextId++;
    const transfer: ArrayBuffer[] = [];
    if (request.reset) transfer.push(request.reset.buffer as ArrayBuffer);
    if (request.append) transfer.push(request.append.codes.buffer as ArrayBuffer);
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      worker.postMessage({ id, ...request }, transfer);
    });
  }

  /** Stops the worker; scans still waiting fail (their callers scan in their own thread). */
  async close(): Promise<void> {
    const worker = this.worker;
    this.fail('closed');
    if (worker) await worker.terminate();
  }

  private start(): Worker | undefined {
    if (this.failed !== undefined) return undefined;
    if (this.worker) return this.worker;
    let addon: string;
    try {
      addon = vectorScanAddonPath();
    } catch (error) {
      this.fail((error as Error).message);
      return undefined;
    }
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { addon } });
    // An idle scan thread never keeps the process alive.
    worker.unref();
    worker.on('message', (reply: WorkerReply) => {
      const waiting = this.pending.get(reply.id);
      if (!waiting) return;
      this.pending.delete(reply.id);
      if ('error' in reply) waiting.reject(new Error(reply.error));
      else {
        this.answered += 1;
        waiting.resolve(reply.keys);
      }
    });
    worker.on('error', (error) => this.fail(error.message));
    worker.on('exit', (code) => this.fail(`exited with code ${code}`));
    this.worker = worker;
    return worker;
  }

  private fail(reason: string): void {
    if (this.failed !== undefined) return;
    this.failed = reason;
    this.worker = undefined;
    for (const { reject } of this.pending.values()) reject(new Error(`scan thread stopped: ${reason}`));
    this.pending.clear();
    if (reason !== 'closed') this.onFailure?.(reason);
  }
}
