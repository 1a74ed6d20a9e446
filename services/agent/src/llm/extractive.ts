import { collapseWhitespace, extractKeyphrases, hasLexicalOverlap, scoreSentences, splitSentences, summarize, truncateAtWord } from '@memex/text';
import type { AnswerRequest, AnswerResult, LlmProvider, ModelSummary, Passage, TokenSink } from './port';

/** What the extractive provider says when the knowledge base has nothing on the question. */
export const NOTHING_FOUND = 'I could not find anything about this in the knowledge base.';

/** Format rules the extractive writer can honour, read from free-text `rules` / system prompts. */
export interface WritingRules {
  headings: boolean;
  list: 'bullets' | 'numbered' | 'none';
  /** Soft cap on the words of the body. */
  maxWords: number | undefined;
  /** Fewest sentences that still answer: "brief", "concise", "one sentence". */
  brief: boolean;
}

/** Reads the format rules it can follow; everything else in the rules is ignored, never obeyed blindly. */
export function parseRules(text: string | undefined): WritingRules {
  const t = (text ?? '').toLowerCase();
  const words = /\b(?:under|at most|max(?:imum)?|no more than|fewer than|less than|within)\s+(\d{1,5})\s+words?\b/.exec(t) ?? /\b(\d{1,5})\s+words?\b/.exec(t);
  return {
    headings: !/\bno (?:headings|headers|titles|sections)\b|without (?:headings|headers)|plain (?:text|prose)|single paragraph|one paragraph/.test(t),
    list: /\bnumbered\b|\bordered list\b|\bsteps?\b/.test(t)
      ? 'numbered'
      : /\bno (?:bullets?|lists?)\b|\bprose\b|\bparagraphs? only\b|single paragraph|one paragraph/.test(t)
        ? 'none'
        : 'bullets',
    maxWords: words ? Math.max(10, Number(words[1])) : undefined,
    brief: /\b(?:brief|briefly|concise|short|one sentence|tl;?dr|in a nutshell)\b/.test(t),
  };
}

const POLITE = /^(?:please|kindly|can you|could you|would you|will you|i need|i want|i would like|i'd like|we need|help me|let's|lets)\s+/i;
const VERB =
  /^(?:write(?:\s+up)?|generate|create|draft|produce|prepare|compose|make|give|put together|summari[sz]e|outline|document|build|assemble|pull together|come up with)(?:\s+(?:me|us|up))?(?=\s|$)\s*/i;
const ARTICLE = /^(?:an?|the|some|my|our)\s+/i;
// One descriptor at a time: "short", "one-paragraph", "two page", "500-word", "high-level".
const DESCRIPTOR =
  /^(?:short|brief|quick|detailed|concise|simple|formal|informal|technical|executive|comprehensive|full|thorough|high[-\s]level|single[-\s]page|(?:one|two|three|four|five|\d+)[-\s](?:page|paragraph|word|line|sentence|minute|section)s?|\d+\s+words?)(?=[\s,]|$)[\s,]*/i;
const GENRE =
  /^(?:document|doc|report|summary|overview|memo|note|notes|article|brief|briefing|page|guide|explainer|write-?up|essay|paragraph|piece|post|blog post|faq|primer|introduction|explanation|description|outline|checklist|proposal|plan|review|handout|one-pager|digest|recap)(?=\s|$)\s*/i;
const CONNECTIVE = /^(?:about|on|of|for|covering|describing|regarding|concerning|explaining|summari[sz]ing|that (?:explains|covers|describes|summari[sz]es)|to explain|to|with)(?=\s|$)\s*/i;
const QUESTION = /^(?:what|who|which)\s+(?:is|are|was|were)\s+(?:the\s+)?/i;

function strip(text: string, pattern: RegExp): string {
  return text.replace(pattern, '');
}

/**
 * A title for a generated document: the prompt's subject, in title case. The instruction around
 * it (politeness, the verb, an article, descriptors such as "one-paragraph", the kind of document
 * and the word joining it to the subject) is cut whole words at a time, so a word is never split.
 */
