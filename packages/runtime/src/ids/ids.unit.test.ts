import { describe, expect, it } from 'vitest';
import { chunkId, tagId, uuidV5, uuidV7 } from './ids';

describe('ids', () => {
  it('uuidV5 matches the RFC 9562 test vector', () => {
    // RFC 9562 appendix A.4: name "www.example.com" in the DNS namespace.
    expect(uuidV5('www.example.com', '6ba7b810-9dad-11d1-80b4-00c04fd430c8')).toBe('2ed6657d-e927-568b-95e1-2665a8aea6a2');
  });

  it('derives stable, distinct chunk and tag ids', () => {
    const m = '0190d7a4-0000-7000-8000-000000000001';
    expect(chunkId(m, 1, 0)).toBe(chunkId(m, 1, 0));
    expect(chunkId(m, 1, 0)).not.toBe(chunkId(m, 2, 0));
    expect(chunkId(m, 1, 0)).not.toBe(chunkId(m, 1, 1));
    expect(tagId(m, 'finance')).not.toBe(tagId(m, 'Finance'));
  });

  it('uuidV7 carries the time and sorts by it', () => {
    const a = uuidV7(1_700_000_000_000);
    const b = uuidV7(1_700_000_000_001);
    expect(a < b).toBe(true);
    expect(a[14]).toBe('7');
    expect(parseInt(a.replaceAll('-', '').slice(0, 12), 16)).toBe(1_700_000_000_000);
  });
});
