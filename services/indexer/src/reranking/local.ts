import fs from 'node:fs';
import path from 'node:path';
// Imported when a local reranker loads, not at start: bundled, a static import would load
// transformers.js and onnxruntime (~170 MB) in every indexer, reranker or not.
import type { PreTrainedModel, PreTrainedTokenizer, Tensor } from '@huggingface/transformers';
import { withTransformersEnv } from '../embedding/embedder';
import { sigmoid, type Reranker } from './port';

interface LocalRerankerOptions {
  /** A cross-encoder directory laid out like a Hugging Face repository (config.json, tokenizer files, onnx/model.onnx). */
  model: string;
  /** Where a relative `model` is looked up (MEMEX_MODELS_DIR). */
  modelsDir: string;
  /** Pairs per inference call. */
  batchSize?: number;
  /** Longest pair in tokens; longer ones are truncated. */
  maxLength?: number;
}

const FILES = ['config.json', 'tokenizer.json', 'tokenizer_config.json', 'onnx/model.onnx'];

/**
 * A cross-encoder (ms-marco-MiniLM-class) run in-process through transformers.js, from a local
 * directory only: the query and each passage go through the model together as a text pair; the
 * logit (or, for two-label models, label 1 over label 0) through a sigmoid is the relevance.
 */
export class LocalReranker implements Reranker {
  readonly name: string;

  private constructor(
    private readonly tokenizer: PreTrainedTokenizer,
    private readonly model: PreTrainedModel,
    private readonly options: LocalRerankerOptions,
    dir: string,
  ) {
    this.name = `local:${dir}`;
  }

  static async load(options: LocalRerankerOptions): Promise<LocalReranker> {
    const dir = path.resolve(options.modelsDir, options.model);
    const missing = FILES.filter((f) => !fs.existsSync(path.join(dir, f)));
    if (missing.length > 0) throw new Error(`Reranker model not found in ${dir} (missing ${missing.join(', ')}): put an ONNX cross-encoder export there`);
    const { AutoModelForSequenceClassification, AutoTokenizer, env } = await import('@huggingface/transformers');
    const settings = { localModelPath: path.dirname(dir), allowRemoteModels: false, allowLocalModels: true, cacheDir: env.cacheDir, useFSCache: false };
    const name = path.basename(dir);
    const [tokenizer, model] = await withTransformersEnv(settings, () =>
      Promise.all([
        AutoTokenizer.from_pretrained(name, { local_files_only: true }),
        AutoModelForSequenceClassification.from_pretrained(name, { dtype: 'fp32', local_files_only: true }),
      ]),
    );
    return new LocalReranker(tokenizer, model, options, dir);
  }

  async score(query: string, documents: readonly string[]): Promise<number[]> {
    const out: number[] = [];
    const batch = this.options.batchSize ?? 16;
    for (let start = 0; start < documents.length; start += batch) {
      const docs = documents.slice(start, start + batch);
      const inputs = this.tokenizer(
        docs.map(() => query),
        { text_pair: [...docs], padding: true, truncation: true, max_length: this.options.maxLength ?? 512 },
      );
      const { logits } = (await this.model(inputs)) as { logits: Tensor };
      const labels = logits.dims.at(-1) ?? 1;
      const data = logits.data as Float32Array;
      for (let i = 0; i < docs.length; i++) {
        const value = labels === 1 ? data[i]! : data[i * labels + 1]! - data[i * labels]!;
        out.push(sigmoid(value));
      }
    }
    return out;
  }

  async dispose(): Promise<void> {
    await this.model.dispose();
  }
}
