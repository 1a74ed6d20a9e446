import { readHalves } from '../../numeric/float16';
import { decodeDense } from './rows';
import type { Statements } from './schema';
import type { FullVector, StoredChunk } from './slots';

/**
 * The stored vectors of chunks for rescoring, by chunk id, in one read: halves kept as stored (the
 * addon converts them, and a cache holds twice as many), float32 rows decoded. Read by the rows the
 * chunks were loaded from; a row that is no longer the chunk's (written again since, by another
 * process say, and not yet reloaded here) is looked up by id instead.
 */
export function readFullVectors(stmts: Statements, model: string, dimension: number, chunks: readonly StoredChunk[]): Map<string, FullVector> {
  const vector = (dense: Buffer): FullVector => (dense.byteLength === dimension * 2 ? readHalves(dense) : decodeDense(dense, dimension));
  const found = new Map<string, FullVector>();
  const byRow = new Map<number, string>();
  for (const c of chunks) if (c.row >= 0) byRow.set(c.row, c.chunkId);
  if (byRow.size > 0) {
    for (const row of stmts.denseOfRows.iterate(JSON.stringify([...byRow.keys()]))) {
      if (row.model === model && row.chunk_id === byRow.get(row.rowid)) found.set(row.chunk_id, vector(row.dense));
    }
  }
  if (found.size < chunks.length) {
    const missing = chunks.filter((c) => !found.has(c.chunkId)).map((c) => c.chunkId);
    for (const row of stmts.denseOfMany.iterate(model, JSON.stringify(missing))) found.set(row.chunk_id, vector(row.dense));
  }
  return found;
}
