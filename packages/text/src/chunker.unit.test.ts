import { describe, it, expect } from 'vitest';
import { seededRandom } from '@memex/testing';
import { chunkText, chunkTextSteps, DEFAULT_CHUNK_OPTIONS } from './chunker.js';
import type { Chunk, ChunkOptions } from './chunker.js';
import { isWhitespaceCode, splitSentences } from './sentences.js';

const rng = seededRandom;

const WORDS = (
  'memo vector index search chunk token the of a to and in database embedding query ' +
  'summary paragraph sentence model retrieval ranking fusion Qdrant BM25 3.14 e.g. Dr. ' +
  'J. etc. https://example.com/a.b user@example.org naïve café 東京 don’t state-of-the-art'
).split(' ');

function randomText(next: () => number): string {
  const pick = <T,>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)] as T;
  const paragraphs: string[] = [];
  const paragraphCount = 1 + Math.floor(next() * 12);
  for (let p = 0; p < paragraphCount; p++) {
    const lines: string[] = [];
    if (next() < 0.15) lines.push(`# ${pick(WORDS)} ${pick(WORDS)}`);
    const sentences = Math.floor(next() * 10);
    const parts: string[] = [];
    for (let s = 0; s < sentences; s++) {
      const r = next();
      // Mostly ordinary sentences; sometimes very long ones and single giant "words".
      const length = r < 0.05 ? 300 + Math.floor(next() * 400) : 1 + Math.floor(next() * 30);
      const words: string[] = [];
      for (let w = 0; w < length; w++) words.push(pick(WORDS));
      if (r > 0.97) words.push('x'.repeat(50 + Math.floor(next() * 2500)));
      const first = words[0] ?? 'Word';
      words[0] = first.charAt(0).toUpperCase() + first.slice(1);
      parts.push(words.join(next() < 0.1 ? '\n' : ' ') + pick(['.', '!', '?', '.', '.', '']));
    }
    lines.push(parts.join(pick([' ', '  ', '\n'])));
    if (next() < 0.2) lines.push(`- ${pick(WORDS)} item\n- another ${pick(WORDS)}`);
    paragraphs.push(lines.join('\n'));
  }
  const lead = pick(['', ' ', '\n\n', '\t']);
  return lead + paragraphs.join(pick(['\n\n', '\n \n', '\n\n\n'])) + pick(['', '\n', '  ']);
}

function checkInvariants(text: string, chunks: Chunk[], options: ChunkOptions = {}): void {
  const { maxChars, overlapChars } = { ...DEFAULT_CHUNK_OPTIONS, ...options };
  chunks.forEach((c, i) => {
    expect(c.index).toBe(i);
    expect(c.content).toBe(text.slice(c.start, c.end));
    expect(c.content.length).toBeLessThanOrEqual(maxChars);
    expect(c.content.length).toBeGreaterThan(0);
    expect(c.content).toBe(c.content.trim());
    const prev = chunks[i - 1];
    if (prev) {
      expect(c.start).toBeGreaterThan(prev.start);
      expect(c.end).toBeGreaterThan(prev.end);
      expect(Math.max(0, prev.end - c.start)).toBeLessThanOrEqual(overlapChars);
    }
  });
  for (const s of splitSentences(text)) {
    if (s.text.length <= maxChars) {
      const holder = chunks.find((c) => c.start <= s.start && s.end <= c.end);
      expect(holder, `sentence at ${s.start} is in no chunk`).toBeDefined();
      expect(holder?.content.includes(s.text)).toBe(true);
    }
  }
  // Over-long sentences are cut, so check coverage character by character as well.
  let ci = 0;
  let uncovered = -1;
  for (let i = 0; i < text.length && uncovered === -1; i++) {
    if (isWhitespaceCode(text.charCodeAt(i))) continue;
    while (ci < chunks.length && (chunks[ci] as Chunk).end <= i) ci++;
    const c = chunks[ci];
    if (c === undefined || i < c.start) uncovered = i;
  }
  expect(uncovered, 'first character outside every chunk').toBe(-1);
}

