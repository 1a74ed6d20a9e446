import { describe, it, expect } from 'vitest';
import { sentenceInfos, splitParagraphs, splitSentences } from './sentences.js';

const texts = (s: string): string[] => splitSentences(s).map((x) => x.text);

describe('splitSentences', () => {
  it('splits on . ! ? followed by whitespace and a capital, digit or quote', () => {
    expect(texts('One fish. Two fish! Red fish? Blue fish.')).toEqual([
      'One fish.',
      'Two fish!',
      'Red fish?',
      'Blue fish.',
    ]);
    expect(texts('It shipped in 2019. 2020 was quieter.')).toEqual([
      'It shipped in 2019.',
      '2020 was quieter.',
    ]);
    expect(texts('He left. "Why?" she asked.')).toEqual(['He left.', '"Why?" she asked.']);
  });

  it('does not split before a lowercase word', () => {
    expect(texts('Really? yes, really.')).toEqual(['Really? yes, really.']);
  });

  it('keeps closing quotes and brackets with the sentence they end', () => {
    expect(texts('He said "stop." Then he left. (It was late.) Nobody cared.')).toEqual([
      'He said "stop."',
      'Then he left.',
      '(It was late.)',
      'Nobody cared.',
    ]);
  });

  it('does not split decimals, versions, URLs or e-mail addresses', () => {
    const s = 'Pi is 3.14 and v1.2.3 is out. See https://example.com/a.b?x=1 or mail ann.lee@example.org today.';
    expect(texts(s)).toEqual([
      'Pi is 3.14 and v1.2.3 is out.',
      'See https://example.com/a.b?x=1 or mail ann.lee@example.org today.',
    ]);
  });

  it('splits after a URL or address that ends a sentence', () => {
    expect(texts('Docs live at example.com. Read them.')).toEqual([
      'Docs live at example.com.',
      'Read them.',
    ]);
  });

  it('does not split after common abbreviations', () => {
    const cases = [
      'Dr. Watson met Mr. Holmes.',
      'Use a fast store, e.g. Redis, for this.',
      'Use one store, i.e. The primary.',
      'Cats vs. Dogs is a classic.',
      'Bring pens, paper, etc. Also snacks.',
      'See Fig. 3 for details.',
      'Ticket No. 42 was closed.',
      'It ran at 5 p.m. Today too.',
      'Made in the U.S.A. Sold everywhere.',
    ];
    for (const c of cases) expect(texts(c)).toEqual([c]);
  });

  it('splits after "no." when it is a word rather than an abbreviation', () => {
    expect(texts('I said no. Then I left.')).toEqual(['I said no.', 'Then I left.']);
  });

  it('does not split initials', () => {
    const s = 'The Hobbit is by J. R. R. Tolkien. It was published in 1937.';
    expect(texts(s)).toEqual(['The Hobbit is by J. R. R. Tolkien.', 'It was published in 1937.']);
  });

  it('keeps mid-sentence ellipses and splits after a final one', () => {
    expect(texts('I was thinking... maybe not.')).toEqual(['I was thinking... maybe not.']);
    expect(texts('Wait for it… then go. Done… Next.')).toEqual([
      'Wait for it… then go.',
      'Done…',
      'Next.',
    ]);
  });

  it('splits CJK text on 。！？ without needing spaces', () => {
    expect(texts('今日は晴れです。明日は雨？そうですね！')).toEqual([
      '今日は晴れです。',
      '明日は雨？',
      'そうですね！',
    ]);
    expect(texts('他说：「好。」然后走了。')).toEqual(['他说：「好。」', '然后走了。']);
  });

  it('always ends a sentence at a paragraph break', () => {
    expect(texts('First paragraph without a period\n\nsecond one, lowercase')).toEqual([
      'First paragraph without a period',
      'second one, lowercase',
    ]);
  });

  it('joins lines of a wrapped paragraph', () => {
    expect(texts('This sentence is wrapped\nacross two lines. And this\nis the next one.')).toEqual([
      'This sentence is wrapped\nacross two lines.',
      'And this\nis the next one.',
    ]);
  });

  it('breaks lines around list items and headings', () => {
    const s = '# Shopping\nWe need:\n- milk\n- eggs and\n  more eggs\n1. first step\n2) second step\nDone here';
    expect(texts(s)).toEqual([
      '# Shopping',
      'We need:',
      '- milk',
      '- eggs and\n  more eggs',
      '1. first step',
      '2) second step',
      'Done here',
    ]);
  });

  it('does not treat a numbered-list marker as a sentence', () => {
    expect(texts('1. Install it. Then run it.\n2. Profit.')).toEqual([
      '1. Install it.',
      'Then run it.',
      '2. Profit.',
    ]);
  });

  it('returns offsets into the original text and trimmed text', () => {
    const s = '  \n Hello there.   How are you?\n\n\n  Fine!  \n';
    const spans = splitSentences(s);
    expect(spans.map((x) => x.text)).toEqual(['Hello there.', 'How are you?', 'Fine!']);
    for (const span of spans) {
      expect(s.slice(span.start, span.end)).toBe(span.text);
      expect(span.text).toBe(span.text.trim());
    }
  });

  it('handles CRLF line endings and empty input', () => {
    expect(texts('One.\r\n\r\nTwo and\r\nthree. Four')).toEqual(['One.', 'Two and\r\nthree.', 'Four']);
    expect(splitSentences('')).toEqual([]);
    expect(splitSentences(' \n\t \n ')).toEqual([]);
  });
});

describe('splitParagraphs', () => {
  it('splits on blank lines, including lines holding only whitespace', () => {
    const s = 'a b\nc\n\nd\n \t \n\n e \n';
    const paras = splitParagraphs(s);
    expect(paras.map((p) => p.text)).toEqual(['a b\nc', 'd', 'e']);
    for (const p of paras) expect(s.slice(p.start, p.end)).toBe(p.text);
  });

  it('returns nothing for blank text and one span for a single paragraph', () => {
    expect(splitParagraphs('\n\n  \n')).toEqual([]);
    expect(splitParagraphs(' one line ')).toEqual([{ text: 'one line', start: 1, end: 9 }]);
  });
});

describe('sentenceInfos', () => {
  it('marks the first sentence of each paragraph and section', () => {
    const s = 'Intro one. Intro two.\n## Part\nBody text.\n\nNext para.';
    expect(sentenceInfos(s).map((x) => [x.text, x.blockStart])).toEqual([
      ['Intro one.', true],
      ['Intro two.', false],
      ['## Part', true],
      ['Body text.', true],
      ['Next para.', true],
    ]);
  });
});
