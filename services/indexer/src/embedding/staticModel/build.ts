/**
 * Builds a static word-vector model as a directory transformers.js loads like any Hugging Face
 * model (`pipeline('feature-extraction', id)` with `env.localModelPath` = parent directory):
 *
 *   config.json            model_type "bert" (plain encoder class; feeds only declared inputs)
 *   tokenizer.json         WordPiece over the kept words + [PAD] [UNK] [CLS] [SEP]
 *   tokenizer_config.json  BertTokenizer
 *   onnx/model.onnx        last_hidden_state = float32(Gather(weighted embedding table, input_ids)),
 *                          the table stored as float16 scaled by a power of two (or as float32)
 *   README.md              provenance and weighting
 *   memex-build.json       build stamp (builder version, source version, options, counts)
 *
 * Special tokens get zero rows, so mean pooling over the attention mask yields the mean of the
 * word vectors times n/(n+2), a scale factor that L2 normalisation removes. For the same reason
 * the float16 table may be scaled by any power of two (see float16.ts).
 */
import fs from 'node:fs';
import path from 'node:path';

import { toFloat16Table } from './float16Table.js';
import { encodeGatherEmbeddingModel, writeProtoFile } from './onnx.js';
import type { EmbeddingTable } from './onnx.js';
import type { StaticModelSource, StaticModelSourceInfo } from './source.js';
import { FIRST_WORD_ID, SPECIAL_TOKENS, tokenizerConfigJson, tokenizerJson, unreachableReason } from './tokenizer.js';
import type { UnreachableReason } from './tokenizer.js';
import { applyWeighting, DEFAULT_WEIGHTING } from './weighting.js';

/** Bump whenever the output of the builder changes for the same source and options. */
export const BUILDER_VERSION = '2';
export const STAMP_FILE = 'memex-build.json';
export const DEFAULT_STATIC_MODEL_NAME = 'memex-glove-100d';
/** Longest sequence (in tokens, [CLS]/[SEP] included) before truncation; a static model has no position limit. */
const DEFAULT_MODEL_MAX_LENGTH = 8192;

interface StaticModelBuildOptions {
  /** SIF smoothing constant a in a / (a + p(word)). Default 1e-4. */
  sifA?: number;
  /** Remove the frequency-weighted first principal component. Default true. */
  removePrincipalComponent?: boolean;
  /** tokenizer model_max_length. Default 8192. */
  modelMaxLength?: number;
  /** Storage type of the embedding table in onnx/model.onnx; the model outputs float32 either way. Default float16. */
  dtype?: TableDtype;
  /** Model name recorded in config.json and the README. Default: the output directory's name (ensureStaticModel) or "memex-glove-100d". */
  modelName?: string;
  log?: (message: string) => void;
}

type TableDtype = 'float16' | 'float32';
const DEFAULT_TABLE_DTYPE: TableDtype = 'float16';

interface ResolvedBuildOptions {
  sifA: number;
  removePrincipalComponent: boolean;
  modelMaxLength: number;
  dtype: TableDtype;
}

interface BuildStamp {
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
  /**
   * How onnx/model.onnx stores the table: `scale` is the power of two the weighted vectors were
   * multiplied by (1 for float32), `maxAbs` their largest magnitude before scaling; `subnormal`
   * and `underflowed` count non-zero values that became float16 subnormals or zero.
   */
  table: { dtype: TableDtype; scale: number; maxAbs: number; subnormal: number; underflowed: number };
  files: Record<string, number>;
  buildMs: number;
}

function resolveBuildOptions(options: StaticModelBuildOptions = {}): ResolvedBuildOptions {
  return {
    sifA: options.sifA ?? DEFAULT_WEIGHTING.sifA,
    removePrincipalComponent: options.removePrincipalComponent ?? DEFAULT_WEIGHTING.removePrincipalComponent,
    modelMaxLength: options.modelMaxLength ?? DEFAULT_MODEL_MAX_LENGTH,
    dtype: options.dtype ?? DEFAULT_TABLE_DTYPE,
  };
}

interface VocabularySelection {
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

  let onnxTable: EmbeddingTable;
  let tableInfo: BuildStamp['table'];
  if (resolved.dtype === 'float16') {
    const half = toFloat16Table(table);
    onnxTable = { dtype: 'float16', bits: half.bits };
    tableInfo = { dtype: 'float16', scale: half.scale, maxAbs: half.maxAbs, subnormal: half.subnormal, underflowed: half.underflowed };
    log(
      `table: float16, scaled by 2^${Math.log2(half.scale)} (largest magnitude ${half.maxAbs.toPrecision(4)} -> ${(half.maxAbs * half.scale).toPrecision(5)}); ` +
        `${half.subnormal} values subnormal, ${half.underflowed} rounded to zero`,
    );
  } else {
    let maxAbs = 0;
    for (const v of table) maxAbs = Math.max(maxAbs, Math.abs(v));
    onnxTable = { dtype: 'float32', values: table };
    tableInfo = { dtype: 'float32', scale: 1, maxAbs, subnormal: 0, underflowed: 0 };
    log('table: float32');
  }

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
    table: { dtype: tableInfo.dtype, scale: tableInfo.scale },
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
    table: onnxTable,
    rows,
    dimension,
    producerVersion: BUILDER_VERSION,
    docString: `${modelName}: static word vectors from ${source.name}@${source.version}, SIF-weighted${resolved.removePrincipalComponent ? ', common component removed' : ''}.`,
    metadata: {
      source: `${source.name}@${source.version}`,
      sif_a: String(resolved.sifA),
      remove_pc: String(resolved.removePrincipalComponent),
      table_dtype: tableInfo.dtype,
      table_scale: String(tableInfo.scale),
    },
  });
  files['onnx/model.onnx'] = writeProtoFile(path.join(outDir, 'onnx', 'model.onnx'), onnx);

  writeText('README.md', readme(modelName, source, vocab, rows, dimension, resolved, tableInfo));

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
    table: tableInfo,
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
  table: BuildStamp['table'],
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

${
    table.dtype === 'float16'
      ? `\`onnx/model.onnx\` is an ONNX \`Gather\` followed by a \`Cast\` to float32:
\`last_hidden_state[b, s, :] = float32(table[input_ids[b, s], :])\`. The table (${rows} rows x ${dimension}) is stored
as float16 (round to nearest, ties to even) after multiplying the weighted vectors by 2^${Math.log2(table.scale)}, so that its largest
magnitude (${table.maxAbs.toPrecision(4)} before scaling) sits well inside float16's normal range and small values keep
their relative precision (${table.subnormal} values became subnormal, ${table.underflowed} rounded to zero). The scale
is uniform, so the L2-normalised mean the caller computes does not depend on it.`
      : `\`onnx/model.onnx\` is a single ONNX \`Gather\`: \`last_hidden_state[b, s, :] = table[input_ids[b, s], :]\`
(float32, ${rows} rows x ${dimension}).`
  }
\`attention_mask\` is a declared input for compatibility and is not used
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

interface EnsureStaticModelOptions extends StaticModelBuildOptions {
  /** Rebuild even if the stamp matches. */
  force?: boolean;
}

interface EnsureResult {
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
function isUpToDate(dir: string, source: StaticModelSourceInfo, options: StaticModelBuildOptions = {}): BuildStamp | null {
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
    stamp.options?.dtype === wanted.dtype &&
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