describe('chunkText', () => {
  it('exports its defaults', () => {
    expect(DEFAULT_CHUNK_OPTIONS).toEqual({ targetChars: 1000, maxChars: 1500, overlapChars: 200 });
  });

  it('returns no chunks for empty or whitespace-only text', () => {
    expect(chunkText('')).toEqual([]);
    expect(chunkText(' \n\t\n  ')).toEqual([]);
  });

  it('returns short text as one chunk equal to the trimmed text', () => {
    const text = '\n  A short memo. It has two sentences.\n\nAnd a paragraph.  \n';
    expect(chunkText(text)).toEqual([
      { index: 0, content: text.trim(), start: 3, end: 3 + text.trim().length },
    ]);
  });

  it('keeps text up to maxChars in one chunk', () => {
    const text = 'Word '.repeat(290) + 'end.';
    expect(text.length).toBeGreaterThan(1000);
    expect(chunkText(text)).toHaveLength(1);
  });

  it('packs whole sentences and overlaps by trailing sentences', () => {
    const sentences = Array.from({ length: 40 }, (_, i) => `Sentence number ${i} is here.`);
    const text = sentences.join(' ');
    const options = { targetChars: 200, maxChars: 300, overlapChars: 60 };
    const chunks = chunkText(text, options);
    expect(chunks.length).toBeGreaterThan(3);
    checkInvariants(text, chunks, options);
    for (const c of chunks) {
      expect(c.content).toMatch(/^Sentence number \d+ is here\.(?: Sentence number \d+ is here\.)*$/);
    }
    // Only the last chunk may exceed the target: it takes the remainder when that fits maxChars.
    for (const c of chunks.slice(0, -1)) expect(c.content.length).toBeLessThanOrEqual(200);
    // Each later chunk repeats the last two sentences of the previous one (2 × 27 chars ≤ 60).
    for (let i = 1; i < chunks.length; i++) {
      const prev = chunks[i - 1] as Chunk;
      const cur = chunks[i] as Chunk;
      expect(prev.end - cur.start).toBeGreaterThan(0);
      expect(prev.content.endsWith(text.slice(cur.start, prev.end))).toBe(true);
    }
  });

  it('prefers to end chunks at paragraph boundaries', () => {
    const para = (i: number): string =>
      Array.from({ length: 6 }, (_, j) => `Paragraph ${i} sentence ${j} is short.`).join(' ');
    const text = Array.from({ length: 8 }, (_, i) => para(i)).join('\n\n');
    const options = { targetChars: 500, maxChars: 800, overlapChars: 0 };
    const chunks = chunkText(text, options);
    checkInvariants(text, chunks, options);
    for (const c of chunks.slice(0, -1)) {
      expect(text.slice(c.end, c.end + 2)).toBe('\n\n');
    }
  });

  it('does not overlap more than one chunk worth and always makes progress', () => {
    const text = Array.from({ length: 30 }, (_, i) => `Tiny ${i}.`).join(' ');
    const options = { targetChars: 30, maxChars: 40, overlapChars: 1000 };
    const chunks = chunkText(text, options);
    checkInvariants(text, chunks, options);
    expect(chunks.length).toBeGreaterThan(5);
  });

  it('cuts an over-long sentence at word boundaries', () => {
    const text = Array.from({ length: 400 }, (_, i) => `word${i}`).join(' ') + '.';
    const options = { targetChars: 300, maxChars: 400, overlapChars: 50 };
    const chunks = chunkText(text, options);
    checkInvariants(text, chunks, options);
    for (const c of chunks) {
      expect(c.content).toMatch(/^word\d+(?: word\d+)*\.?$/);
    }
  });

  it('hard-cuts only a single word longer than maxChars', () => {
    const giant = 'z'.repeat(1000);
    // The last chunk is the giant's remaining 100 characters plus the rest of the sentence.
    const text = `Start here. ${giant} tail words.`;
    const options = { targetChars: 200, maxChars: 300, overlapChars: 0 };
    const chunks = chunkText(text, options);
    checkInvariants(text, chunks, options);
    expect(chunks.map((c) => c.content.length)).toEqual([11, 300, 300, 300, 112]);
  });

  it('keeps a word shorter than maxChars whole even when it exceeds targetChars', () => {
    const word = 'y'.repeat(250);
    const text = `${'a '.repeat(200)}${word} ${'b '.repeat(200)}`.trim();
    const options = { targetChars: 200, maxChars: 300, overlapChars: 0 };
    const chunks = chunkText(text, options);
    checkInvariants(text, chunks, options);
    expect(chunks.some((c) => c.content.includes(word))).toBe(true);
  });

  it('does not split a surrogate pair when hard-cutting', () => {
    const text = '😀'.repeat(100);
    const chunks = chunkText(text, { targetChars: 25, maxChars: 25, overlapChars: 0 });
    checkInvariants(text, chunks, { targetChars: 25, maxChars: 25, overlapChars: 0 });
    for (const c of chunks) expect(c.content).toMatch(/^(?:😀)+$/u);
  });

  it('validates options', () => {
    expect(() => chunkText('x', { maxChars: 0 })).toThrow(RangeError);
    expect(() => chunkText('x', { targetChars: Number.NaN })).toThrow(RangeError);
    expect(() => chunkText('x', { overlapChars: -1 })).toThrow(RangeError);
    // A target above the maximum is clamped rather than rejected.
    const text = 'Alpha beta. '.repeat(30).trim();
    const chunks = chunkText(text, { targetChars: 5000, maxChars: 100 });
    checkInvariants(text, chunks, { maxChars: 100 });
  });

  it('holds its guarantees on random texts (seeded)', () => {
    const next = rng(0x5eed);
    const optionSets: ChunkOptions[] = [
      {},
      { targetChars: 300, maxChars: 450, overlapChars: 80 },
      { targetChars: 120, maxChars: 120, overlapChars: 0 },
      { targetChars: 50, maxChars: 200, overlapChars: 190 },
      { targetChars: 2000, maxChars: 2500, overlapChars: 400 },
    ];
    for (let round = 0; round < 200; round++) {
      const text = randomText(next);
      const options = optionSets[round % optionSets.length] as ChunkOptions;
      const chunks = chunkText(text, options);
      checkInvariants(text, chunks, options);
      const { maxChars } = { ...DEFAULT_CHUNK_OPTIONS, ...options };
      if (text.trim() === '') expect(chunks).toEqual([]);
      if (text.trim().length > 0 && text.trim().length <= maxChars) {
        expect(chunks.map((c) => c.content)).toEqual([text.trim()]);
      }
      expect(chunkText(text, options)).toEqual(chunks);
    }
  });
});

describe('chunkTextSteps', () => {
  it("pauses at every sentence and chunk of a long text, and returns chunkText's chunks", () => {
    const next = rng(11);
    const text = Array.from({ length: 40 }, () => randomText(next)).join('\n\n');
    const steps = chunkTextSteps(text, { targetChars: 400, maxChars: 600, overlapChars: 100 });
    let pauses = 0;
    let step = steps.next();
    for (; !step.done; step = steps.next()) pauses += 1;
    const chunks = step.value;
    expect(chunks).toEqual(chunkText(text, { targetChars: 400, maxChars: 600, overlapChars: 100 }));
    expect(chunks.length).toBeGreaterThan(20);
    expect(pauses).toBeGreaterThanOrEqual(splitSentences(text).length + chunks.length - 1);
  });
});
