/**
 * The search index on a Qdrant server (REST). Needs Qdrant >= 1.16.0: the catalog's version guard is
 * a conditional upsert (`update_filter`, new in 1.16); the rest is older (Query API and sparse
 * vectors with `modifier: idf` 1.10, `is_tenant` keyword indexes 1.11).
 *
 * Collections (all named from one prefix):
 * - `<prefix>_catalog`: one point per memo (id = memo id), no vectors at all (`vectors: {}`, points
 *   upserted with `vector: {}`). Payload: projectId, memoId, version, writeId, deleted, revision,
 *   archived, the filterable fields (see `filterPayload`), summary and the memo as JSON text.
 * - `<prefix>_chunks_<model>_<hash>_<dim>` per model: one point per chunk (id = chunk id) with a
 *   Cosine vector `dense` and a sparse vector `bm25` of BM25 document weights (no IDF). Payload:
 *   projectId, memoId, chunkId, revision, chunkIndex, content, `terms` (the chunk's term ids,
 *   indexed), plus a copy of its memo's catalog entry (filterable fields, title, summary, archived),
 *   the catalog `syncVersion` that copy came from, and `current`.
 *
 * BM25 statistics per project, on the client: Qdrant's own `modifier: idf` counts documents over
 * the whole collection, i.e. across projects, so one tenant's data would move another's scores. A
 * sparse search first counts, in the caller's project, the chunks (N) and the chunks holding each
 * query term (df, through the `terms` index), and sends idf × query weight as the query vector.
 * Cost: one count per query term, sent together. A collection made with `modifier: idf` is still
 * searched that way until the model is re-indexed into a new collection.
 *
 * Ties: equal scores are ordered by memo uuid, then chunk index; when the cut falls inside a run of
 * equal scores, the whole run is fetched (`score_threshold`) so the same ones are always kept.
 *
 * Visibility: a chunk is findable iff `current` is true and `archived` is not, in its project, and it
 * passes the filters. `current` means "the catalog (at `syncVersion`) has this memo, live, at this
 * chunk's revision". Only a sync from the catalog sets it, and a sync is guarded by
 * `syncVersion < version`, so a chunk's copy only ever moves to newer catalog versions whatever
 * order racing writers reach Qdrant in (each Qdrant update is applied to a point atomically). Chunks
 * are written hidden (`current: false`, `syncVersion: 0`) and synced after a re-read of the catalog:
 * - applyCatalog: guarded upsert of the catalog point, then, if it took, per chunk collection:
 *   delete the memo's chunks (deletion) or its older revisions, then sync.
 * - putChunks: read the catalog, write hidden, read the catalog again, sync from what it says (or
 *   delete what was written if the memo is now deleted or at a newer revision).
 * Any catalog write that lands after putChunks' second read does its own sync afterwards, over the
 * chunks already written; any that landed before it is what the second read sees. So a deleted memo
 * never keeps chunks, an older revision's chunks never stay findable, and a copy never goes stale.
 * A chunk can be findable only between a catalog write and the chunk sync of the same applyCatalog
 * call, never after that call returns.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { QdrantClient, Schemas } from '@qdrant/js-client-rest';
import type { MemoAttributes } from '@memex/contracts';
import { DEFAULT_BM25_OPTIONS, idf, weighDocument, type EncodedDocument, type SparseVector } from '@memex/text';
import type { CandidateQuery, CatalogEntry, CatalogUpdate, ChunkCandidate, ChunksOfMemo, IndexedChunk, SearchIndex, StoredChunkText } from '../port';
import { compareChunks } from '../topK';
import {
  FILTER_KEYWORD_FIELDS,
  filterPayload,
  residualMatches,
  translateFilters,
  type QdrantCondition,
  type QdrantFilter,
  type TranslatedFilters,
} from './filter';

/** The oldest Qdrant this adapter works with (`update_filter` on upserts). */
const MIN_QDRANT_VERSION = '1.16.0';

