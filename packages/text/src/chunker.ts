import { eachSentenceInfo, isWhitespaceCode } from './sentences.js';

/** One piece of a text. `content === text.slice(start, end)` (UTF-16 offsets). */
export interface Chunk {
  /** Position in the returned array: 0..n-1. */
  index: number;
  content: string;
  start: number;
  end: number;
}

export interface ChunkOptions {
  /**
   * Preferred chunk length in characters. Chunks fill up to it with whole sentences and may go
   * past it (up to `maxChars`) only to end at a paragraph, to swallow the rest of the text, or
   * to hold one long sentence. Values above `maxChars` are treated as `maxChars`.
   */
  targetChars?: number;
  /** Hard upper bound on a chunk's length in characters; never exceeded. */
  maxChars?: number;
  /**
   * How much of the previous chunk's tail to repeat at the start of the next one, in whole
   * sentences whose total length fits. 0 disables overlap.
   */
  overlapChars?: number;
}

export const DEFAULT_CHUNK_OPTIONS: Readonly<Required<ChunkOptions>> = Object.freeze({
  targetChars: 1000,
  maxChars: 1500,
  overlapChars: 200,
});

interface Unit {
  start: number;
  end: number;
  /** A good place to begin a chunk: the start of a paragraph or section. */
  blockStart: boolean;
}

function resolveOptions(options: ChunkOptions | undefined): Required<ChunkOptions> {
  const o = { ...DEFAULT_CHUNK_OPTIONS, ...options };
  const maxChars = Math.floor(o.maxChars);
  const targetChars = Math.floor(o.targetChars);
  const overlapChars = Math.floor(o.overlapChars);
  if (!(maxChars >= 1)) throw new RangeError(`maxChars must be >= 1, got ${o.maxChars}`);
  if (!(targetChars >= 1)) throw new RangeError(`targetChars must be >= 1, got ${o.targetChars}`);
  if (!(overlapChars >= 0)) {
    throw new RangeError(`overlapChars must be >= 0, got ${o.overlapChars}`);
  }
  return { maxChars, targetChars: Math.min(targetChars, maxChars), overlapChars };
}

/** Index at which to cut `text[from, limit)` without splitting a surrogate pair. */
function safeCut(text: string, from: number, limit: number): number {
  const c = text.charCodeAt(limit - 1);
  return limit - 1 > from && c >= 0xd800 && c <= 0xdbff ? limit - 1 : limit;
}

/**
 * Pieces of an over-long sentence: each at most `target` characters cut after a word, or
 * longer (up to `max`) when that is the only way to keep a word whole.
 */
function cutSentence(
  text: string,
  start: number,
  end: number,
  target: number,
  max: number,
): Unit[] {
  const pieces: Unit[] = [];
  let p = start;
  while (p < end) {
    if (end - p <= target) {
      pieces.push({ start: p, end, blockStart: false });
      break;
    }
    let cut = -1;
    // Last whitespace within the target window, else the first one before `max`.
    for (let i = p + target; i > p; i--) {
      if (isWhitespaceCode(text.charCodeAt(i))) {
        cut = i;
        break;
      }
    }
    if (cut === -1) {
      const limit = Math.min(end, p + max);
      for (let i = p + target + 1; i <= limit; i++) {
        if (i === end || isWhitespaceCode(text.charCodeAt(i))) {
          cut = i;
          break;
        }
      }
    }
    if (cut === -1) cut = safeCut(text, p, p + max);
    let pieceEnd = cut;
    while (pieceEnd > p && isWhitespaceCode(text.charCodeAt(pieceEnd - 1))) pieceEnd--;
    pieces.push({ start: p, end: pieceEnd, blockStart: false });
    p = cut;
    while (p < end && isWhitespaceCode(text.charCodeAt(p))) p++;
  }
  return pieces;
}

