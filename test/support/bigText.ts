import { pick, seededRandom } from '@memex/testing';

const SYLLABLES = ['ka', 'lo', 'mir', 'tan', 'pe', 'sul', 'vor', 'ne', 'dra', 'qui', 'bel', 'o', 'fen', 'ra', 'tis', 'gu', 'hal', 'zen'];

/**
 * Prose-like text of about `bytes` UTF-8 bytes (sentences of made-up words, paragraphs, a few
 * accented and astral characters), the same for the same seed, ending with `lastSentence`.
 */
export function bigText(bytes: number, lastSentence: string, seed = 7): string {
  const random = seededRandom(seed);
  const words = Array.from({ length: 3000 }, () => Array.from({ length: 2 + Math.floor(random() * 3) }, () => pick(random, SYLLABLES)).join(''));
  words.push('café', 'naïve', 'Ångström', '𝔘nicode');
  const parts: string[] = [];
  let size = 0;
  const budget = bytes - Buffer.byteLength(lastSentence) - 2;
  while (size < budget) {
    const n = 8 + Math.floor(random() * 12);
    const sentence = Array.from({ length: n }, () => pick(random, words)).join(' ');
    const text = `${sentence.charAt(0).toUpperCase()}${sentence.slice(1)}.${random() < 0.15 ? '\n\n' : ' '}`;
    parts.push(text);
    size += Buffer.byteLength(text);
  }
  return `${parts.join('').slice(0, budget).trimEnd()}\n\n${lastSentence}`;
}
