const TRAILING_JOINERS = /[\s,;:([{'"“‘\-–—]+$/u;
const WHITESPACE_RUN = /\s+/g;

/** Collapses every whitespace run (newlines included) to one space and trims the ends. */
export function collapseWhitespace(text: string): string {
  return text.replace(WHITESPACE_RUN, ' ').trim();
}

/**
 * Shortens `text` to at most `maxChars` UTF-16 units, ending with "…" when anything was cut.
 * The cut falls after a whole word unless that would discard more than half of the budget
 * (one enormous word), and never splits a surrogate pair.
 */
export function truncateAtWord(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  if (maxChars < 1) return '';
  const budget = maxChars - 1;
  let cut = -1;
  for (let i = budget; i > budget / 2; i--) {
    if (/\s/.test(text.charAt(i))) {
      cut = i;
      break;
    }
  }
  if (cut === -1) {
    cut = budget;
    const c = text.charCodeAt(cut - 1);
    if (c >= 0xd800 && c <= 0xdbff) cut--;
  }
  return text.slice(0, cut).replace(TRAILING_JOINERS, '') + '…';
}
