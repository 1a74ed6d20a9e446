/**
 * The static model (`memex-glove-100d` and any model `build:model` makes) without onnxruntime:
 * its graph only gathers one table row per token, so this embedder tokenizes with tokenizers.js
 * (`@huggingface/tokenizers`, the tokenizer transformers.js itself runs; for ASCII, the same steps
 * written out in `AsciiTokenizer`) and sums the rows here.
 *
 * The vectors are bit-identical to the transformers.js path (same tokens, the same float16 → float32
 * values, summed in the same order in float64, then L2-normalised — staticEmbedder.int.test.ts
 * compares them), with less memory: neither transformers.js nor onnxruntime is loaded, and the
 * table stays in the model file, read a row at a time through a cache (`TableRows`); what is
 * resident is the tokenizer and the cache.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Tokenizer } from '@huggingface/tokenizers';
import { mapInTurns } from '@memex/runtime';
import { AsciiTokenizer, type TokenizerDefinition } from './asciiTokenizer';
import type { Embedder } from './port';
import { normalizedSum } from './pooling';
import { STAMP_FILE } from './staticModel/build';
import { locateStaticTable } from './staticModel/reader';
import { TableRows } from './staticModel/tableRows';

interface TokenizerConfig {
  model_max_length?: number;
  truncation_side?: string;
}

export class StaticEmbedder implements Embedder {
  private disposed = false;

  private constructor(
    readonly modelId: string,
    private readonly tokenizer: Tokenizer,
    /** BERT's tokenization of ASCII written out (~8× the library's speed, the same ids), where the tokenizer is of its kind. */
    private readonly ascii: AsciiTokenizer | undefined,
    private readonly table: TableRows,
    private readonly maxLength: number,
    private readonly prefixes: { query: string; document: string },
  ) {}

  /**
   * The model in `dir` as a static embedder, or undefined when it is not one this can run (no
   * builder marker, or a graph other than the table lookup): it is then loaded with transformers.js.
   */
  static open(
    modelId: string,
    dir: string,
    prefixes: { query: string; document: string },
    rowCacheBytes?: number,
  ): StaticEmbedder | undefined {
    // (the builder's stamp marks a model it made)
    if (!fs.existsSync(path.join(dir, STAMP_FILE))) return undefined;
    const file = path.join(dir, 'onnx', 'model.onnx');
    const config = JSON.parse(fs.readFileSync(path.join(dir, 'tokenizer_config.json'), 'utf8')) as TokenizerConfig;
    if (config.truncation_side !== undefined && config.truncation_side !== 'right') return undefined;
    // Read whole once to find the table (the buffer is dropped on return); rows are read from the
    // descriptor from then on. A model rebuilt in place is picked up by loading it again.
    const fd = fs.openSync(file, 'r');
    const location = locateStaticTable(fs.readFileSync(fd));
    if (!location) {
      fs.closeSync(fd);
      return undefined;
    }
    const table = new TableRows(fd, location, rowCacheBytes);
    try {
      const definition = JSON.parse(fs.readFileSync(path.join(dir, 'tokenizer.json'), 'utf8')) as TokenizerDefinition & { model?: { vocab?: unknown } };
      const tokenizer = new Tokenizer(definition, config);
      // (the builder's vocabularies hold whole words only: words are kept only where the tokenizer can produce them whole)
      const ascii = AsciiTokenizer.for(tokenizer, definition, { wholeWords: true });
      // The tokenizer copies the vocabulary into a Map of its own and keeps this parsed definition:
      // its copy of the ~320k words, which nothing reads after construction, would stay resident
      // (12 MiB of the indexer's heap).
      if (definition.model) delete definition.model.vocab;
      return new StaticEmbedder(modelId, tokenizer, ascii, table, config.model_max_length ?? Number.MAX_SAFE_INTEGER, prefixes);
    } catch (error) {
      table.close();
      throw error;
    }
  }

  get dimension(): number {
    return this.table.dimension;
  }

  async embed(texts: readonly string[], kind: 'query' | 'document'): Promise<Float32Array[]> {
    if (this.disposed) throw new Error(`embedder for "${this.modelId}" has been disposed`);
    if (kind !== 'query' && kind !== 'document') throw new Error(`embed: kind must be 'query' or 'document', got ${String(kind)}`);
    const prefix = this.prefixes[kind];
    // All in JavaScript on this thread: every few milliseconds, let other work run (searches, acks),
    // as onnxruntime's asynchronous runs did (a 16 MiB memo has ~21k chunks).
    return mapInTurns(texts, (text) => this.embedOne(prefix + text));
  }

  private embedOne(text: string): Float32Array {
    const dim = this.table.dimension;
    let ids = this.ascii?.ids(text) ?? this.tokenizer.encode(text).ids;
    // As transformers.js truncates (side "right"): the first model_max_length tokens.
    if (ids.length > this.maxLength) ids = ids.slice(0, this.maxLength);
    const sum = new Float64Array(dim);
    const { table } = this;
    const { values } = table;
    for (const id of ids) {
      if (id < 0 || id >= table.rows) throw new Error(`token id ${id} outside the table of ${table.rows} rows`);
      const base = table.offset(id);
      for (let k = 0; k < dim; k++) sum[k] = sum[k]! + values[base + k]!;
    }
    return ids.length === 0 ? new Float32Array(dim) : normalizedSum(sum);
  }

  async dispose(): Promise<void> {
    this.disposed = true;
    this.table.close();
  }
}