export function titleFromPrompt(prompt: string): string {
  const whole = collapseWhitespace(prompt).replace(/^["'“”‘’]+|["'“”‘’]+$/g, '').replace(/[.!?:;,]+$/, '').trim();
  let t = whole;
  while (POLITE.test(t)) t = strip(t, POLITE);
  const instructed = VERB.test(t);
  t = strip(t, VERB);
  t = strip(t, QUESTION);
  const before = t;
  t = strip(t, ARTICLE);
  while (DESCRIPTOR.test(t)) t = strip(t, DESCRIPTOR);
  const genre = GENRE.exec(t);
  if (genre) t = strip(t, GENRE);
  // "a/the" kept when it is the subject's own ("the state of backups"), not the document's.
  if (!genre && !instructed) t = before;
  t = strip(t, CONNECTIVE);
  if (t === '') t = genre ? genre[0].trim() : whole;
  if (t === '') t = 'Document';
  const small = new Set(['a', 'an', 'and', 'as', 'at', 'by', 'for', 'in', 'of', 'on', 'or', 'the', 'to', 'with', 'from', 'into', 'vs']);
  const titled = t
    .split(' ')
    .map((w, i) => (i > 0 && small.has(w.toLowerCase()) ? w.toLowerCase() : w.charAt(0).toUpperCase() + w.slice(1)))
    .join(' ');
  return truncateAtWord(titled, 90);
}

/** Words with their following whitespace: the unit the provider streams. */
export function wordTokens(text: string): string[] {
  return text.match(/\S+\s*|\s+/g) ?? [];
}

async function streamText(text: string, onToken: TokenSink, signal: AbortSignal): Promise<void> {
  for (const token of wordTokens(text)) {
    if (signal.aborted) throw signal.reason ?? new Error('aborted');
    await onToken(token);
  }
}

function truncateWords(text: string, maxWords: number | undefined): string {
  if (maxWords === undefined) return text;
  const words = text.split(/(\s+)/);
  let count = 0;
  const out: string[] = [];
  for (const part of words) {
    if (/\S/.test(part)) count += 1;
    if (count > maxWords) break;
    out.push(part);
  }
  return out.join('').trimEnd();
}

interface Evidence {
  passage: Passage;
  sentence: string;
  score: number;
}

/** The passages' sentences that address `query`, best first, each once. */
function evidence(query: string, passages: readonly Passage[], limit: number): Evidence[] {
  const byId = new Map(passages.map((p) => [String(p.n), p]));
  const seen = new Set<string>();
  const out: Evidence[] = [];
  for (const s of scoreSentences(
    query,
    passages.map((p) => ({ id: String(p.n), text: p.content })),
  )) {
    const key = s.text.toLowerCase();
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ passage: byId.get(s.passageId)!, sentence: truncateAtWord(s.text, 400), score: s.score });
    if (out.length >= limit) break;
  }
  return out;
}

/** The extractive summary and tags: the built-in provider's, and the fallback when a model fails. */
export function extractiveSummary(content: string): { summary: string; tags: string[] } {
  return { summary: summarize(content, { maxSentences: 3 }), tags: extractKeyphrases(content, { max: 8 }).map((t) => t.toLowerCase()) };
}

/**
 * The built-in provider: no model, no network. Summaries are the most central sentences, tags the
 * top keyphrases; answers quote the retrieved sentences that best cover the question, with [n]
 * citations; documents are assembled from the retrieved memos under headings that follow the
 * prompt and the format rules it can read. Deterministic, so tests can assert on what it says.
 */
export class ExtractiveProvider implements LlmProvider {
  readonly name = 'extractive';

  async summarize(content: string): Promise<ModelSummary> {
    return { ...extractiveSummary(content), source: 'extractive' };
  }

  async readiness() {
    return { ready: true, details: { provider: this.name } };
  }

  async answer(request: AnswerRequest, onToken: TokenSink, signal: AbortSignal): Promise<AnswerResult> {
    const text = request.kind === 'chat' ? this.chatAnswer(request) : this.document(request);
    await streamText(text, onToken, signal);
    return { text, steps: [], passages: request.passages };
  }

