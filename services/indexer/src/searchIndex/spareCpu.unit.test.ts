import { describe, expect, it } from 'vitest';
import { readMachineCpu, SpareCpuGate, type MachineCpu } from './spareCpu';

const PROC_STAT = `cpu  1000 10 500 8000 200 0 40 0 0 0
cpu0 500 5 250 4000 100 0 20 0 0 0
cpu1 500 5 250 4000 100 0 20 0 0 0
intr 123
`;

/** A machine of `cores` cores whose counters advance by what each step says (shares of one interval). */
function machine(cores: number) {
  let cpu: MachineCpu = { idle: 0, total: 0, cores };
  let at = 0;
  let threadMs = 0;
  return {
    sample: () => cpu,
    now: () => at,
    threadCpuMs: () => threadMs,
    /** 100 ms of every core pass: `idle` of them idle, `thread` of them on the scan thread. */
    step(idle: number, thread = 0) {
      at += 100;
      cpu = { idle: cpu.idle + idle * 100 * cores, total: cpu.total + 100 * cores, cores };
      threadMs += thread * 100 * cores;
    },
  };
}

describe('readMachineCpu', () => {
  it('reads the aggregate line of /proc/stat, idle and iowait as idle, and counts the cores', () => {
    expect(readMachineCpu(() => PROC_STAT)).toEqual({ idle: 8200, total: 9750, cores: 2 });
  });

  it('is undefined where the file cannot be read or is not what Linux writes', () => {
    expect(readMachineCpu(() => { throw new Error('ENOENT'); })).toBeUndefined();
    expect(readMachineCpu(() => 'intr 1 2 3\n')).toBeUndefined();
    expect(readMachineCpu(() => 'cpu  a b c d e f\n')).toBeUndefined();
  });

  it('reads this machine, where it is Linux', () => {
    if (process.platform !== 'linux') return;
    const cpu = readMachineCpu()!;
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

  it('stays shut where the machine\'s counters cannot be read', () => {
    const gate = new SpareCpuGate({ sample: () => undefined, threadCpuMs: () => 0 }).start();
    expect(gate.open).toBe(false);
    gate.stop();
  });
});
