/**
 * BERT's tokenization of ASCII text written out as one pass over its characters: the ids
 * tokenizers.js gives (`Tokenizer.encode(text).ids`) for a tokenizer.json of BERT's kind (a
 * BertNormalizer lower-casing and cleaning, the BertPreTokenizer, a WordPiece model, and a
 * TemplateProcessing that wraps the text in special tokens, as the static models' builder writes
 * them), without its per-character regular expressions: the library tests each character of the
 * text against two Unicode-property patterns as it cleans it, then splits it with a third, several
 * times the cost of this pass.
 *
 * On printable ASCII the normalizer only lower-cases (no accents, no CJK), the pre-tokenizer splits
 * runs of letters and digits from each other character, and each word is looked up whole before
 * WordPiece's longest-prefix search. What it does not cover goes to the library: a stretch between
 * ASCII whitespace holding a character beyond ASCII or a control character the normalizer drops
 * (joining the words around it), and a whole text holding an added token's content (the library
 * splits those out first).
 */
import type { Tokenizer } from '@huggingface/tokenizers';

/** The parts of a tokenizer.json this reads to decide whether it applies. */
export interface TokenizerDefinition {
  added_tokens?: readonly { content?: unknown; normalized?: unknown }[];
  normalizer?: unknown;
  pre_tokenizer?: unknown;
  post_processor?: unknown;
  model?: unknown;
}

/** Char codes: 0 other printable (a token alone), 1 letter or digit, 2 whitespace, 3 not covered. */
const CLASS = new Uint8Array(128).fill(0);
for (let c = 0; c < 32; c++) CLASS[c] = 3;
CLASS[127] = 3;
CLASS[9] = CLASS[10] = CLASS[13] = CLASS[32] = 2;
for (let c = 48; c <= 57; c++) CLASS[c] = 1;
for (let c = 65; c <= 90; c++) CLASS[c] = 1;
for (let c = 97; c <= 122; c++) CLASS[c] = 1;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

/** [CLS] A [SEP] (or any special tokens around the one sequence): the tokens before and after it, or undefined for another template. */
function template(postProcessor: unknown): { before: string[]; after: string[] } | undefined {
  if (postProcessor === null || postProcessor === undefined) return { before: [], after: [] };
  if (!isRecord(postProcessor) || postProcessor.type !== 'TemplateProcessing' || !Array.isArray(postProcessor.single)) return undefined;
  const before: string[] = [];
  const after: string[] = [];
  let sequences = 0;
  for (const piece of postProcessor.single as unknown[]) {
    if (!isRecord(piece)) return undefined;
    if (isRecord(piece.Sequence) && piece.Sequence.id === 'A') sequences += 1;
    else if (isRecord(piece.SpecialToken) && typeof piece.SpecialToken.id === 'string') (sequences === 0 ? before : after).push(piece.SpecialToken.id);
    else return undefined;
  }
  return sequences === 1 ? { before, after } : undefined;
}

export class AsciiTokenizer {
  private constructor(
    private readonly tokenizer: Tokenizer,
    private readonly before: number[],
    private readonly after: number[],
    private readonly unknown: number,
    private readonly prefix: string,
    private readonly maxChars: number,
    private readonly addedTokens: readonly string[],
    private readonly wholeWords: boolean,
  ) {}

