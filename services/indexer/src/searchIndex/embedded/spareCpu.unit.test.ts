import { describe, expect, it } from 'vitest';
import { readCpuLimits } from './cpuLimits';
import { readMachineCpu, SpareCpuGate, type MachineCpu } from './spareCpu';

const PROC_STAT = `cpu  1000 10 500 8000 200 0 40 0 0 0
cpu0 500 5 250 4000 100 0 20 0 0 0
cpu1 500 5 250 4000 100 0 20 0 0 0
intr 123
`;

const PROC_STAT_4 = `cpu  4000 0 0 2000 0 0 0 0 0 0
cpu0 500 0 0 500 0 0 0 0 0 0
cpu1 900 0 0 100 0 0 0 0 0 0
cpu2 1000 0 0 0 0 0 0 0 0 0
cpu3 500 0 0 500 0 0 0 0 0 0
`;

/** A machine of `cores` cores whose counters advance by what each step says (shares of one interval). */
function machine(cores: number, quotaCores?: number) {
  let cpu: MachineCpu = { idle: 0, total: 0, cores, ...(quotaCores ? { quota: { cores: quotaCores, usedMs: 0 } } : {}) };
  let at = 0;
  let threadMs = 0;
  return {
    sample: () => cpu,
    now: () => at,
    threadCpuMs: () => threadMs,
    /**
     * 100 ms of every core pass: `idle` of them idle, `thread` of them on the scan thread, and under
     * a quota `used` of them (in shares of the machine) by the quota's cgroup.
     */
    step(idle: number, thread = 0, used = 0) {
      at += 100;
      const quota = cpu.quota && { cores: cpu.quota.cores, usedMs: cpu.quota.usedMs + used * 100 * cores };
      cpu = { idle: cpu.idle + idle * 100 * cores, total: cpu.total + 100 * cores, cores, ...(quota ? { quota } : {}) };
      threadMs += thread * 100 * cores;
    },
  };
}

describe('readMachineCpu', () => {
  it('sums the cores\' lines of /proc/stat, idle and iowait as idle, and counts the cores', () => {
    expect(readMachineCpu({}, () => PROC_STAT)).toEqual({ idle: 8200, total: 9750, cores: 2 });
  });

  it('counts only the cores the process may run on (a container\'s cpuset)', () => {
    expect(readMachineCpu({ cpus: [1] }, () => PROC_STAT_4)).toEqual({ idle: 100, total: 1000, cores: 1 });
    expect(readMachineCpu({ cpus: [0, 3] }, () => PROC_STAT_4)).toEqual({ idle: 1000, total: 2000, cores: 2 });
  });

  it('reads the time a quota\'s cgroup has used beside it', () => {
    const quota = { cores: 1.5, usageFile: '/sys/fs/cgroup/cpu.stat', usageKey: 'usage_usec', usageMsPerUnit: 1e-3 };
    expect(readMachineCpu({ quota }, () => PROC_STAT, () => 1234)).toEqual({ idle: 8200, total: 9750, cores: 2, quota: { cores: 1.5, usedMs: 1234 } });
    // an unreadable count leaves the quota out, not the machine
    expect(readMachineCpu({ quota }, () => PROC_STAT, () => undefined)).toEqual({ idle: 8200, total: 9750, cores: 2 });
  });

  it('is undefined where the file cannot be read, is not what Linux writes or has none of the cores', () => {
    expect(readMachineCpu({}, () => { throw new Error('ENOENT'); })).toBeUndefined();
    expect(readMachineCpu({}, () => 'intr 1 2 3\n')).toBeUndefined();
    expect(readMachineCpu({}, () => 'cpu  a b c d e f\ncpu0 a b c d e f\n')).toBeUndefined();
    expect(readMachineCpu({ cpus: [7] }, () => PROC_STAT)).toBeUndefined();
  });

  it('reads this machine, where it is Linux', () => {
    if (process.platform !== 'linux') return;
    const cpu = readMachineCpu(readCpuLimits())!;
    expect(cpu.total).toBeGreaterThan(cpu.idle);
    expect(cpu.cores).toBeGreaterThanOrEqual(1);
  });
});