/**
 * Splits `text` into ordered, overlapping chunks of whole sentences for embedding.
 *
 * Guarantees: indices run 0..n-1; chunks are in text order, each starting and ending later than
 * the previous one; no chunk is longer than `maxChars`; every non-whitespace character lies in
 * some chunk (a sentence longer than `maxChars` is cut at word boundaries, inside a word only if
 * the word alone exceeds `maxChars`); consecutive chunks share at most `overlapChars`
 * characters and never a whole chunk; empty or whitespace-only text gives no chunks; text whose
 * trimmed length fits in `maxChars` gives exactly one chunk equal to the trimmed text; the
 * result depends only on the inputs.
 */
export function chunkText(text: string, options?: ChunkOptions): Chunk[] {
  const steps = chunkTextSteps(text, options);
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/**
 * {@link chunkText}'s work in steps: it pauses (yields) after each sentence read and each chunk
 * made, so a caller can spread a long text over several turns of its event loop; it returns what
 * `chunkText` does.
 */
export function* chunkTextSteps(text: string, options?: ChunkOptions): Generator<void, Chunk[], void> {
  const { targetChars, maxChars, overlapChars } = resolveOptions(options);
  const units: Unit[] = [];
  for (const s of eachSentenceInfo(text)) {
    if (s.end - s.start <= maxChars) {
      units.push({ start: s.start, end: s.end, blockStart: s.blockStart });
    } else {
      const pieces = cutSentence(text, s.start, s.end, targetChars, maxChars);
      const first = pieces[0];
      if (first) first.blockStart = s.blockStart;
      units.push(...pieces);
    }
    yield;
  }
  const n = units.length;
  const chunks: Chunk[] = [];
  if (n === 0) return chunks;

  const at = (i: number): Unit => units[i] as Unit;
  const span = (a: number, b: number): number => at(b).end - at(a).start;
  const push = (a: number, b: number): void => {
    const start = at(a).start;
    const end = at(b).end;
    chunks.push({ index: chunks.length, content: text.slice(start, end), start, end });
  };

  let first = 0; // first unit of the current chunk
  let mustReach = 0; // first unit not yet in any chunk: the current chunk has to include it
  for (;;) {
    if (span(first, n - 1) <= maxChars) {
      push(first, n - 1);
      return chunks;
    }
    let last = mustReach;
    while (last + 1 < n && span(first, last + 1) <= targetChars) last++;
    last = preferBlockEnd(units, first, mustReach, last, targetChars, maxChars, span);
    push(first, last);
    yield;

    let next = last + 1;
    while (next - 1 > first && span(next - 1, last) <= overlapChars) next--;
    // The overlap must leave room for at least one new unit.
    while (next <= last && span(next, last + 1) > maxChars) next++;
    first = next;
    mustReach = last + 1;
  }
}

/**
 * Moves a chunk's end to a paragraph/section boundary when one lies close to the target:
 * the nearest boundary at or before `last` that keeps the chunk at least half the target, or
 * the nearest after it within `maxChars`, whichever lands closer to the target.
 */
function preferBlockEnd(
  units: readonly Unit[],
  first: number,
  mustReach: number,
  last: number,
  targetChars: number,
  maxChars: number,
  span: (a: number, b: number) => number,
): number {
  const startsBlock = (i: number): boolean => units[i]?.blockStart ?? true;
  if (startsBlock(last + 1)) return last;
  let back = -1;
  for (let e = last - 1; e >= mustReach; e--) {
    if (span(first, e) < targetChars / 2) break;
    if (startsBlock(e + 1)) {
      back = e;
      break;
    }
  }
  let forward = -1;
  for (let e = last + 1; e < units.length && span(first, e) <= maxChars; e++) {
    if (startsBlock(e + 1)) {
      forward = e;
      break;
    }
  }
  if (back === -1 && forward === -1) return last;
  if (forward === -1) return back;
  if (back === -1) return forward;
  const backGap = targetChars - span(first, back);
  const forwardGap = span(first, forward) - targetChars;
  return forwardGap < backGap ? forward : back;
}
