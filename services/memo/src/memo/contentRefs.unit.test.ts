import { describe, expect, it } from 'vitest';
import { ContentRefCache, type InlineContentRef } from './contentRefs';

const ref = (chars: number, tag = 'x'): InlineContentRef => ({ inline: tag.repeat(chars), length: chars, digest: '' });

describe('ContentRefCache', () => {
  it('keeps references up to its bound in bytes, dropping the oldest first', () => {
    const cache = new ContentRefCache(1_000);
    for (let i = 0; i < 4; i++) cache.keep(`s#${i}`, ref(300, String(i)));
    // 1,200 bytes over a bound of 1,000: the first one went.
    expect([cache.size, cache.heldBytes]).toEqual([3, 900]);
    expect(cache.get('s#0')).toBeUndefined();
    expect(cache.get('s#3')?.inline).toBe('3'.repeat(300));
    // One larger than the rest pushes out as many as it takes.
    cache.keep('s#4', ref(800, '4'));
    expect([cache.size, cache.heldBytes]).toEqual([1, 800]);
    expect(cache.get('s#4')?.inline).toBe('4'.repeat(800));
  });

  it('counts a reference kept twice (two GETs racing) once, and empties on clear', () => {
    const cache = new ContentRefCache(1_000);
    cache.keep('s#1', ref(400));
    cache.keep('s#1', ref(400));
    cache.keep('s#2', ref(400));
    expect([cache.size, cache.heldBytes]).toEqual([2, 800]);
    cache.clear();
    expect([cache.size, cache.heldBytes, cache.get('s#1')]).toEqual([0, 0, undefined]);
    cache.keep('s#1', ref(400));
    expect(cache.size).toBe(1);
  });
});
