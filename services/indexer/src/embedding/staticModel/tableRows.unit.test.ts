import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from '@memex/testing';
import { float16Value } from '../../numeric/float16';
import { encodeGatherEmbeddingModel } from './onnx';
import { locateStaticTable } from './reader';
import { TableRows } from './tableRows';

const dirs: { remove(): void }[] = [];
afterEach(() => dirs.splice(0).forEach((d) => d.remove()));

/** A model file of `rows` × 3 whose row i holds i, i + 0.5, −i (float32) or those bits (float16). */
function modelFile(dtype: 'float16' | 'float32', rows: number): { file: string; tableRows: (cacheBytes: number) => TableRows } {
  const dimension = 3;
  const flat = Array.from({ length: rows * dimension }, (_, k) => [Math.floor(k / 3), Math.floor(k / 3) + 0.5, -Math.floor(k / 3)][k % 3]!);
  const table = dtype === 'float16' ? { dtype, bits: Uint16Array.from(flat, (v) => Math.abs(v) & 0xffff) } : { dtype, values: Float32Array.from(flat) };
  const bytes = encodeGatherEmbeddingModel({ rows, dimension, producerVersion: 'test', table }).finish();
  const dir = tempDir('memex-table-');
  dirs.push(dir);
  const file = path.join(dir.path, 'model.onnx');
  fs.writeFileSync(file, bytes);
  const location = locateStaticTable(bytes)!;
  const fd = fs.openSync(file, 'r');
  return { file, tableRows: (cacheBytes) => new TableRows(fd, location, cacheBytes) };
}

describe('TableRows', () => {
  it('reads every row right through a cache far smaller than the table, in any order, repeatedly', () => {
    const { tableRows } = modelFile('float32', 1000);
    const rows = tableRows(4 * 12); // four rows: ids collide on every slot
    const order = [0, 999, 4, 8, 0, 3, 7, 512, 516, 1, 999, ...Array.from({ length: 200 }, (_, i) => (i * 37) % 1000)];
    for (const id of order) {
      const at = rows.offset(id);
      expect(Array.from(rows.values.subarray(at, at + 3)), `row ${id}`).toEqual([id, id + 0.5, -id]);
    }
    rows.close();
  });

  it('reads float16 rows as their values', () => {
    const { tableRows } = modelFile('float16', 50);
    const rows = tableRows(1 << 20);
    for (const id of [7, 49, 0, 7]) {
      const at = rows.offset(id);
      expect(Array.from(rows.values.subarray(at, at + 3))).toEqual([float16Value(id), float16Value(id), float16Value(id)]);
    }
    expect(float16Value(49)).toBeGreaterThan(0); // (a subnormal half: not zero)
    expect(rows.values.length).toBe(64 * 3); // the cache rounds up to a power of two of rows, no more than the table needs
    rows.close();
  });

  it('says so when the file is cut short, and refuses reads once closed', () => {
    const { file, tableRows } = modelFile('float32', 100);
    const rows = tableRows(1 << 20);
    fs.truncateSync(file, fs.statSync(file).size - 600);
    expect(() => rows.offset(90)).toThrow(/truncated/);
    rows.close();
    expect(() => rows.offset(1)).toThrow(/closed/);
  });
});
