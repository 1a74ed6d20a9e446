import { describe, it, expect } from 'vitest';
import { stem } from './porter.js';

// Pairs from the examples in Porter's paper, final stems after all steps.
const PAPER_EXAMPLES: Array<[string, string]> = [
  ['caresses', 'caress'], ['ponies', 'poni'], ['ties', 'ti'], ['caress', 'caress'], ['cats', 'cat'],
  ['feed', 'feed'], ['agreed', 'agre'], ['plastered', 'plaster'], ['bled', 'bled'],
  ['motoring', 'motor'], ['sing', 'sing'], ['hopping', 'hop'], ['tanned', 'tan'], ['fizzed', 'fizz'],
  ['failing', 'fail'], ['filing', 'file'], ['hissing', 'hiss'], ['falling', 'fall'],
  ['happy', 'happi'], ['sky', 'sky'], ['relational', 'relat'], ['conditional', 'condit'],
  ['rational', 'ration'], ['valenci', 'valenc'], ['hesitanci', 'hesit'], ['digitizer', 'digit'],
  ['conformabli', 'conform'], ['radicalli', 'radic'], ['differentli', 'differ'], ['vileli', 'vile'],
  ['analogousli', 'analog'], ['vietnamization', 'vietnam'], ['predication', 'predic'],
  ['operator', 'oper'], ['feudalism', 'feudal'], ['decisiveness', 'decis'],
  ['hopefulness', 'hope'], ['callousness', 'callous'], ['formaliti', 'formal'],
  ['sensitiviti', 'sensit'], ['sensibiliti', 'sensibl'], ['triplicate', 'triplic'],
  ['formative', 'form'], ['formalize', 'formal'], ['electriciti', 'electr'],
  ['electrical', 'electr'], ['hopeful', 'hope'], ['goodness', 'good'], ['revival', 'reviv'],
  ['allowance', 'allow'], ['inference', 'infer'], ['airliner', 'airlin'],
  ['gyroscopic', 'gyroscop'], ['adjustable', 'adjust'], ['defensible', 'defens'],
  ['irritant', 'irrit'], ['replacement', 'replac'], ['adjustment', 'adjust'],
  ['dependent', 'depend'], ['adoption', 'adopt'], ['homologou', 'homolog'],
  ['communism', 'commun'], ['activate', 'activ'], ['angulariti', 'angular'],
  ['homologous', 'homolog'], ['effective', 'effect'], ['bowdlerize', 'bowdler'],
  ['probate', 'probat'], ['rate', 'rate'], ['cease', 'ceas'], ['controll', 'control'],
  ['roll', 'roll'], ['generalizations', 'gener'], ['oscillators', 'oscil'],
];

describe('stem', () => {
  it.each(PAPER_EXAMPLES)('%s → %s', (word, expected) => {
    expect(stem(word)).toBe(expected);
  });

  it('maps inflections of one word to one stem', () => {
    const forms = ['connect', 'connected', 'connecting', 'connection', 'connections'];
    expect(new Set(forms.map(stem))).toEqual(new Set(['connect']));
    expect(stem('memos')).toBe(stem('memo'));
    expect(stem('databases')).toBe(stem('database'));
    expect(stem('embeddings')).toBe(stem('embedding'));
  });

  it('applies the published step-2 corrections (bli → ble, logi → log)', () => {
    expect(stem('possibly')).toBe(stem('possible'));
    expect(stem('archaeologi')).toBe('archaeolog');
  });

  it('treats y as a vowel after a consonant and a consonant otherwise', () => {
    expect(stem('syzygy')).toBe('syzygi');
    expect(stem('toy')).toBe('toi'); // "to" contains a vowel, so step 1c applies
    expect(stem('enjoying')).toBe('enjoi');
  });

  it('leaves short words, numbers and non-ASCII tokens alone', () => {
    for (const w of ['as', 'is', 'a', '', '2024', '3.14', 'v2', 'café', 'naïve', '東', 'straße']) {
      expect(stem(w)).toBe(w);
    }
  });

  it('keeps words without a strippable suffix', () => {
    for (const w of ['search', 'index', 'memo', 'vector', 'chunk', 'token']) {
      expect(stem(w)).toBe(w);
    }
  });
});
