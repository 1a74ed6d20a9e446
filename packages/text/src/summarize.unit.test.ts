import { describe, it, expect } from 'vitest';
import { splitSentences } from './sentences.js';
import { DEFAULT_SUMMARIZE_OPTIONS, summarize } from './summarize.js';

const ARTICLE = [
  'Memex stores memos and indexes them for search.',
  'The weather was pleasant on the day the project started.',
  'Each memo is split into chunks, and every chunk is indexed for dense and lexical search.',
  'Lexical search ranks memo chunks with BM25, while dense search compares embeddings of chunks.',
  'A cat sat on the windowsill.',
  'Search results from dense and lexical indexes are fused into one ranking of memo chunks.',
  'Lunch was served at noon.',
].join(' ');

describe('summarize', () => {
  it('picks the most central sentences and keeps their original order', () => {
    const summary = summarize(ARTICLE);
    const picked = splitSentences(summary).map((s) => s.text);
    expect(picked).toHaveLength(3);
    for (const s of picked) expect(ARTICLE).toContain(s);
    for (const offTopic of ['weather', 'cat sat', 'Lunch']) expect(summary).not.toContain(offTopic);
    const positions = picked.map((s) => ARTICLE.indexOf(s));
    expect([...positions].sort((a, b) => a - b)).toEqual(positions);
  });

  it('honours maxSentences', () => {
    expect(splitSentences(summarize(ARTICLE, { maxSentences: 1 }))).toHaveLength(1);
    expect(summarize(ARTICLE, { maxSentences: 0 })).toBe('');
  });

  it('returns a text of at most one sentence whole and trimmed', () => {
    expect(summarize('  Just one sentence here.\n')).toBe('Just one sentence here.');
    expect(summarize('no punctuation at all')).toBe('no punctuation at all');
    expect(summarize('')).toBe('');
    expect(summarize(' \n ')).toBe('');
  });

  it('returns every sentence of a short text, whitespace collapsed', () => {
    expect(summarize('First point.\nSecond   point.')).toBe('First point. Second point.');
  });

  it('prefers earlier sentences when centrality ties', () => {
    const text = 'Alpha bravo charlie. Delta echo foxtrot. Golf hotel india. Juliet kilo lima.';
    expect(summarize(text, { maxSentences: 2 })).toBe('Alpha bravo charlie. Delta echo foxtrot.');
  });

  it('truncates an enormous sentence at a word boundary with an ellipsis', () => {
    const giant = `${'endless words go on '.repeat(250)}end.`;
    expect(giant.length).toBeGreaterThan(5000);
    const alone = summarize(giant);
    expect(alone.length).toBeLessThanOrEqual(DEFAULT_SUMMARIZE_OPTIONS.maxChars);
    expect(alone.endsWith('…')).toBe(true);
    expect(giant.startsWith(alone.slice(0, -1))).toBe(true);
    expect(alone.slice(0, -1)).toMatch(/(?:go|on|words|endless)$/);

    const mixed = summarize(`Memo search works well. ${giant} Memo search is fast.`);
    expect(mixed.length).toBeLessThanOrEqual(DEFAULT_SUMMARIZE_OPTIONS.maxChars);
    expect(mixed).toContain('…');
  });

  it('caps the whole summary', () => {
    const long = Array.from(
      { length: 12 },
      (_, i) => `Memo indexing sentence ${i} repeats memo indexing words ${'and more words '.repeat(12)}here.`,
    ).join(' ');
    const summary = summarize(long, { maxChars: 400 });
    expect(summary.length).toBeLessThanOrEqual(400);
    expect(summary.length).toBeGreaterThan(0);
    expect(summarize(long, { maxChars: 50, maxSentences: 3 }).length).toBeLessThanOrEqual(50);
  });

  it('is deterministic', () => {
    expect(summarize(ARTICLE)).toBe(summarize(ARTICLE));
  });

  it('drops the Markdown marks of a heading it picks (extracted documents keep headings as ##)', () => {
    const doc = '# Safety manual\n\n## Cranes\n\nCrane operators must inspect the hoist cable daily.\n\n## Brakes\n\nThe brake is tested every week by the shift lead.';
    const summary = summarize(doc, { maxSentences: 4 });
    expect(summary).not.toMatch(/#/);
    expect(summary).toContain('Crane operators must inspect the hoist cable daily.');
  });
});
