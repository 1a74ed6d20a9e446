/**
 * A model's reply to the summary prompt, read leniently: models are untrusted input, and a reply
 * that is not the JSON we asked for still says something usable far more often than not.
 */
import { splitSentences, truncateAtWord } from '@memex/text';
import type { ModelSummary } from './port';

const MAX_TAGS = 8;
const MAX_SENTENCES = 3;
/** A summary never exceeds this, whatever the model wrote (three long sentences fit). */
export const MAX_SUMMARY_CHARS = 1_200;

/** A reply that holds nothing to use as a summary: the caller asks again or falls back. */
export class UnusableSummaryError extends Error {
  constructor(
    readonly kind: 'empty' | 'format',
    message: string,
  ) {
    super(message);
    this.name = 'UnusableSummaryError';
  }
}

/** At most three sentences and `MAX_SUMMARY_CHARS`, whatever the model wrote. */
function capSummary(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  const sentences = splitSentences(flat);
  const capped = sentences.length <= MAX_SENTENCES ? flat : flat.slice(0, sentences[MAX_SENTENCES - 1]!.end).trim();
  return capped.length > MAX_SUMMARY_CHARS ? truncateAtWord(capped, MAX_SUMMARY_CHARS) : capped;
}

function cleanTags(tags: readonly unknown[]): string[] {
  const clean = tags
    .filter((t): t is string => typeof t === 'string')
    .map((t) => t.replace(/^#/, '').replace(/\s+/g, ' ').trim().toLowerCase())
    .filter((t) => t.length > 0 && t.length <= 100);
  return [...new Set(clean)].slice(0, MAX_TAGS);
}

/** Tags as a model may write them: an array, or one string of comma- or newline-separated tags. */
function tagList(value: unknown): string[] {
  if (Array.isArray(value)) return cleanTags(value);
  if (typeof value === 'string') return cleanTags(value.split(/[,;\n]/));
  return [];
}

/** The text inside the first Markdown code fence, if there is one. */
function unfence(text: string): string {
  const match = /```[\w-]*[ \t]*\r?\n?([\s\S]*?)```/.exec(text);
  return match ? match[1]!.trim() : text.trim();
}

/** The first balanced `{…}` or `[…]` in `text` that parses as JSON (strings and escapes respected). */
function firstJson(text: string): unknown {
  for (let start = 0; start < text.length; start++) {
    const open = text[start];
    if (open !== '{' && open !== '[') continue;
    let depth = 0;
    let inString = false;
    for (let i = start; i < text.length; i++) {
      const ch = text[i];
      if (inString) {
        if (ch === '\\') i++;
        else if (ch === '"') inString = false;
      } else if (ch === '"') inString = true;
      else if (ch === '{' || ch === '[') depth++;
      else if (ch === '}' || ch === ']') {
        depth--;
        if (depth === 0) {
          try {
            return JSON.parse(text.slice(start, i + 1));
          } catch {
            break;
          }
        }
      }
    }
  }
  return undefined;
}

/** A key of `value` by name, whatever its case, spacing or underscores. */
function field(value: Record<string, unknown>, ...names: string[]): unknown {
  const wanted = new Set(names);
  for (const [key, v] of Object.entries(value)) if (wanted.has(key.toLowerCase().replace(/[\s_-]/g, ''))) return v;
  return undefined;
}

/** `"summary": "…"` out of JSON too broken to parse. */
function salvageSummary(text: string): string | undefined {
  const match = /"summary"\s*:\s*"((?:[^"\\]|\\.)*)/i.exec(text);
  if (!match) return undefined;
  try {
    return JSON.parse(`"${match[1]!.replace(/\\$/, '')}"`) as string;
  } catch {
    return match[1];
  }
}

/** Prose with the labels and decoration models put around a summary taken off. */
function proseSummary(text: string): string {
  return text
    .replace(/^\s*(?:#+\s*)?(?:\*\*)?(?:here(?:'s| is) (?:a |the )?)?summary(?:\*\*)?\s*[:\-–]\s*(?:\*\*)?/i, '')
    .replace(/^\s*tags?\s*:.*$/gim, '')
    .replace(/[*_`#>]+/g, '')
    .trim();
}

/** Prose ending in a "Tags: a, b" line: that line's tags. */
function proseTags(text: string): string[] {
  const line = /^\s*(?:\*\*)?tags?(?:\*\*)?\s*:\s*(.+)$/im.exec(text);
  return line ? tagList(line[1]) : [];
}

/**
 * Reads a summary reply: a JSON object (bare, fenced, or inside prose; keys in any case; tags as
 * an array or a string) is `model`; prose is the summary itself, `model-text`, with its tags line
 * if it has one (else tags are left empty, for the extractive tagger). A bare list of tags has
 * no summary. Throws `UnusableSummaryError` for a reply with nothing usable in it.
 */
export function readSummaryReply(raw: string | undefined): ModelSummary {
  const text = (raw ?? '').trim();
  if (text === '') throw new UnusableSummaryError('empty', 'the model sent an empty summary');
  const inner = unfence(text);
  const json = firstJson(inner);
  if (Array.isArray(json)) {
    throw new UnusableSummaryError('format', `the model sent a list instead of a summary: ${truncateAtWord(inner, 120)}`);
  }
  if (json && typeof json === 'object') {
    const value = json as Record<string, unknown>;
    const summary = field(value, 'summary', 'abstract', 'description', 'text');
    const tags = tagList(field(value, 'tags', 'keywords', 'topics', 'labels'));
    if (typeof summary === 'string' && summary.trim() !== '') return { summary: capSummary(summary), tags, source: 'model' };
    throw new UnusableSummaryError('format', `the model's JSON has no summary: ${truncateAtWord(inner, 120)}`);
  }
  if (/^[{[]/.test(inner)) {
    const salvaged = salvageSummary(inner);
    if (salvaged && salvaged.trim() !== '') return { summary: capSummary(salvaged), tags: [], source: 'model-text' };
    throw new UnusableSummaryError('format', `the model sent malformed JSON: ${truncateAtWord(inner, 120)}`);
  }
  const prose = proseSummary(inner);
  if (prose === '') throw new UnusableSummaryError('empty', 'the model sent no summary text');
  return { summary: capSummary(prose), tags: proseTags(inner), source: 'model-text' };
}
