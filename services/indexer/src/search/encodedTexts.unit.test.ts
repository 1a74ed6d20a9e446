import { describe, expect, it } from 'vitest';
import { EncodedTexts } from './encodedTexts';

describe('EncodedTexts', () => {
  it('encodes a text as JSON once and serves the same bytes again', () => {
    const texts = new EncodedTexts();
    const text = 'a "quoted" naïve text\n';
    const first = texts.encode(text);
    expect(first.toString('utf8')).toBe(JSON.stringify(text));
    expect(texts.encode(`${text}`)).toBe(first);
  });

  it('keeps within its budget: the least recently served go, and a text larger than it is encoded every time', () => {
    const texts = new EncodedTexts(100);
    const a = texts.encode('a'.repeat(20));
    texts.encode('b'.repeat(20));
    texts.encode('c'.repeat(20)); // 3 × 42 bytes > 100: 'a' goes
    expect(texts.encode('a'.repeat(20))).not.toBe(a);
    const huge = 'h'.repeat(200);
    expect(texts.encode(huge)).not.toBe(texts.encode(huge));
    expect(texts.encode(huge).toString('utf8')).toBe(JSON.stringify(huge));
  });

  it('forgets every text when cleared (a memo was erased)', () => {
    const texts = new EncodedTexts();
    const first = texts.encode('erased text');
    texts.encode('another');
    expect(texts.size).toBe(2);
    texts.clear();
    expect(texts.size).toBe(0);
    expect(texts.encode('erased text')).not.toBe(first);
  });
});
