import { describe, expect, it } from 'vitest';
import { MAX_SUMMARY_CHARS, UnusableSummaryError, readSummaryReply } from './summaryReply';

describe('readSummaryReply', () => {
  it('reads the JSON object asked for', () => {
    expect(readSummaryReply('{"summary":"Cranes unload ships.","tags":["Harbour","#cranes"]}')).toEqual({ summary: 'Cranes unload ships.', tags: ['harbour', 'cranes'], source: 'model' });
  });

  it.each([
    ['fenced', '```json\n{"summary": "Cranes unload ships.", "tags": ["harbour"]}\n```'],
    ['fenced without a language', '```\n{"summary": "Cranes unload ships.", "tags": ["harbour"]}\n```'],
    ['inside prose', 'Sure! Here is the JSON you asked for: {"summary": "Cranes unload ships.", "tags": ["harbour"]} Hope it helps.'],
    ['keys in other cases', '{"Summary": "Cranes unload ships.", "TAGS": ["Harbour"]}'],
    ['tags as one string', '{"summary": "Cranes unload ships.", "tags": "harbour"}'],
    ['keywords for tags', '{"summary": "Cranes unload ships.", "keywords": ["harbour"]}'],
  ])('reads a JSON object %s', (_, raw) => {
    expect(readSummaryReply(raw)).toEqual({ summary: 'Cranes unload ships.', tags: ['harbour'], source: 'model' });
  });

  it('takes plain prose as the summary, trimmed to three sentences, with no tags of its own', () => {
    const reply = readSummaryReply('Summary: The harbour has cranes. They unload ships. Each moves thirty boxes. A fourth sentence is cut.');
    expect(reply).toEqual({ summary: 'The harbour has cranes. They unload ships. Each moves thirty boxes.', tags: [], source: 'model-text' });
  });

  it('takes the tags line of a prose reply', () => {
    expect(readSummaryReply('**Summary:** Cranes unload ships.\nTags: harbour, cranes')).toEqual({ summary: 'Cranes unload ships.', tags: ['harbour', 'cranes'], source: 'model-text' });
  });

  it('caps a runaway prose reply', () => {
    const reply = readSummaryReply('word '.repeat(2_000));
    expect(reply.summary.length).toBeLessThanOrEqual(MAX_SUMMARY_CHARS);
    expect(reply.source).toBe('model-text');
  });

  it('salvages the summary of truncated JSON', () => {
    expect(readSummaryReply('{"summary": "Cranes unload ships.", "tags": ["harb')).toEqual({ summary: 'Cranes unload ships.', tags: [], source: 'model-text' });
  });

  it.each([
    ['empty', '', 'empty'],
    ['blank', '  \n ', 'empty'],
    ['a bare list', '["harbour", "cranes"]', 'format'],
    ['JSON without a summary', '{"tags": ["harbour"]}', 'format'],
    ['broken JSON without a summary', '{"tags": [', 'format'],
  ])('refuses %s', (_, raw, kind) => {
    expect(() => readSummaryReply(raw)).toThrow(UnusableSummaryError);
    try {
      readSummaryReply(raw);
    } catch (error) {
      expect((error as UnusableSummaryError).kind).toBe(kind);
    }
  });
});
