/**
 * HNSW graphs saved beside the embedded index, so that a restart loads them instead of rebuilding
 * (minutes at a million chunks). Per (model, project), in one directory:
 *
 * - `<name>.<token>.usearch`: the graph (usearch's own format);
 * - `<name>.<token>.keys`: the chunk id under each graph key, one a line, blank once removed;
 * - `<name>.json`: written last (by rename), naming those two files with their size and SHA-256,
 *   and what the graph covers: the SQLite file it belongs to, the last change it reflects, its
 *   shape and its number of live entries.
 *
 * A graph file reaches usearch only once its hash matches: usearch trusts its input, and a damaged
 * file can crash the process. Whether a valid file still fits the index is for the caller to judge
 * (see EmbeddedSearchIndex); nothing here is served without that check.
 */
import { createHash, randomUUID } from 'node:crypto';
import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, readSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DenseSearchOptions } from './denseOptions';
import { newAnnIndex, type AnnIndex } from './graph';

const FORMAT = 1;

interface GraphFileMeta {
  format: number;
  /** The identity of the SQLite file the graph was built from. */
  instance: string;
  model: string;
  projectId: string;
  dimension: number;
  connectivity: number;
  expansionAdd: number;
  /** The last change (`changes.seq`) the graph reflects. */
  seq: number;
  /** Live entries, and keys handed out (live or removed). */
  count: number;
  keys: number;
  graph: FileRef;
  chunkIds: FileRef;
}

interface FileRef {
  file: string;
  bytes: number;
  sha256: string;
}

interface LoadedGraph {
  meta: GraphFileMeta;
  index: AnnIndex;
  chunkIds: (string | null)[];
}

function sha256(path: string): string {
  const hash = createHash('sha256');
  const buffer = Buffer.allocUnsafe(8 << 20);
  const fd = openSync(path, 'r');
  try {
    for (;;) {
      const n = readSync(fd, buffer, 0, buffer.length, null);
      if (n === 0) break;
      hash.update(buffer.subarray(0, n));
    }
  } finally {
    closeSync(fd);
  }
  return hash.digest('hex');
}

/** The file's size and hash, or a reason it does not match `ref`. */
function check(dir: string, ref: FileRef): string | undefined {
  if (!/^[\w.-]+$/.test(ref.file)) return `bad file name ${ref.file}`;
  const path = join(dir, ref.file);
  let bytes: number;
  try {
    bytes = statSync(path).size;
  } catch {
    return `${ref.file} is missing`;
  }
  if (bytes !== ref.bytes) return `${ref.file} has ${bytes} bytes, not ${ref.bytes}`;
  if (sha256(path) !== ref.sha256) return `${ref.file} does not match its checksum`;
  return undefined;
}

export class GraphFiles {
  constructor(readonly dir: string) {}

  private name(model: string, projectId: string): string {
    const digest = (s: string) => createHash('sha256').update(s).digest('hex').slice(0, 16);
    return `${digest(model)}-${digest(projectId)}`;
  }

  /** Writes the graph and its keys under fresh names, then points the meta file at them. */
  save(meta: Omit<GraphFileMeta, 'format' | 'graph' | 'chunkIds' | 'keys'>, index: AnnIndex, chunkIds: readonly (string | null)[]): GraphFileMeta {
    mkdirSync(this.dir, { recursive: true });
    const name = this.name(meta.model, meta.projectId);
    const token = randomUUID().slice(0, 8);
    const graphFile = `${name}.${token}.usearch`;
    const keysFile = `${name}.${token}.keys`;
    index.save(join(this.dir, graphFile));
    writeFileSync(join(this.dir, keysFile), chunkIds.map((id) => id ?? '').join('\n'));
    const ref = (file: string): FileRef => ({ file, bytes: statSync(join(this.dir, file)).size, sha256: sha256(join(this.dir, file)) });
    const full: GraphFileMeta = { format: FORMAT, ...meta, keys: chunkIds.length, graph: ref(graphFile), chunkIds: ref(keysFile) };
    const metaPath = join(this.dir, `${name}.json`);
    writeFileSync(`${metaPath}.${token}.tmp`, JSON.stringify(full));
    renameSync(`${metaPath}.${token}.tmp`, metaPath);
    // Earlier saves of this graph. (A process saving the same graph at this very moment may lose its
    // files here; its meta then names missing files, and the next start rebuilds.)
    for (const file of readdirSync(this.dir)) {
      if (file.startsWith(`${name}.`) && file !== graphFile && file !== keysFile && file !== `${name}.json` && !file.endsWith('.tmp')) {
        rmSync(join(this.dir, file), { force: true });
      }
    }
    return full;
  }

  /**
   * The saved graph of (model, project), loaded, if its files are intact and of the expected shape;
   * else the reason it is not usable.
   */
  load(
    model: string,
    projectId: string,
    expected: { instance: string; dimension: number; dense: Pick<DenseSearchOptions, 'connectivity' | 'expansionAdd' | 'expansionSearch'> },
  ): LoadedGraph | { reason: string } {
    const name = this.name(model, projectId);
    let meta: GraphFileMeta;
    try {
      meta = JSON.parse(readFileSync(join(this.dir, `${name}.json`), 'utf8')) as GraphFileMeta;
    } catch (error) {
      return { reason: (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no saved graph' : 'unreadable meta file' };
    }
    if (meta.format !== FORMAT) return { reason: `format ${meta.format}` };
    if (meta.instance !== expected.instance) return { reason: 'saved for another index file' };
    if (meta.model !== model || meta.projectId !== projectId) return { reason: 'saved for another model or project' };
    if (meta.dimension !== expected.dimension || meta.connectivity !== expected.dense.connectivity || meta.expansionAdd !== expected.dense.expansionAdd) {
      return { reason: 'built with other settings' };
    }
    const damaged = check(this.dir, meta.graph) ?? check(this.dir, meta.chunkIds);
    if (damaged) return { reason: damaged };
    const text = readFileSync(join(this.dir, meta.chunkIds.file), 'utf8');
    const chunkIds = meta.keys === 0 ? [] : text.split('\n').map((line) => (line === '' ? null : line));
    if (chunkIds.length !== meta.keys || chunkIds.filter((id) => id !== null).length !== meta.count) return { reason: 'key list does not match its meta' };
    const index = newAnnIndex(expected.dimension, expected.dense);
    index.load(join(this.dir, meta.graph.file));
    if (index.size() !== meta.count || index.dimensions() !== expected.dimension) return { reason: 'graph does not match its meta' };
    return { meta, index, chunkIds };
  }

  /** Forgets every saved graph of a model. */
  removeModel(model: string): void {
    const prefix = `${this.name(model, '').slice(0, 16)}-`;
    let files: string[];
    try {
      files = readdirSync(this.dir);
    } catch {
      return;
    }
    for (const file of files) if (file.startsWith(prefix)) rmSync(join(this.dir, file), { force: true });
  }
}
