import { describe, it, expect } from 'vitest';
import { collapseWhitespace, truncateAtWord } from './truncate.js';

describe('truncateAtWord', () => {
  it('returns text that fits unchanged', () => {
    expect(truncateAtWord('short text', 10)).toBe('short text');
  });

  it('cuts after a whole word and appends an ellipsis', () => {
    expect(truncateAtWord('the quick brown fox jumps', 16)).toBe('the quick brown…');
    expect(truncateAtWord('alpha, beta, gamma delta', 14)).toBe('alpha, beta…');
  });

  it('never exceeds the limit', () => {
    const text = 'lorem ipsum dolor sit amet consectetur adipiscing elit '.repeat(20);
    for (let max = 1; max < 200; max += 7) {
      expect(truncateAtWord(text, max).length).toBeLessThanOrEqual(max);
    }
  });

  it('cuts inside a word only when the word would waste most of the budget', () => {
    expect(truncateAtWord('a ' + 'x'.repeat(50), 10)).toBe('a xxxxxxx…');
    expect(truncateAtWord('😀'.repeat(10), 4)).toBe('😀…');
  });

  it('returns an empty string for a zero budget', () => {
    expect(truncateAtWord('anything', 0)).toBe('');
  });
});

describe('collapseWhitespace', () => {
  it('turns every whitespace run into one space and trims', () => {
    expect(collapseWhitespace('  a\n\n b\t\tc  ')).toBe('a b c');
  });
});
