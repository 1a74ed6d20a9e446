import { describe, expect, it } from 'vitest';
import { loadIndexerConfig } from '../config';
import { effectiveCores } from './embedded/cpuLimits';
import { scanThreadEnabled } from './open';
import { WRITE_TURN_MS } from './embedded/writeTurn';

describe('INDEXER_SCAN_THREAD', () => {
  it('is auto by default: the scan thread always on machines with more than 2 cores, while CPU is spare on smaller ones', () => {
    expect(loadIndexerConfig({}).INDEXER_SCAN_THREAD).toBe('auto');
    expect(scanThreadEnabled('auto', 2)).toBe('when-spare');
    expect(scanThreadEnabled('auto', 4)).toBe(true);
  });

  it('counts a container\'s cores by its quota: 8 allowed under `--cpus 1.5` are 2', () => {
    const quota = { cores: 1.5, usageFile: '/sys/fs/cgroup/cpu.stat', usageKey: 'usage_usec', usageMsPerUnit: 1e-3 };
    expect(scanThreadEnabled('auto', effectiveCores({ cpus: [0, 1, 2, 3, 4, 5, 6, 7], quota }))).toBe('when-spare');
    expect(scanThreadEnabled('auto', effectiveCores({ cpus: [0, 1, 2, 3, 4, 5, 6, 7] }))).toBe(true);
  });

  it('true and false force it either way', () => {
    expect(scanThreadEnabled(loadIndexerConfig({ INDEXER_SCAN_THREAD: 'true' }).INDEXER_SCAN_THREAD, 2)).toBe(true);
    expect(scanThreadEnabled(loadIndexerConfig({ INDEXER_SCAN_THREAD: 'false' }).INDEXER_SCAN_THREAD, 16)).toBe(false);
    expect(() => loadIndexerConfig({ INDEXER_SCAN_THREAD: 'sometimes' })).toThrow(/INDEXER_SCAN_THREAD/);
  });
});

describe('INDEXER_WRITE_TURN_MS', () => {
  it("defaults to the embedded index's own turn, takes fractions and 0, and refuses a negative or absurd one", () => {
    expect(loadIndexerConfig({}).INDEXER_WRITE_TURN_MS).toBe(WRITE_TURN_MS);
    expect(loadIndexerConfig({ INDEXER_WRITE_TURN_MS: '2.5' }).INDEXER_WRITE_TURN_MS).toBe(2.5);
    expect(loadIndexerConfig({ INDEXER_WRITE_TURN_MS: '0' }).INDEXER_WRITE_TURN_MS).toBe(0);
    expect(() => loadIndexerConfig({ INDEXER_WRITE_TURN_MS: '-1' })).toThrow(/INDEXER_WRITE_TURN_MS/);
    expect(() => loadIndexerConfig({ INDEXER_WRITE_TURN_MS: '5000' })).toThrow(/INDEXER_WRITE_TURN_MS/);
  });
});
