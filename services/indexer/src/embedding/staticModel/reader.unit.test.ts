import { describe, expect, it } from 'vitest';
import { encodeGatherEmbeddingModel } from './onnx';
import { readStaticTable } from './reader';

const spec = { rows: 3, dimension: 2, producerVersion: 'test' };

describe('readStaticTable', () => {
  it('reads back the table of a float16 and of a float32 Gather model', () => {
    const bits = Uint16Array.from([0x3c00, 0xc000, 0x0000, 0x7bff, 0x0001, 0x8400]);
    const half = readStaticTable(encodeGatherEmbeddingModel({ ...spec, table: { dtype: 'float16', bits } }).finish());
    expect(half).toEqual({ rows: 3, dimension: 2, data: { dtype: 'float16', bits } });
    const values = Float32Array.from([1.5, -2, 0, 65504, 1e-7, -3.25]);
    const full = readStaticTable(encodeGatherEmbeddingModel({ ...spec, table: { dtype: 'float32', values } }).finish());
    expect(full).toEqual({ rows: 3, dimension: 2, data: { dtype: 'float32', values } });
  });

  it('reads the same table wherever the file sits in memory (a view when aligned, else a copy)', () => {
    const bits = Uint16Array.from([1, 2, 3, 4, 5, 6]);
    const model = encodeGatherEmbeddingModel({ ...spec, table: { dtype: 'float16', bits } }).finish();
    for (const shift of [0, 1, 2, 3]) {
      const holder = new Uint8Array(model.length + shift);
      holder.set(model, shift);
      const table = readStaticTable(holder.subarray(shift))!;
      expect(table.data).toEqual({ dtype: 'float16', bits });
    }
  });

  it('declines what is not that graph, and throws on a cut file', () => {
    const model = encodeGatherEmbeddingModel({ ...spec, table: { dtype: 'float16', bits: new Uint16Array(6) } }).finish();
    // The same bytes with the op renamed (Gather → Gatheq): another graph, left to onnxruntime.
    const renamed = Buffer.from(model);
    const at = renamed.indexOf('Gather');
    renamed[at + 5] = 'q'.charCodeAt(0);
    expect(readStaticTable(renamed)).toBeUndefined();
    expect(readStaticTable(new Uint8Array(0))).toBeUndefined();
    expect(() => readStaticTable(model.subarray(0, model.length - 5))).toThrow(/truncated/);
  });
});
