/**
 * Builds a static word-vector model as a directory transformers.js loads like any Hugging Face
 * model (`pipeline('feature-extraction', id)` with `env.localModelPath` = parent directory):
 *
 *   config.json            model_type "bert" (plain encoder class; feeds only declared inputs)
 *   tokenizer.json         WordPiece over the kept words + [PAD] [UNK] [CLS] [SEP]
 *   tokenizer_config.json  BertTokenizer
 *   onnx/model.onnx        last_hidden_state = Gather(weighted embedding table, input_ids)
 *   README.md              provenance and weighting
 *   memex-build.json       build stamp (builder version, source version, options, counts)
 *
 * Special tokens get zero rows, so mean pooling over the attention mask yields the mean of the
 * word vectors times n/(n+2), a scale factor that L2 normalisation removes.
 */
import fs from 'node:fs';
import path from 'node:path';

import { encodeGatherEmbeddingModel, writeProtoFile } from './onnx.js';
import type { StaticModelSource, StaticModelSourceInfo } from './source.js';
import { FIRST_WORD_ID, SPECIAL_TOKENS, tokenizerConfigJson, tokenizerJson, unreachableReason } from './tokenizer.js';
import type { UnreachableReason } from './tokenizer.js';
import { applyWeighting, DEFAULT_WEIGHTING } from './weighting.js';

/** Bump whenever the output of the builder changes for the same source and options. */
export const BUILDER_VERSION = '1';
export const STAMP_FILE = 'memex-build.json';
export const DEFAULT_STATIC_MODEL_NAME = 'memex-glove-100d';
/** Longest sequence (in tokens, [CLS]/[SEP] included) before truncation; a static model has no position limit. */
export const DEFAULT_MODEL_MAX_LENGTH = 8192;

export interface StaticModelBuildOptions {
  /** SIF smoothing constant a in a / (a + p(word)). Default 1e-4. */
  sifA?: number;
  /** Remove the frequency-weighted first principal component. Default true. */
  removePrincipalComponent?: boolean;
  /** tokenizer model_max_length. Default 8192. */
  modelMaxLength?: number;
  /** Model name recorded in config.json and the README. Default: the output directory's name (ensureStaticModel) or "memex-glove-100d". */
  modelName?: string;
  log?: (message: string) => void;
}

export interface ResolvedBuildOptions {
  sifA: number;
  removePrincipalComponent: boolean;
  modelMaxLength: number;
}

export interface BuildStamp {
  builderVersion: string;
  source: StaticModelSourceInfo;
  options: ResolvedBuildOptions;
  modelName: string;
  builtAt: string;
  dimension: number;
  vocabulary: {
    sourceWords: number;
    keptWords: number;
    specialTokens: number;
    dropped: Partial<Record<UnreachableReason | 'duplicate', number>>;
  };
  principalComponent: { removed: boolean; iterations: number; converged: boolean };
  sifWeightRange: [number, number];
  files: Record<string, number>;
  buildMs: number;
}

export function resolveBuildOptions(options: StaticModelBuildOptions = {}): ResolvedBuildOptions {
  return {
    sifA: options.sifA ?? DEFAULT_WEIGHTING.sifA,
    removePrincipalComponent: options.removePrincipalComponent ?? DEFAULT_WEIGHTING.removePrincipalComponent,
    modelMaxLength: options.modelMaxLength ?? DEFAULT_MODEL_MAX_LENGTH,
  };
}

export interface VocabularySelection {
  /** Kept words in source (frequency) order. */
  words: string[];
  /** 1-based source rank of each kept word. */
  ranks: Int32Array;
  dropped: Partial<Record<UnreachableReason | 'duplicate', number>>;
}

