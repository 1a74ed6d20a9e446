import { readdirSync, readFileSync } from 'node:fs';

/** CPU seconds (user + system) used so far by each process under `rootPid`, keyed by a short name. */
export type CpuSnapshot = Map<number, { name: string; seconds: number }>;

const TICKS_PER_SECOND = 100;

function stat(pid: number): { ppid: number; seconds: number } | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces; the fields after its closing parenthesis do not.
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { ppid: Number(fields[1]), seconds: (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND };
  } catch {
    return undefined;
  }
}

function name(pid: number): string {
  try {
    const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    if (args.some((a) => a.endsWith('nats-server'))) return 'nats-server';
    const entry = args.map((a) => /(?:\/|^)(memo|indexer|agent|extractor|gateway)(?:\.mjs|\/src\/main\.ts)$/.exec(a)?.[1]).find(Boolean);
    return entry ?? (args[0] ?? String(pid)).split('/').at(-1)!;
  } catch {
    return String(pid);
  }
}

/** The CPU time of `rootPid`'s descendants (Linux /proc; empty elsewhere). */
export function cpuSnapshot(rootPid: number): CpuSnapshot {
  const out: CpuSnapshot = new Map();
  let pids: number[];
  try {
    pids = readdirSync('/proc').filter((d) => /^\d+$/.test(d)).map(Number);
  } catch {
    return out;
  }
  const parent = new Map<number, number>();
  const seconds = new Map<number, number>();
  for (const pid of pids) {
    const s = stat(pid);
    if (!s) continue;
    parent.set(pid, s.ppid);
    seconds.set(pid, s.seconds);
  }
  const under = (pid: number): boolean => {
    for (let p = parent.get(pid); p !== undefined && p > 1; p = parent.get(p)) if (p === rootPid) return true;
    return false;
  };
  for (const pid of pids) if (under(pid) && seconds.has(pid)) out.set(pid, { name: name(pid), seconds: seconds.get(pid)! });
  return out;
}

/** CPU seconds each named process used between two snapshots (processes of one name summed), largest first. */
export function cpuBetween(before: CpuSnapshot, after: CpuSnapshot): [string, number][] {
  const used = new Map<string, number>();
  for (const [pid, { name: n, seconds }] of after) used.set(n, (used.get(n) ?? 0) + seconds - (before.get(pid)?.seconds ?? 0));
  return [...used].filter(([, s]) => s > 0.05).sort((a, b) => b[1] - a[1]);
}
