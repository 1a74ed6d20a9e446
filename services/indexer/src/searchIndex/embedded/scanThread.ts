/**
 * The exact int8 scan of a large model on a second thread, so that a hybrid search's BM25 half runs
 * on the indexer's thread while its dense half scans (the native scan of @memex/vector-scan, the
 * same call the in-thread scan makes).
 *
 * The thread reads the model's codes where the indexer's thread keeps them, on a SharedArrayBuffer
 * (ModelMemory allocates them there): a request carries a view of them, never a copy. Slots' codes
 * never change once written, and growing or compacting the codes allocates a new buffer, so a scan
 * reads its first `total` slots unchanged whatever the indexer's thread writes meanwhile (a
 * compaction renumbers slots, which the caller detects and then searches again). Requests are
 * answered in order.
 *
 * The worker runs a few lines of CommonJS given as a string, not a file of its own: the services run
 * as one bundled file each (deploy/bundle.ts), and the worker needs only the scan's addon.
 */
import { Worker } from 'node:worker_threads';
import { vectorScanAddonPath, type VectorScan } from '@memex/vector-scan';

/**
 * An exact scan, in either thread: the addon's scan of a model's codes, which the thread that makes
 * it supplies (the top `k` of the first `total` slots, or of `slots` alone, for the quantized `query`).
 */
export type ExactScan = Omit<VectorScan, 'codes'>;

/** What one scan asks of the thread: the scan, over the model's codes (shared, when on a SharedArrayBuffer; else copied). */
type ScanRequest = VectorScan;

/** `cpuNs`: the thread's CPU time in all, read at most every 100 ms (where Linux tells it). */
type WorkerReply = { id: number; keys: Uint32Array; cpuNs?: number } | { id: number; error: string };

const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { readFileSync } = require('node:fs');
const { scan } = require(workerData.addon);
let cpuReadAt = -Infinity;
let cpuReadable = true;
const cpuNs = () => {
  const now = Date.now();
  if (!cpuReadable || now - cpuReadAt < 100) return undefined;
  cpuReadAt = now;
  try {
    return Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]);
  } catch {
    cpuReadable = false;
    return undefined;
  }
};
parentPort.on('message', (m) => {
  try {
    const keys = scan(m.codes, m.total, m.dimension, m.query, m.k, m.cosine === true, m.slots, m.unordered === true);
    parentPort.postMessage({ id: m.id, keys, cpuNs: cpuNs() }, [keys.buffer]);
  } catch (error) {
    parentPort.postMessage({ id: m.id, error: String(error && error.message || error) });
  }
});
`;

export class ScanThread {
  private worker: Worker | undefined;
  private failed: string | undefined;
  private nextId = 0;
  private answered = 0;
  private cpuNs = 0;
  private readonly pending = new Map<number, { resolve: (keys: Uint32Array) => void; reject: (error: Error) => void }>();

  /**
   * `onFailure` hears once why the thread stopped serving; scans then run in the caller's thread.
   * With a `gate`, the thread takes scans only while it is open (see SpareCpuGate).
   */
  constructor(
    private readonly onFailure?: (reason: string) => void,
    private readonly gate?: { readonly open: boolean },
  ) {}

  /** False once the worker could not start or died: callers scan in their own thread. */
  get usable(): boolean {
    return this.failed === undefined;
  }

  /** Usable, and its gate (if any) open: whether a scan should go to the thread now. */
  get engaged(): boolean {
    return this.usable && (this.gate?.open ?? true);
  }

  /** Milliseconds of CPU the thread has used, as it last told (0 where Linux's per-thread figures cannot be read). */
  get cpuMs(): number {
    return this.cpuNs / 1e6;
  }

  /** Scans the thread has answered (for tests and diagnostics). */
  get served(): number {
    return this.answered;
  }

  /**
   * The slot numbers of the `k` best, best first.
   */
  scan(request: ScanRequest): Promise<Uint32Array> {
    const worker = this.start();
    if (!worker) return Promise.reject(new Error(`scan thread unavailable: ${this.failed}`));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      worker.postMessage({ id, ...request });
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
        if (reply.cpuNs !== undefined && Number.isFinite(reply.cpuNs)) this.cpuNs = reply.cpuNs;
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