/** Keeps the words the tokenizer can produce as single tokens, in source order. */
export function selectVocabulary(sourceWords: readonly string[]): VocabularySelection {
  const words: string[] = [];
  const ranks: number[] = [];
  const dropped: VocabularySelection['dropped'] = {};
  const seen = new Set<string>(SPECIAL_TOKENS);
  sourceWords.forEach((word, index) => {
    const reason = unreachableReason(word);
    if (reason) {
      dropped[reason] = (dropped[reason] ?? 0) + 1;
    } else if (seen.has(word)) {
      dropped.duplicate = (dropped.duplicate ?? 0) + 1;
    } else {
      seen.add(word);
      words.push(word);
      ranks.push(index + 1);
    }
  });
  return { words, ranks: Int32Array.from(ranks), dropped };
}

/**
 * Writes the model files into `outDir` (created if missing; existing files are overwritten).
 * Prefer `ensureStaticModel`, which builds into a temporary directory and renames it.
 */
export function buildStaticModel(source: StaticModelSource, outDir: string, options: StaticModelBuildOptions = {}): BuildStamp {
  const started = Date.now();
  const log = options.log ?? (() => {});
  const resolved = resolveBuildOptions(options);
  const modelName = options.modelName ?? DEFAULT_STATIC_MODEL_NAME;
  const { dimension } = source;
  if (source.vectors.length !== source.words.length * dimension) {
    throw new Error(`source ${source.name}: ${source.vectors.length} values for ${source.words.length} words x ${dimension}`);
  }

  const vocab = selectVocabulary(source.words);
  log(`vocabulary: ${vocab.words.length} of ${source.words.length} words kept (dropped: ${JSON.stringify(vocab.dropped)})`);

  // Table rows: special tokens (zero) then kept words in frequency order.
  const rows = FIRST_WORD_ID + vocab.words.length;
  const table = new Float32Array(rows * dimension);
  for (let i = 0; i < vocab.words.length; i++) {
    const from = (vocab.ranks[i]! - 1) * dimension;
    table.set(source.vectors.subarray(from, from + dimension), (FIRST_WORD_ID + i) * dimension);
  }
  const wordRows = table.subarray(FIRST_WORD_ID * dimension);
  const weighting = applyWeighting(wordRows, dimension, vocab.ranks, source.words.length, {
    sifA: resolved.sifA,
    removePrincipalComponent: resolved.removePrincipalComponent,
  });
  log(
    `weighting: SIF a=${resolved.sifA} (weights ${weighting.minWeight.toExponential(3)}..${weighting.maxWeight.toFixed(4)}), ` +
      (weighting.principalComponent
        ? `first principal component removed (${weighting.principalComponentIterations} power iterations${weighting.principalComponentConverged ? '' : ', NOT converged'})`
        : 'no principal component removed'),
  );

  fs.mkdirSync(path.join(outDir, 'onnx'), { recursive: true });
  const files: Record<string, number> = {};
  const writeText = (name: string, text: string) => {
    fs.writeFileSync(path.join(outDir, name), text);
    files[name] = Buffer.byteLength(text);
  };

  const provenance = {
    builder: '@memex/indexer scripts/build-static-model.ts',
    builderVersion: BUILDER_VERSION,
    source: { name: source.name, version: source.version },
    weighting: {
      sif: { a: resolved.sifA, probability: 'zipf(rank) = (1/rank) / H_N', sourceWords: source.words.length },
      removePrincipalComponent: resolved.removePrincipalComponent,
    },
    pooling: 'mean over attention_mask, then L2 normalisation',
  };
  const config = {
    architectures: ['BertModel'],
    model_type: 'bert',
    hidden_size: dimension,
    vocab_size: rows,
    num_hidden_layers: 0,
    num_attention_heads: 1,
    intermediate_size: 0,
    max_position_embeddings: resolved.modelMaxLength,
    type_vocab_size: 1,
    pad_token_id: 0,
    torch_dtype: 'float32',
    'transformers.js_config': { dtype: 'fp32' },
    memex: { kind: 'static-word-vectors', name: modelName, ...provenance },
  };
  writeText('config.json', `${JSON.stringify(config, null, 2)}\n`);
  writeText('tokenizer.json', tokenizerJson({ words: vocab.words, modelMaxLength: resolved.modelMaxLength }));
  writeText('tokenizer_config.json', tokenizerConfigJson({ modelMaxLength: resolved.modelMaxLength }));

  const onnx = encodeGatherEmbeddingModel({
    table,
    rows,
    dimension,
    producerVersion: BUILDER_VERSION,
    docString: `${modelName}: static word vectors from ${source.name}@${source.version}, SIF-weighted${resolved.removePrincipalComponent ? ', common component removed' : ''}.`,
    metadata: { source: `${source.name}@${source.version}`, sif_a: String(resolved.sifA), remove_pc: String(resolved.removePrincipalComponent) },
  });
  files['onnx/model.onnx'] = writeProtoFile(path.join(outDir, 'onnx', 'model.onnx'), onnx);

  writeText('README.md', readme(modelName, source, vocab, rows, dimension, resolved));

  const stamp: BuildStamp = {
    builderVersion: BUILDER_VERSION,
    source: { name: source.name, version: source.version },
    options: resolved,
    modelName,
    builtAt: new Date().toISOString(),
    dimension,
    vocabulary: { sourceWords: source.words.length, keptWords: vocab.words.length, specialTokens: FIRST_WORD_ID, dropped: vocab.dropped },
    principalComponent: {
      removed: weighting.principalComponent !== null,
      iterations: weighting.principalComponentIterations,
      converged: weighting.principalComponentConverged,
    },
    sifWeightRange: [weighting.minWeight, weighting.maxWeight],
    files,
    buildMs: Date.now() - started,
  };
  fs.writeFileSync(path.join(outDir, STAMP_FILE), `${JSON.stringify(stamp, null, 2)}\n`);
  return stamp;
}