  private relevant(request: AnswerRequest): Passage[] {
    // Retrieval ranks by fused relevance; the extractive writer also needs word overlap to quote.
    return request.passages.filter((p) => hasLexicalOverlap(request.input, p.content) || hasLexicalOverlap(request.input, p.memoTitle));
  }

  private chatAnswer(request: AnswerRequest): string {
    const rules = parseRules(request.systemPrompt);
    const passages = this.relevant(request);
    const found = evidence(request.input, passages, rules.brief ? 1 : 4).filter((e, i) => i === 0 || e.score >= 0.25);
    if (found.length === 0) return NOTHING_FOUND;
    const lines = found.map((e) => `${e.sentence.replace(/\s*$/, '')} [${e.passage.n}]`);
    const body =
      rules.list === 'numbered'
        ? lines.map((l, i) => `${i + 1}. ${l}`).join('\n')
        : rules.list === 'bullets' && /\bbullets?\b|\blist\b/.test((request.systemPrompt ?? '').toLowerCase())
          ? lines.map((l) => `- ${l}`).join('\n')
          : lines.join(' ');
    return truncateWords(`From the knowledge base: ${body}`, rules.maxWords);
  }

  private document(request: AnswerRequest): string {
    const rules = parseRules(request.rules);
    const title = titleFromPrompt(request.input);
    const passages = this.relevant(request);
    const out: string[] = [];
    if (rules.headings) out.push(`# ${title}`, '');
    if (passages.length === 0) {
      out.push('The knowledge base has nothing on this topic yet, so there is nothing to base this document on.');
      return out.join('\n');
    }
    const bullet = (i: number) => (rules.list === 'numbered' ? `${i + 1}. ` : '- ');

    // One section per memo, in the order retrieval ranked its best chunk.
    const memos: { title: string; passages: Passage[] }[] = [];
    for (const p of passages) {
      const section = memos.find((m) => m.passages[0]!.memoId === p.memoId);
      if (section) section.passages.push(p);
      else memos.push({ title: p.memoTitle || 'Untitled memo', passages: [p] });
    }
    const sectionLimit = rules.brief ? 2 : 5;
    const limit = rules.brief ? 3 : 5;
    let keyPoints = evidence(request.input, passages, limit);
    // The passages matched through their memo's title or meaning, not their wording: lead with
    // each one's opening sentence instead of leaving the key points empty.
    if (keyPoints.length === 0) {
      keyPoints = passages.slice(0, limit).map((passage) => ({
        passage,
        sentence: truncateAtWord(splitSentences(passage.content)[0]?.text ?? passage.content, 400),
        score: 0,
      }));
    }
    if (rules.headings) out.push('## Key points', '');
    if (rules.list === 'none') out.push(keyPoints.map((e) => `${e.sentence} [${e.passage.n}]`).join(' '));
    else keyPoints.forEach((e, i) => out.push(`${bullet(i)}${e.sentence} [${e.passage.n}]`));
    out.push('');
    for (const memo of memos.slice(0, sectionLimit)) {
      const sentences = evidence(request.input, memo.passages, rules.brief ? 1 : 3);
      const text =
        sentences.length > 0
          ? sentences.map((e) => `${e.sentence} [${e.passage.n}]`).join(' ')
          : `${truncateAtWord(memo.passages[0]!.content, 300)} [${memo.passages[0]!.n}]`;
      if (rules.headings) out.push(`## ${memo.title}`, '');
      out.push(text, '');
    }
    if (rules.headings) out.push('## Sources', '');
    const cited = [...new Map(passages.map((p) => [p.n, p])).values()].sort((a, b) => a.n - b.n);
    for (const p of cited) out.push(`[${p.n}] ${p.memoTitle || 'Untitled memo'}`);
    const body = out.join('\n').trimEnd();
    return rules.maxWords === undefined ? body : truncateWords(body, rules.maxWords);
  }
}
