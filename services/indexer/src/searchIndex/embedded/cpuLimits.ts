/**
 * The CPU this process may use, which in a container is less than the machine shows: the cores its
 * affinity allows (a cpuset: `--cpuset-cpus`) and its cgroup's CPU quota (`--cpus`, a Kubernetes
 * limit), the tightest of the process's cgroup and its ancestors, cgroup v2 or v1.
 *
 * `os.availableParallelism()` counts the affinity only, and /proc/stat's totals cover every core of
 * the host. So INDEXER_SCAN_THREAD=auto (see scanThreadEnabled) counts cores with `effectiveCores`, and
 * the SpareCpuGate measures idle time on the allowed cores only and against the quota.
 *
 * Every read is of Linux's own files (/proc/self/status, /proc/self/cgroup, /proc/self/mountinfo,
 * the cgroup's cpu.max or cpu.cfs_quota_us); where one cannot be read, that limit is left out.
 */
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { posix } from 'node:path';

export type ReadText = (path: string) => string;

const readText: ReadText = (path) => readFileSync(path, 'utf8');

interface CpuQuota {
  /** The quota in cores (quota / period): 1.5 for `--cpus 1.5`. */
  cores: number;
  /** The file that counts the limited cgroup's CPU time (cpu.stat's usage_usec, or cpuacct.usage). */
  usageFile: string;
  /** Milliseconds per unit of that count. */
  usageMsPerUnit: number;
  /** The key of the count in its file (`usage_usec` in cgroup v2's cpu.stat); the whole file in v1. */
  usageKey?: string;
}

export interface CpuLimits {
  /** The cores the process may run on (/proc/self/status Cpus_allowed_list); undefined where unreadable. */
  cpus?: number[];
  /** The tightest CPU quota over the process's cgroup and its ancestors; undefined where there is none. */
  quota?: CpuQuota;
}

/** "0-3,8,10-11" → [0, 1, 2, 3, 8, 10, 11]; undefined where the list is not one. */
export function parseCpuList(list: string): number[] | undefined {
  const cpus: number[] = [];
  for (const part of list.trim().split(',')) {
    const match = /^(\d+)(?:-(\d+))?$/.exec(part);
    if (!match) return undefined;
    const from = Number(match[1]);
    const to = match[2] === undefined ? from : Number(match[2]);
    for (let cpu = from; cpu <= to; cpu++) cpus.push(cpu);
  }
  return cpus.length > 0 ? cpus : undefined;
}

interface CgroupMount {
  /** The cgroup path this mount shows at its mount point (`/` unless a namespace or bind mount hides the rest). */
  root: string;
  mountPoint: string;
  version: 1 | 2;
  /** Controllers of a v1 hierarchy (`cpu`, `cpuacct`...). */
  controllers: string[];
}

/** The cgroup filesystems of /proc/self/mountinfo. */
function cgroupMounts(mountinfo: string): CgroupMount[] {
  const mounts: CgroupMount[] = [];
  for (const line of mountinfo.split('\n')) {
    const fields = line.split(' ');
    const dash = fields.indexOf('-');
    if (dash < 5) continue;
    const type = fields[dash + 1];
    if (type !== 'cgroup' && type !== 'cgroup2') continue;
    mounts.push({
      root: unescapeMount(fields[3]!),
      mountPoint: unescapeMount(fields[4]!),
      version: type === 'cgroup2' ? 2 : 1,
      controllers: (fields[dash + 3] ?? '').split(','),
    });
  }
  return mounts;
}

/** mountinfo writes a space, tab, newline or backslash in a path as an octal escape. */
function unescapeMount(path: string): string {
  return path.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));
}

/**
 * The directories from the process's cgroup up to the mount's top, as this mount shows them. Where
 * the cgroup lies outside what the mount shows (a container's namespace shows its own cgroup as `/`),
 * the mount point alone.
 */
function cgroupDirs(mount: CgroupMount, cgroupPath: string): string[] {
  const root = mount.root === '/' ? '' : mount.root;
  const inside = cgroupPath === root || cgroupPath.startsWith(`${root}/`) ? cgroupPath.slice(root.length) : '';
  const dirs: string[] = [];
  let rel = posix.normalize(`/${inside}`);
  for (;;) {
    dirs.push(rel === '/' ? mount.mountPoint : posix.join(mount.mountPoint, rel));
    if (rel === '/') return dirs;
    rel = posix.dirname(rel);
  }
}

/** The tightest quota among `dirs`, each read by `quotaOf` (cores, or undefined for none or unreadable). */
function tightest(dirs: string[], quotaOf: (dir: string) => number | undefined): { dir: string; cores: number } | undefined {
  let best: { dir: string; cores: number } | undefined;
  for (const dir of dirs) {
    const cores = quotaOf(dir);
    if (cores !== undefined && (!best || cores < best.cores)) best = { dir, cores };
  }
  return best;
}

function attempt<T>(read: () => T): T | undefined {
  try {
    return read();
  } catch {
    return undefined;
  }
}

/** "50000 100000" → 0.5 cores; "max 100000" → undefined. */
function quotaCores(quota: number, period: number): number | undefined {
  return quota > 0 && period > 0 ? quota / period : undefined;
}

