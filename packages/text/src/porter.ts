// Porter (1980) suffix-stripping stemmer, written from the published step definitions.
// Two corrections Porter later published for the paper's step 2 are applied: "bli"→"ble"
// (the paper has "abli"→"able", which leaves "possibly" and "possible" with different stems)
// and the extra rule "logi"→"log".

function isConsonant(w: string, i: number): boolean {
  switch (w.charCodeAt(i)) {
    case 97: // a
    case 101: // e
    case 105: // i
    case 111: // o
    case 117: // u
      return false;
    case 121: // y: a vowel after a consonant, a consonant otherwise
      return i === 0 ? true : !isConsonant(w, i - 1);
    default:
      return true;
  }
}

/** m in [C](VC)^m[V] for the first `len` letters. */
function measure(w: string, len: number): number {
  let i = 0;
  let m = 0;
  while (i < len && isConsonant(w, i)) i++;
  while (i < len) {
    while (i < len && !isConsonant(w, i)) i++;
    if (i >= len) break;
    while (i < len && isConsonant(w, i)) i++;
    m++;
  }
  return m;
}

/** *v*: the first `len` letters contain a vowel. */
function hasVowel(w: string, len: number): boolean {
  for (let i = 0; i < len; i++) if (!isConsonant(w, i)) return true;
  return false;
}

/** *d: the first `len` letters end with a double consonant. */
function endsDoubleConsonant(w: string, len: number): boolean {
  return len >= 2 && w.charCodeAt(len - 1) === w.charCodeAt(len - 2) && isConsonant(w, len - 1);
}

/** *o: the first `len` letters end consonant-vowel-consonant, the last not w, x or y. */
function endsCvc(w: string, len: number): boolean {
  if (len < 3) return false;
  if (!isConsonant(w, len - 3) || isConsonant(w, len - 2) || !isConsonant(w, len - 1)) return false;
  const last = w.charAt(len - 1);
  return last !== 'w' && last !== 'x' && last !== 'y';
}

type Condition = (w: string, stemLen: number) => boolean;
type Rule = readonly [suffix: string, replacement: string, condition?: Condition];

const m0: Condition = (w, n) => measure(w, n) > 0;
const m1: Condition = (w, n) => measure(w, n) > 1;

function byLongestSuffix(rules: Rule[]): Rule[] {
  return [...rules].sort((a, b) => b[0].length - a[0].length);
}

/** The longest matching suffix decides; if its condition fails no shorter rule is tried. */
function applyRules(w: string, rules: readonly Rule[], fallback?: Condition): string {
  for (const [suffix, replacement, condition = fallback] of rules) {
    if (!w.endsWith(suffix)) continue;
    const stemLen = w.length - suffix.length;
    if (condition && !condition(w, stemLen)) return w;
    return w.slice(0, stemLen) + replacement;
  }
  return w;
}

const STEP1A = byLongestSuffix([
  ['sses', 'ss'],
  ['ies', 'i'],
  ['ss', 'ss'],
  ['s', ''],
]);

const STEP2 = byLongestSuffix([
  ['ational', 'ate'],
  ['tional', 'tion'],
  ['enci', 'ence'],
  ['anci', 'ance'],
  ['izer', 'ize'],
  ['bli', 'ble'],
  ['alli', 'al'],
  ['entli', 'ent'],
  ['eli', 'e'],
  ['ousli', 'ous'],
  ['ization', 'ize'],
  ['ation', 'ate'],
  ['ator', 'ate'],
  ['alism', 'al'],
  ['iveness', 'ive'],
  ['fulness', 'ful'],
  ['ousness', 'ous'],
  ['aliti', 'al'],
  ['iviti', 'ive'],
  ['biliti', 'ble'],
  ['logi', 'log'],
]);

const STEP3 = byLongestSuffix([
  ['icate', 'ic'],
  ['ative', ''],
  ['alize', 'al'],
  ['iciti', 'ic'],
  ['ical', 'ic'],
  ['ful', ''],
  ['ness', ''],
]);

const endsSOrT: Condition = (w, n) => {
  const c = w.charAt(n - 1);
  return (c === 's' || c === 't') && measure(w, n) > 1;
};

const STEP4 = byLongestSuffix(
  ['al', 'ance', 'ence', 'er', 'ic', 'able', 'ible', 'ant', 'ement', 'ment', 'ent', 'ou', 'ism',
    'ate', 'iti', 'ous', 'ive', 'ize']
    .map((s): Rule => [s, ''])
    .concat([['ion', '', endsSOrT]]),
);

function step1b(w: string): string {
  if (w.endsWith('eed')) {
    return measure(w, w.length - 3) > 0 ? w.slice(0, -1) : w;
  }
  let stem: string;
  if (w.endsWith('ed') && hasVowel(w, w.length - 2)) stem = w.slice(0, -2);
  else if (w.endsWith('ing') && hasVowel(w, w.length - 3)) stem = w.slice(0, -3);
  else return w;

  if (stem.endsWith('at') || stem.endsWith('bl') || stem.endsWith('iz')) return stem + 'e';
  const n = stem.length;
  if (endsDoubleConsonant(stem, n)) {
    const last = stem.charAt(n - 1);
    return last === 'l' || last === 's' || last === 'z' ? stem : stem.slice(0, -1);
  }
  if (measure(stem, n) === 1 && endsCvc(stem, n)) return stem + 'e';
  return stem;
}

function step1c(w: string): string {
  return w.endsWith('y') && hasVowel(w, w.length - 1) ? w.slice(0, -1) + 'i' : w;
}

function step5(w: string): string {
  if (w.endsWith('e')) {
    const n = w.length - 1;
    const m = measure(w, n);
    if (m > 1 || (m === 1 && !endsCvc(w, n))) w = w.slice(0, n);
  }
  if (w.endsWith('ll') && measure(w, w.length) > 1) w = w.slice(0, -1);
  return w;
}

const ASCII_WORD = /^[a-z]+$/;
// Word frequencies are Zipfian, so a modest memo table removes most stemming work. Cleared
// wholesale when full: simple, bounded, and invisible in the results.
const CACHE_LIMIT = 50_000;
const cache = new Map<string, string>();

/**
 * Porter stem of a lowercase word. Only words made of ASCII letters a–z and longer than two
 * letters are stemmed; anything else (numbers, other scripts, mixed tokens) is returned as is.
 */
export function stem(word: string): string {
  if (word.length <= 2 || !ASCII_WORD.test(word)) return word;
  const cached = cache.get(word);
  if (cached !== undefined) return cached;
  const result = porterStem(word);
  if (cache.size >= CACHE_LIMIT) cache.clear();
  cache.set(word, result);
  return result;
}

function porterStem(word: string): string {
  let w = applyRules(word, STEP1A);
  w = step1b(w);
  w = step1c(w);
  w = applyRules(w, STEP2, m0);
  w = applyRules(w, STEP3, m0);
  w = applyRules(w, STEP4, m1);
  return step5(w);
}
