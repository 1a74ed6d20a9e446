/**
 * Whether the machine has CPU to spare for the scan thread, for INDEXER_SCAN_THREAD=auto on a
 * machine of 2 cores or fewer, where the same cores also run the gateway, NATS, the other services
 * and often the clients.
 *
 * There the thread pays off only while the indexer's thread is the bottleneck and the other core is
 * partly idle: searches alone at 98,810 chunks ran ~30% faster with it, while mixed loads, which
 * already keep both cores busy, ran 3-6% slower (bench:load, docs/benchmarks.md). So the gate reads
 * the machine's idle time (Linux's /proc/stat) every `intervalMs`, adds back the CPU the scan thread
 * itself took (the thread reports it: /proc/thread-self/schedstat), since that time would be idle
 * without it, and stays open while that spare share of the machine, smoothed over a few samples,
 * is at least `openAt`. The two measures are alike with the thread in use or not, so the gate does
 * not flip each time its own choice changes the load.
 *
 * Where /proc/stat cannot be read (not Linux), the gate stays shut: scans run in the indexer's
 * thread, as they did on 2 cores before it.
 */
import { readFileSync } from 'node:fs';

/** The machine's CPU time in all (every core) and the idle part of it, in any one unit, and how many cores. */
export interface MachineCpu {
  idle: number;
  total: number;
  cores: number;
}

/** The aggregate `cpu` line of /proc/stat (idle and iowait count as idle); undefined where unreadable. */
export function readMachineCpu(read: () => string = () => readFileSync('/proc/stat', 'utf8')): MachineCpu | undefined {
  let text: string;
  try {
    text = read();
  } catch {
    return undefined;
  }
  const lines = text.split('\n');
  const line = lines[0] ?? '';
  const cores = lines.filter((l) => /^cpu\d/.test(l)).length;
  const fields = line.trim().split(/\s+/);
  if (fields[0] !== 'cpu' || fields.length < 6) return undefined;
  // user nice system idle iowait irq softirq steal (guest time is already inside user and nice)
  const values = fields.slice(1, 9).map(Number);
  if (values.some((v) => !Number.isFinite(v))) return undefined;
  const total = values.reduce((sum, v) => sum + v, 0);
  return { idle: values[3]! + values[4]!, total, cores: Math.max(1, cores) };
}

export interface SpareCpuOptions {
  /** The machine's counters now (readMachineCpu by default). */
  sample?: () => MachineCpu | undefined;
  /** Milliseconds of CPU the scan thread has used in all, as it last reported. */
  threadCpuMs: () => number;
  now?: () => number;
  intervalMs?: number;
  /** Spare share of the whole machine (0-1) the gate stays open at: 0.2, a fifth of 2 cores. */
  openAt?: number;
}

export class SpareCpuGate {
  private readonly sample: () => MachineCpu | undefined;
  private readonly now: () => number;
  private readonly openAt: number;
  private last: { cpu: MachineCpu; threadMs: number; at: number } | undefined;
  /** The spare share, smoothed; undefined before two samples. */
  private smoothed: number | undefined;
  private readable = true;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly options: SpareCpuOptions) {
    this.sample = options.sample ?? (() => readMachineCpu());
    this.now = options.now ?? (() => performance.now());
    this.openAt = options.openAt ?? 0.2;
  }

  /** Open: the scan thread may take a scan. Open until measured otherwise (a machine starting is idle). */
  get open(): boolean {
    return this.readable && (this.smoothed === undefined || this.smoothed >= this.openAt);
  }

  /** The last smoothed spare share (0-1), for diagnostics and tests. */
  get spare(): number | undefined {
    return this.smoothed;
  }

  /** Samples now, then every `intervalMs` (500) on a timer that never keeps the process alive. */
  start(): this {
    this.tick();
    if (!this.timer && this.readable) {
      this.timer = setInterval(() => this.tick(), this.options.intervalMs ?? 500);
      this.timer.unref();
    }
    return this;
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One sample: the spare share since the last one, folded into the smoothed share. */
  tick(): void {
    const cpu = this.sample();
    if (!cpu) {
      this.readable = false;
      this.stop();
      return;
    }
    const threadMs = this.options.threadCpuMs();
    const at = this.now();
    const last = this.last;
    this.last = { cpu, threadMs, at };
    if (!last || cpu.total <= last.cpu.total || at <= last.at) return;
    const idle = (cpu.idle - last.cpu.idle) / (cpu.total - last.cpu.total);
    const thread = Math.max(0, threadMs - last.threadMs) / ((at - last.at) * cpu.cores);
    const spare = Math.min(1, Math.max(0, idle + thread));
    // (half the weight on the newest sample: a change of load shows within a second or two)
    this.smoothed = this.smoothed === undefined ? spare : (this.smoothed + spare) / 2;
  }
}
