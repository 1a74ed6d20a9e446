/**
 * Sentence embeddings through transformers.js (`@huggingface/transformers`) on onnxruntime-node,
 * except for static models (built by build:model), which StaticEmbedder runs without them.
 *
 * Works with any feature-extraction model laid out like a Hugging Face repository (config.json,
 * tokenizer.json, tokenizer_config.json, onnx/model.onnx): the built-in default
 * "memex-glove-100d" (built offline by `pnpm --filter @memex/indexer build:model`), a Hub id
 * such as "Xenova/all-MiniLM-L6-v2", or a local directory.
 *
 * Vectors are the attention-mask mean of `last_hidden_state`, L2-normalised. A text whose mean is
 * the zero vector (for the static model: no known word, e.g. "" or "xyzzy") yields an all-zero
 * Float32Array — finite, never NaN; its cosine similarity with anything is 0.
 *
 * Pooling is done here rather than with the pipeline's `pooling: 'mean', normalize: true`:
 * the library's normaliser divides by zero for such texts, and its pooling and normalisation
 * loops cost more than tokenisation plus inference for a static model.
 */
import fs from 'node:fs';
import path from 'node:path';

// transformers.js (and onnxruntime under it) is imported only when a model needs it: the static
// model runs without it (staticEmbedder.ts), and importing it alone costs ~170 MB of memory.
import type { FeatureExtractionPipeline, Tensor, env } from '@huggingface/transformers';
import type { Embedder } from './port';
import { normalizedSum } from './pooling';
import { StaticEmbedder } from './staticEmbedder';

const transformers = () => import('@huggingface/transformers');

export interface EmbedderOptions {
  /** Hugging Face id, or a local model directory (absolute, or relative to modelsDir). */
  model: string;
  /** MEMEX_MODELS_DIR: where local models live; Hub downloads are cached in `<modelsDir>/.cache`. */
  modelsDir: string;
  /** MEMEX_ALLOW_REMOTE_MODELS; false = never touch the network. */
  allowRemote: boolean;
  /** Texts per inference call. Default 64. */
  batchSize?: number;
  /** Prepended to query texts (e.g. a bge-style instruction). Default ''. */
  queryPrefix?: string;
  /** Prepended to document texts. Default ''. */
  documentPrefix?: string;
}

export const DEFAULT_EMBEDDING_MODEL = 'memex-glove-100d';
const DEFAULT_EMBEDDING_BATCH_SIZE = 64;
/** Hub downloads (MEMEX_ALLOW_REMOTE_MODELS=true) are cached here, under modelsDir. */
const REMOTE_CACHE_SUBDIR = '.cache';
const BUILD_HINT = 'pnpm --filter @memex/indexer build:model';
/** Files transformers.js reads for a text feature-extraction model in fp32. */
const MODEL_FILES = ['config.json', 'tokenizer.json', 'tokenizer_config.json', 'onnx/model.onnx'];

type LoadTarget =
  | { kind: 'local'; dir: string }
  | { kind: 'hub'; id: string; localDir: string; cacheRoot: string; cacheDir: string };

// Mirrors transformers.js's check for something it will treat as a Hub id (vs. a raw path).
const HUB_ID = /^(\w[\w.-]*\w\/|\w\/)?(\w[\w.-]{0,94}\w|\w)$/;
function looksLikeHubId(id: string): boolean {
  return HUB_ID.test(id) && !id.includes('..') && !id.includes('--') && !id.endsWith('.git') && !id.endsWith('.ipynb');
}

function missingFiles(dir: string): string[] {
  return MODEL_FILES.filter((file) => !fs.existsSync(path.join(dir, file)));
}

function isExplicitPath(model: string): boolean {
  return path.isAbsolute(model) || /^\.\.?([/\\]|$)/.test(model);
}

function resolveTarget(options: EmbedderOptions): LoadTarget {
  const modelsDir = path.resolve(options.modelsDir);
  const { model } = options;
  if (isExplicitPath(model)) return { kind: 'local', dir: path.resolve(modelsDir, model) };
  const localDir = path.resolve(modelsDir, model);
  if (fs.existsSync(path.join(localDir, 'config.json'))) return { kind: 'local', dir: localDir };
  if (looksLikeHubId(model)) {
    const cacheRoot = path.join(modelsDir, REMOTE_CACHE_SUBDIR);
    return { kind: 'hub', id: model, localDir, cacheRoot, cacheDir: path.join(cacheRoot, model) };
  }
  return { kind: 'local', dir: localDir };
}

/** Thrown by loadEmbedder when the model's files are not where they were looked for. */
export class EmbeddingModelNotFoundError extends Error {
  override name = 'EmbeddingModelNotFoundError';
}