interface QdrantSearchIndexOptions {
  /** Prefix of every collection this index owns ([A-Za-z0-9_-]). Default `memex`. */
  collectionPrefix?: string;
  /**
   * The average chunk length (in analyzed terms) BM25 weights are computed with. Qdrant stores the
   * weights, so unlike the embedded index it cannot use the live average. Default 100.
   */
  bm25AvgDocLength?: number;
}

const DENSE = 'dense';

/** BM25 document weights for Qdrant's sparse vector (IDF is applied per project at query time). */
function sparseWeights(terms: EncodedDocument, avgDocLength: number): { indices: number[]; values: number[] } {
  const { indices, values } = weighDocument(terms, { avgDocLength });
  return { indices, values };
}
const SPARSE = 'bm25';
const UPSERT_BATCH = 256;
/** How many points beyond the limit are fetched to settle a tie at the cut. */
const TIE_WINDOW = 1_000;
const SCROLL_PAGE = 1_000;

type Payload = Record<string, unknown>;

const eq = (key: string, value: string | number | boolean): QdrantCondition => ({ key, match: { value } });

/** Whether an error from the client is Qdrant answering 404 (collection not found). */
function isNotFound(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { status?: unknown }).status === 404;
}

function compareVersions(a: string, b: string): number {
  const pa = a.split(/[.-]/).map((x) => Number.parseInt(x, 10) || 0);
  const pb = b.split(/[.-]/).map((x) => Number.parseInt(x, 10) || 0);
  for (let i = 0; i < 3; i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/** `[a-z0-9_]` spelling of a model id plus a hash of the raw id, so distinct ids never share a name. */
function modelSlug(model: string): string {
  const readable = model
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, 48);
  const hash = createHash('sha256').update(model, 'utf8').digest('hex').slice(0, 8);
  return `${readable || 'model'}_${hash}`;
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** What a sync copies onto a memo's chunk points from its catalog entry. */
function memoCopy(memo: MemoAttributes): Payload {
  return { ...filterPayload(memo), summary: memo.summary, archived: memo.archived };
}

function entryOf(payload: Payload): CatalogEntry {
  return {
    memoId: payload.memoId as string,
    projectId: payload.projectId as string,
    version: payload.version as number,
    memo: payload.deleted === true ? null : (JSON.parse(payload.memo as string) as MemoAttributes),
  };
}

export class QdrantSearchIndex implements SearchIndex {
  readonly kind = 'qdrant' as const;
  private readonly prefix: string;
  private readonly catalogName: string;
  private readonly bm25AvgDocLength: number;
  private catalogReady: Promise<void> | undefined;
  /** model → its chunk collection, as opened or found. */
  private readonly collections = new Map<string, string>();
  /** Collections made before per-project statistics, whose sparse vector Qdrant weighs by IDF. */
  private readonly globalIdf = new Set<string>();

  constructor(
    private readonly client: QdrantClient,
    options: QdrantSearchIndexOptions = {},
  ) {
    this.prefix = options.collectionPrefix ?? 'memex';
    this.bm25AvgDocLength = options.bm25AvgDocLength ?? DEFAULT_BM25_OPTIONS.avgDocLength;
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(this.prefix)) {
      throw new Error(`collection prefix must be 1-64 characters of [A-Za-z0-9_-], got '${this.prefix}'`);
    }
    this.catalogName = `${this.prefix}_catalog`;
  }

  /** Connects to a Qdrant server and checks it is recent enough. */
  static async connect(url: string, options: QdrantSearchIndexOptions & { apiKey?: string } = {}): Promise<QdrantSearchIndex> {
    // (the client library, ~19 MiB once loaded, is imported here: the embedded index never needs it)
    const { QdrantClient } = await import('@qdrant/js-client-rest');
    const client = new QdrantClient({ url, apiKey: options.apiKey, checkCompatibility: false });
    const { version } = await client.versionInfo();
    if (compareVersions(version, MIN_QDRANT_VERSION) < 0) {
      throw new Error(`Qdrant at ${url} is ${version}; the search index needs ${MIN_QDRANT_VERSION} or newer (conditional upserts)`);
    }
    return new QdrantSearchIndex(client, options);
  }

  // ---- collections ----

  private chunkCollectionName(model: string, dimension: number): string {
    return `${this.prefix}_chunks_${modelSlug(model)}_${dimension}`;
  }

  private async collectionNames(): Promise<string[]> {
    return (await this.client.getCollections()).collections.map((c) => c.name);
  }

  /** Every chunk collection under this prefix (those of other index instances included). */
  private async chunkCollections(): Promise<string[]> {
    const pattern = new RegExp(`^${escapeRegExp(this.prefix)}_chunks_[a-z0-9_]+_[0-9a-f]{8}_\\d+$`);
    return (await this.collectionNames()).filter((name) => pattern.test(name));
  }

  /** The chunk collections of one model, with their dimension. */
  private async modelCollections(model: string): Promise<{ name: string; dimension: number }[]> {
    const pattern = new RegExp(`^${escapeRegExp(`${this.prefix}_chunks_${modelSlug(model)}_`)}(\\d+)$`);
    const out: { name: string; dimension: number }[] = [];
    for (const name of await this.collectionNames()) {
      const m = pattern.exec(name);
      if (m) out.push({ name, dimension: Number(m[1]) });
    }
    return out;
  }

  /** The model's chunk collection, or undefined when the model has none. */
  private async resolve(model: string): Promise<string | undefined> {
    const known = this.collections.get(model);
    if (known) return known;
    const found = await this.modelCollections(model);
    if (found.length > 1) {
      throw new Error(`model ${model} has collections of several dimensions (${found.map((f) => f.dimension).join(', ')}); open it first`);
    }
    if (found[0]) {
      const info = await this.client.getCollection(found[0].name);
      if (info.config.params.sparse_vectors?.[SPARSE]?.modifier === 'idf') this.globalIdf.add(found[0].name);
      this.collections.set(model, found[0].name);
    }
    return found[0]?.name;
  }

  /** Creates a collection unless it exists (another instance may create it at the same moment). */
  private async createCollection(name: string, config: Schemas['CreateCollection']): Promise<void> {
    if ((await this.client.collectionExists(name)).exists) return;
    try {
      await this.client.createCollection(name, config);
    } catch (error) {
      if (!(await this.client.collectionExists(name)).exists) throw error;
    }
  }

  private async ensureIndexes(name: string, indexes: Record<string, Schemas['PayloadFieldSchema']>): Promise<void> {
    const info = await this.client.getCollection(name);
    for (const [field, schema] of Object.entries(indexes)) {
      if (info.payload_schema[field]) continue;
      await this.client.createPayloadIndex(name, { field_name: field, field_schema: schema, wait: true });
    }
  }

  private ensureCatalog(): Promise<void> {
    this.catalogReady ??= (async () => {
      await this.createCollection(this.catalogName, { vectors: {} });
      await this.ensureIndexes(this.catalogName, {
        projectId: { type: 'keyword', is_tenant: true },
        ...Object.fromEntries(FILTER_KEYWORD_FIELDS.map((f) => [f, 'keyword' as const])),
        deleted: 'bool',
        archived: 'bool',
        version: 'integer',
      });
    })().catch((error: unknown) => {
      this.catalogReady = undefined;
      throw error;
    });
    return this.catalogReady;
  }

  async openModel(model: string, dimension: number): Promise<void> {
    if (!Number.isInteger(dimension) || dimension <= 0) throw new Error(`dimension must be a positive integer, got ${dimension}`);
    await this.ensureCatalog();
    const name = this.chunkCollectionName(model, dimension);
    const other = (await this.modelCollections(model)).find((c) => c.dimension !== dimension);
    if (other) throw new Error(`model ${model} is stored with dimension ${other.dimension}, not ${dimension}`);
    await this.createCollection(name, {
      vectors: { [DENSE]: { size: dimension, distance: 'Cosine' } },
      sparse_vectors: { [SPARSE]: {} },
    });
    const info = await this.client.getCollection(name);
    const vectors = info.config.params.vectors as Record<string, { size?: number; distance?: string } | undefined> | undefined;
    const dense = vectors?.[DENSE];
    const sparse = info.config.params.sparse_vectors?.[SPARSE];
    if (dense?.size !== dimension || dense.distance !== 'Cosine' || !sparse) {
      throw new Error(`collection ${name} exists with another vector configuration than model ${model} of dimension ${dimension} needs`);
    }
    if (sparse.modifier === 'idf') this.globalIdf.add(name);
    await this.ensureIndexes(name, {
      projectId: { type: 'keyword', is_tenant: true },
      memoId: 'keyword',
      ...Object.fromEntries(FILTER_KEYWORD_FIELDS.map((f) => [f, 'keyword' as const])),
      revision: 'integer',
      syncVersion: 'integer',
      archived: 'bool',
      current: 'bool',
      terms: 'integer',
    });
    this.collections.set(model, name);
  }

  async dropModel(model: string): Promise<void> {
    this.collections.delete(model);
    for (const { name } of await this.modelCollections(model)) {
      await this.client.deleteCollection(name);
    }
  }

  async close(): Promise<void> {
    // The REST client holds no connection that needs closing.
  }

  // ---- catalog ----

  private async readCatalog(memoId: string): Promise<Payload | undefined> {
    await this.ensureCatalog();
    const [point] = await this.client.retrieve(this.catalogName, { ids: [memoId], with_payload: true, with_vector: false });
    return point?.payload ?? undefined;
  }

  async getCatalog(memoId: string): Promise<CatalogEntry | undefined> {
    const payload = await this.readCatalog(memoId);
    return payload && entryOf(payload);
  }

  /** One by one, in order: each update's version check reads what the one before wrote. */
  async applyCatalogs(updates: readonly CatalogUpdate[]): Promise<boolean[]> {
    const applied: boolean[] = [];
    for (const update of updates) applied.push(await this.applyCatalog(update));
    return applied;
  }

  async applyCatalog(update: CatalogUpdate): Promise<boolean> {
    await this.ensureCatalog();
    const { memo } = update;
    const writeId = randomUUID();
    const payload: Payload = memo
      ? {
          projectId: update.projectId,
          memoId: update.memoId,
          version: update.version,
          writeId,
          deleted: false,
          revision: memo.revision,
          archived: memo.archived,
          ...filterPayload(memo),
          summary: memo.summary,
          memo: JSON.stringify(memo),
        }
      : {
          projectId: update.projectId,
          memoId: update.memoId,
          version: update.version,
          writeId,
          deleted: true,
          revision: null,
          archived: null,
          title: null,
          source: null,
          clientReferenceId: null,
          tags: [],
          meta: [],
          summary: null,
          memo: null,
        };
    // An existing point is replaced only while older and not a tombstone; a missing one is inserted.
    await this.client.upsert(this.catalogName, {
      wait: true,
      points: [{ id: update.memoId, vector: {}, payload }],
      update_filter: { must: [{ key: 'version', range: { lt: update.version } }], must_not: [eq('deleted', true)] },
    });
    // Applied iff the stored point is this very write (a tie or a racing newer version says no).
    const stored = await this.readCatalog(update.memoId);
    if (!stored || stored.version !== update.version) return false; // a newer version's writer settles the chunks
    // Settle the chunks even for a redelivery of the stored version (idempotent): the first delivery
    // may have stopped between the catalog write and this step.
    const entry = entryOf(stored);
    for (const collection of await this.chunkCollections()) {
      try {
        await this.settle(collection, entry);
      } catch (error) {
        if (!isNotFound(error)) throw error; // that model was dropped meanwhile
      }
    }
    return stored.writeId === writeId;
  }

  /** Brings the memo's chunks in `collection` in line with its catalog entry. */
  private async settle(collection: string, entry: CatalogEntry): Promise<void> {
    if (!entry.memo) {
      await this.client.delete(collection, { wait: true, filter: { must: [eq('memoId', entry.memoId)] } });
      return;
    }
    const older: QdrantFilter = { must: [eq('memoId', entry.memoId), { key: 'revision', range: { lt: entry.memo.revision } }] };
    await this.client.delete(collection, { wait: true, filter: older });
    await this.sync(collection, { ...entry, memo: entry.memo });
  }

  /**
   * Copies a catalog entry onto the memo's chunk points in `collection` and marks those of its
   * project and revision current and the rest not, on every point whose copy is older than it.
   */
  private async sync(collection: string, entry: CatalogEntry & { memo: MemoAttributes }): Promise<void> {
    const { memoId, projectId, version, memo } = entry;
    // The chunk keeps the project putChunks gave it: it is current only if that is the memo's.
    const copy = { ...memoCopy(memo), syncVersion: version };
    const newer: QdrantCondition = { key: 'syncVersion', range: { gte: version } };
    const isCurrent: QdrantFilter = { must: [eq('revision', memo.revision), eq('projectId', projectId)] };
    await this.client.setPayload(collection, {
      wait: true,
      payload: { ...copy, current: true },
      filter: { must: [eq('memoId', memoId), isCurrent], must_not: [newer] },
    });
    await this.client.setPayload(collection, {
      wait: true,
      payload: { ...copy, current: false },
      filter: { must: [eq('memoId', memoId)], must_not: [newer, isCurrent] },
    });
  }

  // ---- chunks ----

  /** One by one, in order (two revisions of one memo may come together). */
  async putChunksOfMemos(model: string, items: readonly ChunksOfMemo[]): Promise<boolean[]> {
    const stored: boolean[] = [];
    for (const { memo, chunks } of items) stored.push(await this.putChunks(model, memo, chunks));
    return stored;
  }

  async putChunks(model: string, memo: { memoId: string; projectId: string; revision: number }, chunks: readonly IndexedChunk[]): Promise<boolean> {
    const collection = await this.resolve(model);
    if (!collection) throw new Error(`model ${model} is not open`);
    const outdated = (entry: Payload | undefined) =>
      entry !== undefined && (entry.deleted === true || (entry.revision as number) > memo.revision);
    if (outdated(await this.readCatalog(memo.memoId))) return false;

    const ids = chunks.map((c) => c.chunkId);
    const replaced: QdrantFilter = { must: [eq('memoId', memo.memoId), { key: 'revision', range: { lte: memo.revision } }] };
    if (ids.length > 0) replaced.must_not = [{ has_id: ids }];
    await this.client.delete(collection, { wait: true, filter: replaced });
    for (let i = 0; i < chunks.length; i += UPSERT_BATCH) {
      await this.client.upsert(collection, {
        wait: true,
        points: chunks.slice(i, i + UPSERT_BATCH).map((c) => ({
          id: c.chunkId,
          vector:
            c.terms.indices.length > 0
              ? { [DENSE]: Array.from(c.dense), [SPARSE]: sparseWeights(c.terms, this.bm25AvgDocLength) }
              : { [DENSE]: Array.from(c.dense) },
          // Hidden until synced from the catalog below (or by the catalog update still to come).
          payload: {
            projectId: memo.projectId,
            memoId: memo.memoId,
            chunkId: c.chunkId,
            revision: memo.revision,
            chunkIndex: c.index,
            content: c.content,
            terms: c.terms.indices,
            current: false,
            syncVersion: 0,
          },
        })),
      });
    }

    // Qdrant has no transactions: look again, after the write, at what the catalog says now.
    const now = await this.readCatalog(memo.memoId);
    if (outdated(now)) {
      if (ids.length > 0) await this.client.delete(collection, { wait: true, points: ids });
      return false;
    }
    if (now) {
      const entry = entryOf(now);
      if (entry.memo) await this.sync(collection, { ...entry, memo: entry.memo });
    }
    return true;
  }

  /** The filter of the chunks a query may find, or undefined when it can find none. */
  private async visible(query: CandidateQuery): Promise<QdrantFilter | undefined> {
    const translated = translateFilters(query.filters);
    const { pushed, residual, matchesNothing } = translated;
    if (matchesNothing) return undefined;
    const filter = {
      must: [eq('projectId', query.projectId), eq('current', true), ...pushed.must],
      must_not: [eq('archived', true), ...pushed.must_not],
    };
    if (residual.length > 0) {
      const memoIds = await this.memosPassing(query.projectId, translated);
      if (memoIds.length === 0) return undefined;
      filter.must.push({ key: 'memoId', match: { any: memoIds } });
    }
    return filter;
  }

  /**
   * The live, unarchived memos of the project passing every filter, for filters Qdrant cannot
   * evaluate exactly. Costs a scroll over the project's catalog points that pass the pushed-down
   * filters (O(memos of the project) per query, all payloads read) and a `match.any` of that many ids.
   */
  private async memosPassing(projectId: string, { pushed, residual }: TranslatedFilters): Promise<string[]> {
    await this.ensureCatalog();
    const filter = { must: [eq('projectId', projectId), ...pushed.must], must_not: [eq('deleted', true), eq('archived', true), ...pushed.must_not] };
    const ids: string[] = [];
    let offset: Schemas['ExtendedPointId'] | undefined;
    do {
      const page = await this.client.scroll(this.catalogName, {
        filter,
        limit: SCROLL_PAGE,
        with_payload: ['memoId', ...FILTER_KEYWORD_FIELDS],
        with_vector: false,
        ...(offset === undefined ? {} : { offset }),
      });
      for (const point of page.points) {
        if (point.payload && residualMatches(point.payload, residual)) ids.push(point.payload.memoId as string);
      }
      offset = (page.next_page_offset ?? undefined) as Schemas['ExtendedPointId'] | undefined;
    } while (offset !== undefined);
    return ids;
  }

  private async search(model: string, using: string, vector: number[] | SparseVector, query: CandidateQuery): Promise<ChunkCandidate[]> {
    if (query.limit <= 0) return [];
    const collection = await this.resolve(model);
    if (!collection) return [];
    const filter = await this.visible(query);
    if (!filter) return [];
    let points: Schemas['ScoredPoint'][];
    const ask = async (limit: number, scoreThreshold?: number) =>
      (
        await this.client.query(collection, {
          query: vector,
          using,
          filter,
          limit,
          ...(scoreThreshold === undefined ? {} : { score_threshold: scoreThreshold }),
          with_payload: ['memoId', 'chunkId', 'chunkIndex', 'content', 'title', 'summary'],
        })
      ).points;
    try {
      points = await ask(query.limit + 1);
      // The cut falls among equal scores: fetch every point scoring at least that much, so the
      // tie-break below (not Qdrant's internal order) decides which of them are kept.
      if (points.length > query.limit && points[query.limit]!.score === points[query.limit - 1]!.score) {
        points = await ask(query.limit + TIE_WINDOW, points[query.limit]!.score);
      }
    } catch (error) {
      if (!isNotFound(error)) throw error;
      this.collections.delete(model); // dropped elsewhere
      return [];
    }
    const candidates = points.map((p) => {
      const payload = p.payload ?? {};
      return {
        chunkId: typeof payload.chunkId === 'string' ? payload.chunkId : String(p.id),
        memoId: payload.memoId as string,
        chunkIndex: payload.chunkIndex as number,
        content: payload.content as string,
        memoTitle: payload.title as string,
        memoSummary: payload.summary as string,
        score: p.score,
      };
    });
    return candidates.sort((a, b) => b.score - a.score || compareChunks(a, b)).slice(0, query.limit);
  }

  async getChunks(model: string, memoId: string): Promise<StoredChunkText[]> {
    const collection = await this.resolve(model);
    if (!collection) return [];
    const out: StoredChunkText[] = [];
    let offset: Schemas['ExtendedPointId'] | undefined;
    try {
      do {
        const page = await this.client.scroll(collection, {
          filter: { must: [eq('memoId', memoId)] },
          limit: SCROLL_PAGE,
          with_payload: ['chunkId', 'revision', 'chunkIndex', 'content'],
          with_vector: false,
          ...(offset === undefined ? {} : { offset }),
        });
        for (const point of page.points) {
          const payload = point.payload ?? {};
          out.push({
            chunkId: typeof payload.chunkId === 'string' ? payload.chunkId : String(point.id),
            revision: payload.revision as number,
            index: payload.chunkIndex as number,
            content: payload.content as string,
          });
        }
        offset = (page.next_page_offset ?? undefined) as Schemas['ExtendedPointId'] | undefined;
      } while (offset !== undefined);
    } catch (error) {
      if (!isNotFound(error)) throw error;
      this.collections.delete(model);
      return [];
    }
    return out.sort((a, b) => a.revision - b.revision || a.index - b.index);
  }

  async searchDense(model: string, vector: Float32Array, query: CandidateQuery): Promise<ChunkCandidate[]> {
    return this.search(model, DENSE, Array.from(vector), query);
  }

  async searchSparse(model: string, vector: SparseVector, query: CandidateQuery): Promise<ChunkCandidate[]> {
    if (vector.indices.length === 0) return [];
    const collection = await this.resolve(model);
    if (!collection) return [];
    let weighted: SparseVector = vector;
    if (!this.globalIdf.has(collection)) {
      const statistics = await this.projectStatistics(collection, query.projectId, vector.indices);
      if (!statistics) return [];
      const indices: number[] = [];
      const values: number[] = [];
      vector.indices.forEach((term, i) => {
        const df = statistics.df[i]!;
        if (df === 0) return;
        indices.push(term);
        values.push(idf(statistics.n, df) * vector.values[i]!);
      });
      if (indices.length === 0) return [];
      weighted = { indices, values };
    }
    // Qdrant scores only points sharing a term with the query; the guard keeps that promise exact.
    return (await this.search(model, SPARSE, { indices: weighted.indices, values: weighted.values }, query)).filter((c) => c.score > 0);
  }

  /**
   * BM25's N and df within one project: its chunk points, and those holding each term. Every stored
   * chunk of the project counts (as on the embedded index), whatever its memo's state.
   */
  private async projectStatistics(collection: string, projectId: string, terms: readonly number[]): Promise<{ n: number; df: number[] } | undefined> {
    const count = async (must: QdrantCondition[]) => (await this.client.count(collection, { filter: { must }, exact: true })).count;
    try {
      const [n, ...df] = await Promise.all([
        count([eq('projectId', projectId)]),
        ...terms.map((term) => count([eq('projectId', projectId), eq('terms', term)])),
      ]);
      return { n: n!, df };
    } catch (error) {
      if (!isNotFound(error)) throw error;
      return undefined;
    }
  }

  async countChunks(model: string, projectId?: string): Promise<number> {
    const collection = await this.resolve(model);
    if (!collection) return 0;
    const must = [eq('current', true)];
    if (projectId !== undefined) must.push(eq('projectId', projectId));
    try {
      return (await this.client.count(collection, { filter: { must, must_not: [eq('archived', true)] }, exact: true })).count;
    } catch (error) {
      if (!isNotFound(error)) throw error;
      this.collections.delete(model);
      return 0;
    }
  }
}
