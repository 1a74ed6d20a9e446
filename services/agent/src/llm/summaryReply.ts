/**
 * A model's reply to the summary prompt, read into a summary and tags.
 */
import { splitSentences, truncateAtWord } from '@memex/text';

const MAX_TAGS = 8;

/** At most three sentences, whatever the model wrote. */
function capSentences(text: string, max: number): string {
  const sentences = splitSentences(text);
  return sentences.length <= max ? text.trim() : text.slice(0, sentences[max - 1]!.end).trim();
}

export function parseSummary(raw: string | undefined): { summary: string; tags: string[] } | string {
  let value: unknown;
  try {
    value = JSON.parse(raw ?? '');
  } catch {
    return `not JSON: ${truncateAtWord(String(raw ?? ''), 120)}`;
  }
  const { summary, tags } = (value ?? {}) as { summary?: unknown; tags?: unknown };
  if (typeof summary !== 'string' || summary.trim() === '') return 'no summary';
  if (!Array.isArray(tags)) return 'no tags array';
  const clean = tags
    .filter((t): t is string => typeof t === 'string')
    .map((t) => t.replace(/^#/, '').replace(/\s+/g, ' ').trim().toLowerCase())
    .filter((t) => t.length > 0 && t.length <= 100);
  return { summary: capSentences(summary, 3), tags: [...new Set(clean)].slice(0, MAX_TAGS) };
}