function notFoundError(options: EmbedderOptions, searched: string[], missing: string[]): Error {
  const modelsDir = path.resolve(options.modelsDir);
  const files = MODEL_FILES.join(', ');
  let how: string;
  if (options.model === DEFAULT_EMBEDDING_MODEL) {
    how =
      `Build it with "${BUILD_HINT}" (writes ${path.join('<repo>', 'models', DEFAULT_EMBEDDING_MODEL)}; MEMEX_MODELS_DIR must point at that models directory), ` +
      'or configure a Hugging Face model id and set MEMEX_ALLOW_REMOTE_MODELS=true';
  } else if (looksLikeHubId(options.model) && !isExplicitPath(options.model)) {
    how =
      `Set MEMEX_ALLOW_REMOTE_MODELS=true to download it from the Hugging Face Hub (cached in ${path.join(modelsDir, REMOTE_CACHE_SUBDIR)}), ` +
      `copy an ONNX export (${files}) to ${path.join(modelsDir, options.model)}, or use the built-in "${DEFAULT_EMBEDDING_MODEL}" (${BUILD_HINT})`;
  } else {
    how = `Put an ONNX export (${files}) in that directory, or use the built-in "${DEFAULT_EMBEDDING_MODEL}" (${BUILD_HINT})`;
  }
  return new EmbeddingModelNotFoundError(
    `Embedding model "${options.model}" not found: searched ${searched.join(' and ')}` +
      `${missing.length > 0 ? ` (missing ${missing.join(', ')})` : ''}; MEMEX_MODELS_DIR=${modelsDir}. ${how}.`,
  );
}

type EnvSettings = Pick<typeof env, 'localModelPath' | 'allowRemoteModels' | 'allowLocalModels' | 'cacheDir' | 'useFSCache'>;

let envQueue: Promise<unknown> = Promise.resolve();

/**
 * transformers.js keeps its settings in one global `env` object. Loads are serialised, `env` is
 * set only for the duration of a load and restored afterwards, so concurrent loaders with
 * different options (or other users of the library) never see each other's settings.
 * Everything a model needs is read during the load; inference does not consult `env`.
 */
export function withTransformersEnv<T>(settings: EnvSettings, fn: () => Promise<T>): Promise<T> {
  const run = envQueue.then(async () => {
    const { env } = await transformers();
    const saved: EnvSettings = {
      localModelPath: env.localModelPath,
      allowRemoteModels: env.allowRemoteModels,
      allowLocalModels: env.allowLocalModels,
      cacheDir: env.cacheDir,
      useFSCache: env.useFSCache,
    };
    Object.assign(env, settings);
    try {
      return await fn();
    } finally {
      Object.assign(env, saved);
    }
  });
  envQueue = run.catch(() => undefined);
  return run;
}

async function loadPipeline(options: EmbedderOptions, target: LoadTarget): Promise<FeatureExtractionPipeline> {
  const { env, pipeline } = await transformers();
  if (target.kind === 'local') {
    const missing = missingFiles(target.dir);
    if (missing.length > 0) throw notFoundError(options, [target.dir], missing);
    // Load as "<parent>/<name>" the way transformers.js loads local Hub-style models. The file
    // cache is switched off: it is consulted *before* the local directory and is keyed by the
    // bare name, so a cached model of the same name would silently shadow this directory.
    const name = path.basename(target.dir);
    const useName = looksLikeHubId(name);
    const settings: EnvSettings = {
      localModelPath: useName ? path.dirname(target.dir) : env.localModelPath,
      allowRemoteModels: false,
      allowLocalModels: true,
      cacheDir: env.cacheDir,
      useFSCache: false,
    };
    return withTransformersEnv(settings, () =>
      pipeline('feature-extraction', useName ? name : target.dir, { dtype: 'fp32', local_files_only: true }),
    );
  }
  if (!options.allowRemote && missingFiles(target.cacheDir).length > 0) {
    throw notFoundError(options, [target.localDir, target.cacheDir], []);
  }
  const settings: EnvSettings = {
    localModelPath: path.resolve(options.modelsDir),
    allowRemoteModels: options.allowRemote,
    allowLocalModels: true,
    cacheDir: target.cacheRoot,
    useFSCache: true,
  };
  return withTransformersEnv(settings, () =>
    pipeline('feature-extraction', target.id, { dtype: 'fp32', local_files_only: !options.allowRemote }),
  );
}