/** The process's CPU limits, from Linux's files (`read` for tests); empty where none can be read. */
export function readCpuLimits(read: ReadText = readText): CpuLimits {
  const limits: CpuLimits = {};
  const status = attempt(() => read('/proc/self/status'));
  const allowed = status && /^Cpus_allowed_list:\s*(\S+)/m.exec(status);
  const cpus = allowed ? parseCpuList(allowed[1]!) : undefined;
  if (cpus) limits.cpus = cpus;

  const cgroups = attempt(() => read('/proc/self/cgroup'));
  const mountinfo = attempt(() => read('/proc/self/mountinfo'));
  if (!cgroups || !mountinfo) return limits;
  const mounts = cgroupMounts(mountinfo);
  const quotas: CpuQuota[] = [];

  // cgroup v2: the line `0::/path`; cpu.max holds "quota period" or "max period".
  const v2Path = /^0::(.*)$/m.exec(cgroups)?.[1];
  const v2 = mounts.find((m) => m.version === 2);
  if (v2Path !== undefined && v2) {
    const found = tightest(cgroupDirs(v2, v2Path), (dir) => {
      const [quota, period] = (attempt(() => read(`${dir}/cpu.max`)) ?? '').trim().split(/\s+/);
      return quotaCores(Number(quota), Number(period));
    });
    if (found) quotas.push({ cores: found.cores, usageFile: `${found.dir}/cpu.stat`, usageKey: 'usage_usec', usageMsPerUnit: 1e-3 });
  }

  // cgroup v1: the `cpu` hierarchy's cpu.cfs_quota_us (-1 for none) and cpu.cfs_period_us; the time
  // used in `cpuacct`'s cpuacct.usage (nanoseconds), often the same hierarchy.
  const v1Path = (controller: string) =>
    cgroups.split('\n').map((line) => line.split(':')).find((f) => f.length >= 3 && f[1]!.split(',').includes(controller))?.slice(2).join(':');
  const cpuMount = mounts.find((m) => m.version === 1 && m.controllers.includes('cpu'));
  const acctMount = mounts.find((m) => m.version === 1 && m.controllers.includes('cpuacct'));
  const cpuPath = v1Path('cpu');
  const acctPath = v1Path('cpuacct');
  if (cpuMount && acctMount && cpuPath !== undefined && acctPath !== undefined) {
    const cpuDirs = cgroupDirs(cpuMount, cpuPath);
    const acctDirs = cgroupDirs(acctMount, acctPath);
    const found = tightest(cpuDirs, (dir) => {
      const quota = Number(attempt(() => read(`${dir}/cpu.cfs_quota_us`)));
      const period = Number(attempt(() => read(`${dir}/cpu.cfs_period_us`)));
      return quotaCores(quota, period);
    });
    // the cpuacct directory as many levels up from the process's cgroup as the limiting cpu one
    const acctDir = found && acctDirs[Math.min(cpuDirs.indexOf(found.dir), acctDirs.length - 1)];
    if (found && acctDir) quotas.push({ cores: found.cores, usageFile: `${acctDir}/cpuacct.usage`, usageMsPerUnit: 1e-6 });
  }

  const quota = quotas.sort((a, b) => a.cores - b.cores)[0];
  if (quota) limits.quota = quota;
  return limits;
}

/** Milliseconds of CPU the limited cgroup has used in all; undefined where unreadable. */
export function readQuotaUsageMs(quota: CpuQuota, read: ReadText = readText): number | undefined {
  const text = attempt(() => read(quota.usageFile));
  if (text === undefined) return undefined;
  const value = quota.usageKey === undefined ? text.trim() : new RegExp(`^${quota.usageKey}\\s+(\\d+)`, 'm').exec(text)?.[1];
  const units = Number(value);
  return value !== undefined && value !== '' && Number.isFinite(units) ? units * quota.usageMsPerUnit : undefined;
}

/**
 * The cores this process can keep busy: its allowed cores (or `availableParallelism()`), capped by
 * the quota rounded up (a quota of 1.5 cores runs on 2 at once, each less than all of the time).
 */
export function effectiveCores(limits: CpuLimits, cores = availableParallelism()): number {
  const allowed = limits.cpus?.length ?? cores;
  return Math.max(1, limits.quota ? Math.min(allowed, Math.ceil(limits.quota.cores - 1e-9)) : allowed);
}

/** One line for the start log: "2 cores (cpus 0-1, quota 1.5)". */
export function describeCpuLimits(limits: CpuLimits, cores = effectiveCores(limits)): string {
  const parts = [];
  if (limits.cpus) parts.push(`cpus ${formatCpuList(limits.cpus)}`);
  if (limits.quota) parts.push(`quota ${Math.round(limits.quota.cores * 100) / 100}`);
  return `${cores} core${cores === 1 ? '' : 's'}${parts.length ? ` (${parts.join(', ')})` : ''}`;
}

function formatCpuList(cpus: number[]): string {
  const ranges: string[] = [];
  for (let i = 0; i < cpus.length; ) {
    let j = i;
    while (j + 1 < cpus.length && cpus[j + 1] === cpus[j]! + 1) j++;
    ranges.push(j === i ? `${cpus[i]}` : `${cpus[i]}-${cpus[j]}`);
    i = j + 1;
  }
  return ranges.join(',');
}