function readme(
  modelName: string,
  source: StaticModelSource,
  vocab: VocabularySelection,
  rows: number,
  dimension: number,
  options: ResolvedBuildOptions,
): string {
  const reasons: Record<string, string> = {
    splits: 'split into several tokens (they contain punctuation or whitespace, e.g. hyphenated words)',
    'normalizes-differently': 'changed by the normalizer (upper case or accents)',
    'too-long': `longer than the WordPiece limit`,
    empty: 'empty',
    duplicate: 'duplicates',
  };
  const dropped = Object.entries(vocab.dropped)
    .map(([reason, count]) => `${count} ${reasons[reason] ?? reason}`)
    .join('; ');
  return `# ${modelName}

Static word-vector sentence embedder for Memex, generated by \`services/indexer/scripts/build-static-model.ts\`
(builder version ${BUILDER_VERSION}). It is laid out like a Hugging Face model repository so that
transformers.js loads it with \`pipeline('feature-extraction', '${modelName}')\` from a local model directory.

## Provenance and licences

${source.provenance}

GloVe project page: https://nlp.stanford.edu/projects/glove/

## What the model computes

\`onnx/model.onnx\` is a single ONNX \`Gather\`: \`last_hidden_state[b, s, :] = table[input_ids[b, s], :]\`
(float32, ${rows} rows x ${dimension}). \`attention_mask\` is a declared input for compatibility and is not used
by the graph; mean pooling over the mask happens in the caller. Rows 0-3 are \`[PAD]\`, \`[UNK]\`, \`[CLS]\`,
\`[SEP]\` and are all zero, so unknown words and the \`[CLS]\`/\`[SEP]\` added by the tokenizer contribute nothing
but a scale factor that L2 normalisation removes. A text with no known word has a zero mean vector.

The word rows are the source vectors with two corrections baked in:

1. **SIF weighting** (Arora, Liang & Ma, 2017): each vector is multiplied by \`a / (a + p(w))\` with
   \`a = ${options.sifA}\`, where \`p(w)\` is estimated from the word's frequency rank \`r\` in the source list by
   Zipf's law, \`p(r) = (1/r) / H\`, \`H = sum_{k=1..${source.words.length}} 1/k\`.
2. **Common-component removal**: ${
    options.removePrincipalComponent
      ? 'the first principal component `u` of the weighted vectors (each word weighted by `p(w)`, uncentred, found by power iteration) is projected out of every vector: `v - (v·u)u`. The projection is linear, so removing it per word equals removing it from the sentence mean.'
      : 'disabled for this build.'
  }

## Vocabulary

${vocab.words.length} of the ${source.words.length} source words are kept, in frequency order. Words the BERT
normalizer and pre-tokenizer can never produce as a single token were dropped: ${dropped || 'none'}.

The tokenizer is WordPiece without sub-word pieces: a word is either in the vocabulary or becomes \`[UNK]\`.
Text is lower-cased, accents are stripped, and punctuation characters are separate tokens.
Sequences longer than ${options.modelMaxLength} tokens are truncated.
`;
}

