/**
 * Whether the machine has CPU to spare for the scan thread, for INDEXER_SCAN_THREAD=auto on a
 * machine of 2 cores or fewer, where the same cores also run the gateway, NATS, the other services
 * and often the clients.
 *
 * There the thread pays off only while the indexer's thread is the bottleneck and the other core is
 * partly idle; under loads that already keep both cores busy it costs throughput
 * (docs/benchmarks.md). So the gate reads
 * the idle time of the cores the process may use (Linux's /proc/stat; in a container, its cpuset)
 * every `intervalMs`, under a cgroup CPU quota no more than the quota leaves unused (cpuLimits.ts:
 * /proc/stat counts the host's cores whatever the quota), adds back the CPU the scan thread itself
 * took (the thread reports it: /proc/thread-self/schedstat), since that time would be idle without
 * it, and stays open while that spare share of the cores it may use, smoothed over a few samples,
 * is at least `openAt`. The two measures are alike with the thread in use or not, so the gate does
 * not flip each time its own choice changes the load.
 *
 * Where /proc/stat cannot be read (not Linux), the gate stays shut: scans run in the indexer's thread.
 */
import { readFileSync } from 'node:fs';
import { type CpuLimits, readCpuLimits, readQuotaUsageMs } from './cpuLimits';

/** The CPU time of the cores the process may use, in any one unit; the idle part of it; how many cores. */
export interface MachineCpu {
  idle: number;
  total: number;
  cores: number;
  /** Under a cgroup quota: the quota in cores, and the milliseconds its cgroup has used in all. */
  quota?: { cores: number; usedMs: number };
}

/**
 * The `cpuN` lines of /proc/stat for the cores in `limits.cpus` (every core where that is unknown),
 * summed; idle and iowait count as idle. With a quota, the time its cgroup has used. Undefined
 * where /proc/stat cannot be read or has none of those cores.
 */
export function readMachineCpu(
  limits: CpuLimits = {},
  read: () => string = () => readFileSync('/proc/stat', 'utf8'),
  readUsageMs: (quota: NonNullable<CpuLimits['quota']>) => number | undefined = (quota) => readQuotaUsageMs(quota),
): MachineCpu | undefined {
  let text: string;
  try {
    text = read();
  } catch {
    return undefined;
  }
  const allowed = limits.cpus && new Set(limits.cpus);
  let idle = 0;
  let total = 0;
  let cores = 0;
  for (const line of text.split('\n')) {
    const fields = line.trim().split(/\s+/);
    const core = /^cpu(\d+)$/.exec(fields[0] ?? '');
    if (!core || (allowed && !allowed.has(Number(core[1]))) || fields.length < 6) continue;
    // user nice system idle iowait irq softirq steal (guest time is already inside user and nice)
    const values = fields.slice(1, 9).map(Number);
    if (values.some((v) => !Number.isFinite(v))) return undefined;
    idle += values[3]! + values[4]!;
    total += values.reduce((sum, v) => sum + v, 0);
    cores++;
  }
  if (cores === 0) return undefined;
  const usedMs = limits.quota && readUsageMs(limits.quota);
  return { idle, total, cores, ...(limits.quota && usedMs !== undefined ? { quota: { cores: limits.quota.cores, usedMs } } : {}) };
}

interface SpareCpuOptions {
  /** The machine's counters now (readMachineCpu over `limits` by default). */
  sample?: () => MachineCpu | undefined;
  /** The CPU this process may use, as read at start (readCpuLimits by default): the cores and quota `sample` reads. */
  limits?: CpuLimits;
  /** Milliseconds of CPU the scan thread has used in all, as it last reported. */
  threadCpuMs: () => number;
  now?: () => number;
  intervalMs?: number;
  /** Spare share of the cores the process may use (0-1) the gate stays open at: 0.2, a fifth of 2 cores. */
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
    const limits = options.sample ? undefined : (options.limits ?? readCpuLimits());
    this.sample = options.sample ?? (() => readMachineCpu(limits));
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
    const elapsedMs = at - last.at;
    // in cores: idle on the allowed cores, the scan thread's own, and under a quota what it leaves
    let idle = ((cpu.idle - last.cpu.idle) / (cpu.total - last.cpu.total)) * cpu.cores;
    let capacity = cpu.cores;
    if (cpu.quota && last.cpu.quota) {
      idle = Math.min(idle, cpu.quota.cores - Math.max(0, cpu.quota.usedMs - last.cpu.quota.usedMs) / elapsedMs);
      capacity = Math.min(capacity, cpu.quota.cores);
    }
    const thread = Math.max(0, threadMs - last.threadMs) / elapsedMs;
    const spare = Math.min(1, Math.max(0, (idle + thread) / capacity));
    // (half the weight on the newest sample: a change of load shows within a second or two)
    this.smoothed = this.smoothed === undefined ? spare : (this.smoothed + spare) / 2;
  }
}
