import { describe, expect, it } from 'vitest';
import { loadIndexerConfig } from './config';
import { scanThreadEnabled } from './stores';

describe('INDEXER_SCAN_THREAD', () => {
  it('is auto by default: the scan thread only on machines with more than 2 cores', () => {
    expect(loadIndexerConfig({}).INDEXER_SCAN_THREAD).toBe('auto');
    expect(scanThreadEnabled('auto', 2)).toBe(false);
    expect(scanThreadEnabled('auto', 4)).toBe(true);
  });

  it('true and false force it either way', () => {
    expect(scanThreadEnabled(loadIndexerConfig({ INDEXER_SCAN_THREAD: 'true' }).INDEXER_SCAN_THREAD, 2)).toBe(true);
    expect(scanThreadEnabled(loadIndexerConfig({ INDEXER_SCAN_THREAD: 'false' }).INDEXER_SCAN_THREAD, 16)).toBe(false);
    expect(() => loadIndexerConfig({ INDEXER_SCAN_THREAD: 'sometimes' })).toThrow(/INDEXER_SCAN_THREAD/);
  });
});
