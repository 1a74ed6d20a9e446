import { describe, expect, it } from 'vitest';
import { DERIVED_IDS_HELD, MEMEX_NAMESPACE, chunkId, derivedIdsHeld, forgetDerivedIds, pooledRandomBytes, tagId, uuidV5, uuidV7 } from './ids';

describe('ids', () => {
  it('hands out pooled random bytes once: no two draws share a byte, and none changes after it is drawn', () => {
    const draws = Array.from({ length: 2000 }, (_, i) => pooledRandomBytes(i % 2 === 0 ? 12 : 16));
    const copies = draws.map((b) => Buffer.from(b));
    for (let i = 0; i < 1000; i++) pooledRandomBytes(16); // past several pools
    draws.forEach((b, i) => {
      expect(b.length).toBe(i % 2 === 0 ? 12 : 16);
      expect(b.equals(copies[i]!)).toBe(true);
    });
    expect(new Set(copies.map((b) => b.toString('hex'))).size).toBe(draws.length);
    // Views of one pool never overlap.
    const byPool = new Map<ArrayBufferLike, [number, number][]>();
    for (const b of draws) byPool.set(b.buffer, [...(byPool.get(b.buffer) ?? []), [b.byteOffset, b.byteOffset + b.length]]);
    expect(byPool.size).toBeGreaterThan(1);
    for (const ranges of byPool.values()) {
      ranges.sort((x, y) => x[0] - y[0]);
      for (let k = 1; k < ranges.length; k++) expect(ranges[k]![0]).toBeGreaterThanOrEqual(ranges[k - 1]![1]);
    }
    expect(pooledRandomBytes(10_000).length).toBe(10_000);
  });

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

  it('keeps derived tag and chunk ids in a bounded cache that gives what uuidV5 gives, and can be emptied', () => {
    forgetDerivedIds();
    const m = '0190d7a4-0000-7000-8000-000000000002';
    const tags = Array.from({ length: DERIVED_IDS_HELD + 50 }, (_, i) => `topic ${i}`);
    for (const t of tags) expect(tagId(m, t)).toBe(uuidV5(`tag:${m}:${t}`, MEMEX_NAMESPACE));
    expect(derivedIdsHeld()).toBe(DERIVED_IDS_HELD);
    // The first ones were dropped (oldest first) and come back the same; the last ones are held.
    for (const t of [...tags.slice(0, 60), ...tags.slice(-60)]) expect(tagId(m, t)).toBe(uuidV5(`tag:${m}:${t}`, MEMEX_NAMESPACE));
    expect(chunkId(m, 3, 7)).toBe(uuidV5(`chunk:${m}:3:7`, MEMEX_NAMESPACE));
    expect(chunkId(m, 3, 7)).toBe(uuidV5(`chunk:${m}:3:7`, MEMEX_NAMESPACE));
    expect(derivedIdsHeld()).toBe(DERIVED_IDS_HELD);
    forgetDerivedIds();
    expect(derivedIdsHeld()).toBe(0);
    expect(tagId(m, 'topic 1')).toBe(uuidV5(`tag:${m}:topic 1`, MEMEX_NAMESPACE));
    expect(derivedIdsHeld()).toBe(1);
  });

  it('uuidV7 carries the time and sorts by it', () => {
    const a = uuidV7(1_700_000_000_000);
    const b = uuidV7(1_700_000_000_001);
    expect(a < b).toBe(true);
    expect(a[14]).toBe('7');
    expect(parseInt(a.replaceAll('-', '').slice(0, 12), 16)).toBe(1_700_000_000_000);
  });
});
