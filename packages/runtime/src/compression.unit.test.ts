import { randomBytes } from 'node:crypto';
import { inflateRawSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { OFF_THREAD_BYTES, deflateIfSmaller, deflateIfSmallerOffThread, inflateRawOffThread } from './compression';

/** Text that deflates about as prose does (not one repeated line, which deflate shrinks to nothing). */
function prose(bytes: number): Buffer {
  const words = ['harbour', 'cranes', 'unload', 'the', 'ships', 'at', 'dawn', 'while', 'fog', 'signals', 'sound', 'over', 'water'];
  let seed = 7;
  const out: string[] = [];
  let length = 0;
  while (length < bytes) {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    const word = words[seed % words.length]!;
    out.push(word);
    length += word.length + 1;
  }
  return Buffer.from(out.join(' ').slice(0, bytes), 'utf8');
}

describe('deflateIfSmallerOffThread / inflateRawOffThread', () => {
  it('give what the synchronous forms give, for small inputs and large ones', async () => {
    for (const size of [64, 4096, OFF_THREAD_BYTES * 2]) {
      const bytes = prose(size);
      const deflated = await deflateIfSmallerOffThread(bytes);
      if (size < 128) {
        expect(deflated).toBeUndefined();
        continue;
      }
      // (Buffer.equals: a deep comparison of a megabyte takes seconds)
      expect(deflated!.equals(deflateIfSmaller(bytes)!)).toBe(true);
      expect(inflateRawSync(deflated!).equals(bytes)).toBe(true);
      expect((await inflateRawOffThread(deflated!)).equals(bytes)).toBe(true);
    }
    // Bytes that do not shrink (random, like an already compressed file) are left as they are.
    expect(await deflateIfSmallerOffThread(randomBytes(OFF_THREAD_BYTES * 2))).toBeUndefined();
  });

  it('leave the event loop free while a large input is deflated and inflated', async () => {
    const bytes = prose(OFF_THREAD_BYTES * 8);
    let ran = false;
    setImmediate(() => (ran = true));
    const deflated = await deflateIfSmallerOffThread(bytes);
    expect(ran).toBe(true);
    ran = false;
    setImmediate(() => (ran = true));
    expect((await inflateRawOffThread(deflated!)).equals(bytes)).toBe(true);
    expect(ran).toBe(true);
  });
});