describe('SpareCpuGate', () => {
  it('is open until measured, then open only while a fifth of the machine is spare', () => {
    const m = machine(2);
    const gate = new SpareCpuGate(m);
    expect(gate.open).toBe(true);
    gate.start();
    gate.stop();
    m.step(0.05);
    gate.tick();
    expect(gate.spare).toBeCloseTo(0.05);
    expect(gate.open).toBe(false);
    // a third of the machine idle (searches alone with the indexer's thread the bottleneck)
    m.step(0.35);
    gate.tick();
    m.step(0.35);
    gate.tick();
    expect(gate.open).toBe(true);
  });

  it('counts the scan thread\'s own CPU as spare, so its choice does not undo itself', () => {
    const m = machine(2);
    const gate = new SpareCpuGate(m).start();
    gate.stop();
    // with the thread at work: 10% idle, the thread 20% of the machine → 30% spare, stays open
    for (let i = 0; i < 4; i++) {
      m.step(0.1, 0.2);
      gate.tick();
    }
    expect(gate.spare).toBeCloseTo(0.3);
    expect(gate.open).toBe(true);
    // a mixed load: 8% idle, the thread 8% → 16%, shut; without it 12% idle, still shut
    for (let i = 0; i < 4; i++) {
      m.step(0.08, 0.08);
      gate.tick();
    }
    expect(gate.open).toBe(false);
    for (let i = 0; i < 4; i++) {
      m.step(0.12);
      gate.tick();
    }
    expect(gate.open).toBe(false);
  });

  it('under a quota, counts as spare only what the quota leaves, though the host\'s cores idle', () => {
    // 8 cores, 70% idle; the indexer's cgroup limited to 2 cores and using 1.9 of them (0.2375 of 8)
    const m = machine(8, 2);
    const gate = new SpareCpuGate(m).start();
    gate.stop();
    for (let i = 0; i < 8; i++) {
      m.step(0.7, 0, 0.2375);
      gate.tick();
    }
    expect(gate.spare).toBeCloseTo(0.05);
    expect(gate.open).toBe(false);
    // the scan thread at 0.4 core of it (0.05 of 8): counted back, (2 - 1.9 + 0.4) / 2 = 0.25
    for (let i = 0; i < 8; i++) {
      m.step(0.7, 0.05, 0.2375);
      gate.tick();
    }
    expect(gate.spare).toBeCloseTo(0.25);
    expect(gate.open).toBe(true);
    // the cgroup using 1 core of its 2: half its quota spare, though the host is busier
    for (let i = 0; i < 8; i++) {
      m.step(0.3, 0, 0.125);
      gate.tick();
    }
    expect(gate.spare).toBeCloseTo(0.5);
    // and the host's idle time caps it where the host is the tighter: 0.1 of 8 idle = 0.8 core
    for (let i = 0; i < 8; i++) {
      m.step(0.1, 0, 0.125);
      gate.tick();
    }
    expect(gate.spare).toBeCloseTo(0.4);
  });

  it('reads the cores of the limits it is given (the indexer\'s, read once at start)', () => {
    if (process.platform !== 'linux') return;
    const first = new SpareCpuGate({ limits: { cpus: [0] }, threadCpuMs: () => 0 }).start();
    first.stop();
    expect(first.open).toBe(true);
    // a core this machine does not have: nothing to read, so the gate stays shut
    const gate = new SpareCpuGate({ limits: { cpus: [1_000_000] }, threadCpuMs: () => 0 }).start();
    gate.stop();
    expect(gate.open).toBe(false);
  });

  it('stays shut where the machine\'s counters cannot be read', () => {
    const gate = new SpareCpuGate({ sample: () => undefined, threadCpuMs: () => 0 }).start();
    expect(gate.open).toBe(false);
    gate.stop();
  });
});