/** Mean over positions with mask != 0, then L2 normalisation; all zeros when the norm is 0 or not finite. */
function poolAndNormalize(hidden: Tensor, mask: Tensor, row: number): Float32Array {
  const [, seqLength, dim] = hidden.dims as [number, number, number];
  const data = hidden.data as Float32Array;
  const maskData = mask.data as BigInt64Array;
  const sum = new Float64Array(dim);
  let count = 0;
  for (let s = 0; s < seqLength; s++) {
    if (maskData[row * seqLength + s] === 0n) continue;
    count++;
    const base = (row * seqLength + s) * dim;
    for (let k = 0; k < dim; k++) sum[k] = sum[k]! + data[base + k]!;
  }
  return count === 0 ? new Float32Array(dim) : normalizedSum(sum);
}


class TransformersEmbedder implements Embedder {
  private dim = 0;
  private disposed = false;

  constructor(
    readonly modelId: string,
    private readonly extractor: FeatureExtractionPipeline,
    private readonly batchSize: number,
    private readonly prefixes: { query: string; document: string },
  ) {}

  get dimension(): number {
    return this.dim;
  }

  /** Embeds a probe text to learn the output width (called once by loadEmbedder). */
  async probeDimension(): Promise<void> {
    const [probe] = await this.embed(['dimension probe'], 'document');
    this.dim = probe!.length;
  }

  async embed(texts: readonly string[], kind: 'query' | 'document'): Promise<Float32Array[]> {
    if (this.disposed) throw new Error(`embedder for "${this.modelId}" has been disposed`);
    if (kind !== 'query' && kind !== 'document') throw new Error(`embed: kind must be 'query' or 'document', got ${String(kind)}`);
    const prefix = this.prefixes[kind];
    const out = new Array<Float32Array>(texts.length);
    // Batch texts of similar length together so padding stays small; results keep input order.
    const order = texts.map((_, i) => i).sort((a, b) => texts[b]!.length - texts[a]!.length);
    for (let start = 0; start < order.length; start += this.batchSize) {
      const indices = order.slice(start, start + this.batchSize);
      const vectors = await this.embedBatch(indices.map((i) => prefix + texts[i]!));
      indices.forEach((textIndex, j) => {
        out[textIndex] = vectors[j]!;
      });
    }
    return out;
  }

  private async embedBatch(batch: string[]): Promise<Float32Array[]> {
    // Single-sequence token_type_ids are all zero; encoder_forward supplies zeros itself when a
    // model declares that input, so skipping them saves tokenizer work without changing results.
    const inputs = this.extractor.tokenizer(batch, { padding: true, truncation: true, return_token_type_ids: false });
    const outputs = (await this.extractor.model(inputs)) as Record<string, Tensor | undefined>;
    const hidden = outputs.last_hidden_state ?? outputs.token_embeddings ?? outputs.logits;
    if (!hidden || hidden.dims.length !== 3) {
      throw new Error(`model "${this.modelId}" returned no [batch, sequence, hidden] output (got ${Object.keys(outputs).join(', ')})`);
    }
    return batch.map((_, row) => poolAndNormalize(hidden, inputs.attention_mask as Tensor, row));
  }

  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    await this.extractor.dispose();
  }
}

/**
 * Loads a feature-extraction model and returns an Embedder. Throws an Error naming the model,
 * the directories searched and how to build or obtain it when the model is missing.
 */
export async function loadEmbedder(options: EmbedderOptions & { runtime?: 'auto' | 'onnxruntime' }): Promise<Embedder> {
  const batchSize = options.batchSize ?? DEFAULT_EMBEDDING_BATCH_SIZE;
  if (!Number.isInteger(batchSize) || batchSize < 1) throw new RangeError(`batchSize must be a positive integer, got ${batchSize}`);
  if (!options.model) throw new Error('loadEmbedder: options.model is empty');
  const target = resolveTarget(options);
  const prefixes = { query: options.queryPrefix ?? '', document: options.documentPrefix ?? '' };
  // A static model (built by build:model) is a table lookup: run without onnxruntime, same vectors.
  if (target.kind === 'local' && options.runtime !== 'onnxruntime' && missingFiles(target.dir).length === 0) {
    const embedder = StaticEmbedder.open(options.model, target.dir, prefixes);
    if (embedder) return embedder;
  }
  let extractor: FeatureExtractionPipeline;
  try {
    extractor = await loadPipeline(options, target);
  } catch (error) {
    if (error instanceof EmbeddingModelNotFoundError) throw error;
    const where = target.kind === 'local' ? target.dir : `${target.id} (local ${target.localDir}, cache ${target.cacheDir}, remote ${options.allowRemote ? 'allowed' : 'disabled'})`;
    throw new Error(`Failed to load embedding model "${options.model}" from ${where}: ${(error as Error)?.message ?? String(error)}`, {
      cause: error,
    });
  }
  const embedder = new TransformersEmbedder(options.model, extractor, batchSize, prefixes);
  try {
    await embedder.probeDimension();
  } catch (error) {
    await embedder.dispose();
    throw error;
  }
  return embedder;
}