export interface EnsureStaticModelOptions extends StaticModelBuildOptions {
  /** Rebuild even if the stamp matches. */
  force?: boolean;
}

export interface EnsureResult {
  status: 'up-to-date' | 'built';
  outDir: string;
  stamp: BuildStamp;
}

/** The stamp in `dir`, or null if there is none or it is unreadable. */
export function readStamp(dir: string): BuildStamp | null {
  try {
    return JSON.parse(fs.readFileSync(path.join(dir, STAMP_FILE), 'utf8')) as BuildStamp;
  } catch {
    return null;
  }
}

const REQUIRED_FILES = ['config.json', 'tokenizer.json', 'tokenizer_config.json', 'onnx/model.onnx'];

/** True when `dir` holds a complete build from this builder version, the same source version and the same options. */
export function isUpToDate(dir: string, source: StaticModelSourceInfo, options: StaticModelBuildOptions = {}): BuildStamp | null {
  const stamp = readStamp(dir);
  if (!stamp) return null;
  const wanted = resolveBuildOptions(options);
  const same =
    stamp.builderVersion === BUILDER_VERSION &&
    stamp.source?.name === source.name &&
    stamp.source?.version === source.version &&
    stamp.options?.sifA === wanted.sifA &&
    stamp.options?.removePrincipalComponent === wanted.removePrincipalComponent &&
    stamp.options?.modelMaxLength === wanted.modelMaxLength &&
    REQUIRED_FILES.every((f) => fs.existsSync(path.join(dir, f)));
  return same ? stamp : null;
}

/**
 * Builds the model into `outDir` unless an up-to-date build is already there. The build goes to
 * a temporary sibling directory that replaces `outDir` by rename only once it is complete, so a
 * crash never leaves a half-written model behind. `loadSource` is only called when building.
 */
export function ensureStaticModel(
  outDir: string,
  sourceInfo: StaticModelSourceInfo,
  loadSource: () => StaticModelSource,
  options: EnsureStaticModelOptions = {},
): EnsureResult {
  const target = path.resolve(outDir);
  if (!options.force) {
    const stamp = isUpToDate(target, sourceInfo, options);
    if (stamp) return { status: 'up-to-date', outDir: target, stamp };
  }
  const parent = path.dirname(target);
  const base = path.basename(target);
  fs.mkdirSync(parent, { recursive: true });
  const unique = `${process.pid}-${Date.now().toString(36)}`;
  const tmp = path.join(parent, `.${base}.tmp-${unique}`);
  const old = path.join(parent, `.${base}.old-${unique}`);
  try {
    const stamp = buildStaticModel(loadSource(), tmp, { ...options, modelName: options.modelName ?? base });
    let movedOld = false;
    if (fs.existsSync(target)) {
      fs.renameSync(target, old);
      movedOld = true;
    }
    try {
      fs.renameSync(tmp, target);
    } catch (error) {
      if (movedOld && !fs.existsSync(target)) fs.renameSync(old, target);
      // A concurrent build may have won the race with an equivalent model.
      const theirs = isUpToDate(target, sourceInfo, options);
      if (theirs) return { status: 'up-to-date', outDir: target, stamp: theirs };
      throw error;
    }
    if (movedOld) fs.rmSync(old, { recursive: true, force: true });
    return { status: 'built', outDir: target, stamp };
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}