  /**
   * The fast path for this tokenizer, built from its definition (read before the definition's
   * vocabulary is dropped), or undefined when the definition is not exactly of the kind covered.
   * `wholeWords`: the vocabulary has no piece that continues a word (as the static models' builder
   * makes them: such an entry could never be produced, see staticModel/tokenizer.ts), so a word not
   * found whole is unknown at once: WordPiece's search, quadratic in the word's length, would find
   * nothing to continue its first piece with (~70 µs for a random 64-character hex word).
   */
  static for(tokenizer: Tokenizer, definition: TokenizerDefinition, { wholeWords = false } = {}): AsciiTokenizer | undefined {
    const { normalizer, pre_tokenizer: preTokenizer, model } = definition;
    if (!isRecord(normalizer) || normalizer.type !== 'BertNormalizer' || normalizer.clean_text !== true || normalizer.lowercase !== true) return undefined;
    // (accents and CJK characters are beyond ASCII: their settings change nothing here)
    if (!isRecord(preTokenizer) || preTokenizer.type !== 'BertPreTokenizer') return undefined;
    if (!isRecord(model) || model.type !== 'WordPiece' || typeof model.unk_token !== 'string' || model.fuse_unk === true) return undefined;
    const wrap = template(definition.post_processor);
    if (!wrap) return undefined;
    const prefix = model.continuing_subword_prefix;
    if (typeof prefix !== 'string') return undefined;
    // Added tokens are split out of the raw text first (the text is then left to the library); one
    // matched after normalizing, or one a word or piece could equal, would need the library's rules.
    const added = definition.added_tokens ?? [];
    const addedTokens = added.map((t) => t.content);
    const piece = (t: string) => /^[a-z0-9]+$/.test(t) || (t.startsWith(prefix) && /^[a-z0-9]+$/.test(t.slice(prefix.length))) || (t.length === 1 && CLASS[t.charCodeAt(0)] === 0);
    if (added.some((t) => t.normalized !== false) || !addedTokens.every((t): t is string => typeof t === 'string' && t.length > 0 && !piece(t))) return undefined;
    // Special and unknown tokens map through the added tokens first, as encode() maps them.
    const single = (token: string) => {
      const ids = tokenizer.encode(token, { add_special_tokens: false }).ids;
      return ids.length === 1 ? ids[0] : undefined;
    };
    const before = wrap.before.map(single);
    const after = wrap.after.map(single);
    const unknown = single(model.unk_token);
    if (unknown === undefined || before.includes(undefined) || after.includes(undefined)) return undefined;
    const maxChars = typeof model.max_input_chars_per_word === 'number' ? model.max_input_chars_per_word : 100;
    return new AsciiTokenizer(tokenizer, before as number[], after as number[], unknown, prefix, maxChars, addedTokens, wholeWords);
  }

  /**
   * The ids `tokenizer.encode(text).ids` gives, or undefined when the text holds an added token's
   * content. Each stretch between ASCII whitespace that this does not cover (a character beyond
   * ASCII, or a control character the normalizer drops) is tokenized by the library on its own:
   * no step of BERT's crosses that whitespace (the normalizer works a character at a time, and
   * lower-casing's final sigma and NFD's reordering stop at it; the pre-tokenizer splits there).
   */
  ids(text: string): number[] | undefined {
    for (const token of this.addedTokens) if (text.includes(token)) return undefined;
    const ids = this.before.slice();
    // The stretch since the last whitespace: where it starts, its ids' start, and whether the library takes it.
    let segment = 0;
    let segmentIds = ids.length;
    let foreign = false;
    // The run of letters and digits being read, and whether it needs lower-casing.
    let word = -1;
    let upper = false;
    for (let i = 0; i <= text.length; i++) {
      const c = i < text.length ? text.charCodeAt(i) : 32;
      const kind = c < 128 ? CLASS[c]! : 3;
      if (kind === 1) {
        if (word < 0) word = i;
        if (c <= 90 && c >= 65) upper = true;
        continue;
      }
      if (kind === 3 && !foreign) {
        foreign = true;
        ids.length = segmentIds;
      }
      if (word >= 0 && !foreign) {
        const w = text.slice(word, i);
        this.word(upper ? w.toLowerCase() : w, ids);
      }
      word = -1;
      upper = false;
      if (kind === 0) {
        if (!foreign) this.word(text[i]!, ids);
      } else if (kind === 2) {
        if (foreign) for (const id of this.tokenizer.encode(text.slice(segment, i), { add_special_tokens: false }).ids) ids.push(id);
        segment = i + 1;
        segmentIds = ids.length;
        foreign = false;
      }
    }
    for (const id of this.after) ids.push(id);
    return ids;
  }

  /** WordPiece: the word whole when the vocabulary has it, else its longest known prefix and so on, else the unknown token. */
  private word(word: string, ids: number[]): void {
    if (word.length > this.maxChars) {
      ids.push(this.unknown);
      return;
    }
    const whole = this.tokenizer.token_to_id(word);
    if (whole !== undefined || this.wholeWords) {
      ids.push(whole ?? this.unknown);
      return;
    }
    const pieces: number[] = [];
    for (let start = 0; start < word.length; ) {
      let end = word.length;
      let found: number | undefined;
      for (; end > start; end--) {
        found = this.tokenizer.token_to_id(start > 0 ? this.prefix + word.slice(start, end) : word.slice(start, end));
        if (found !== undefined) break;
      }
      if (found === undefined) {
        ids.push(this.unknown);
        return;
      }
      pieces.push(found);
      start = end;
    }
    for (const id of pieces) ids.push(id);
  }
}
