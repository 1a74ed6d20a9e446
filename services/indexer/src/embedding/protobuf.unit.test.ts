import { describe, expect, it } from 'vitest';

import { encodeGatherEmbeddingModel, encodeNode, encodeRawTensor, encodeValueInfo, littleEndianBytes, OnnxDataType } from './staticModel/onnx.js';
import { encodeVarint, ProtoWriter } from './staticModel/protobuf.js';

const hex = (bytes: Uint8Array | number[]) => Buffer.from(bytes).toString('hex');

describe('encodeVarint', () => {
  it('encodes unsigned values little-endian base 128', () => {
    expect(encodeVarint(0)).toEqual([0x00]);
    expect(encodeVarint(1)).toEqual([0x01]);
    expect(encodeVarint(127)).toEqual([0x7f]);
    expect(encodeVarint(128)).toEqual([0x80, 0x01]);
    expect(encodeVarint(150)).toEqual([0x96, 0x01]);
    expect(encodeVarint(300)).toEqual([0xac, 0x02]);
    expect(encodeVarint(2 ** 32)).toEqual([0x80, 0x80, 0x80, 0x80, 0x10]);
    expect(encodeVarint((1n << 64n) - 1n)).toEqual([...Array(9).fill(0xff), 0x01]);
  });

  it('encodes negative int64 as 10-byte two’s complement', () => {
    expect(encodeVarint(-1)).toEqual([...Array(9).fill(0xff), 0x01]);
    expect(encodeVarint(-2)).toEqual([0xfe, ...Array(8).fill(0xff), 0x01]);
  });

  it('rejects values that do not fit', () => {
    expect(() => encodeVarint(1n << 64n)).toThrow(RangeError);
    expect(() => encodeVarint(0.5)).toThrow(RangeError);
    expect(() => encodeVarint(2 ** 60)).toThrow(RangeError); // not a safe integer as a number
  });
});

describe('ProtoWriter', () => {
  it('encodes the classic wire-format examples', () => {
    // int32 a = 1 set to 150
    expect(hex(new ProtoWriter().int(1, 150).finish())).toBe('089601');
    // string b = 2 set to "testing"
    expect(hex(new ProtoWriter().string(2, 'testing').finish())).toBe('120774657374696e67');
    // message c = 3 holding { a: 150 }
    expect(hex(new ProtoWriter().message(3, new ProtoWriter().int(1, 150)).finish())).toBe('1a03089601');
    // packed repeated int32 d = 4 with [3, 270, 86942]
    expect(hex(new ProtoWriter().packedInts(4, [3, 270, 86942]).finish())).toBe('2206038e029ea705');
  });

  it('concatenates fields in call order and tracks the length', () => {
    const w = new ProtoWriter().int(1, 150).string(2, 'testing').bool(5, true);
    expect(hex(w.finish())).toBe('089601120774657374696e672801');
    expect(w.length).toBe(14);
  });

  it('keeps large byte payloads by reference through nested messages', () => {
    const payload = new Uint8Array(1000).fill(7);
    const inner = new ProtoWriter().int(1, 1).bytes(2, payload);
    const outer = new ProtoWriter().message(1, inner);
    const chunks = outer.toChunks();
    expect(chunks).toContain(payload);
    const bytes = outer.finish();
    expect(bytes.length).toBe(outer.length);
    // outer tag 0a, length 1005 = ed 07; inner: 08 01, then 12, length 1000 = e8 07, payload
    expect(hex(bytes.subarray(0, 8))).toBe('0aed070801' + '12e807');
    expect(bytes[bytes.length - 1]).toBe(7);
  });

  it('rejects invalid field numbers', () => {
    expect(() => new ProtoWriter().int(0, 1)).toThrow(RangeError);
  });
});

describe('ONNX messages', () => {
  it('encodes a ValueInfoProto with a fixed dimension', () => {
    // name "x"; type.tensor_type { elem_type FLOAT, shape { dim { dim_value 2 } } }
    expect(hex(encodeValueInfo('x', OnnxDataType.FLOAT, [2]).finish())).toBe('0a0178120a0a08080112040a020802');
  });

  it('encodes a symbolic dimension as dim_param', () => {
    // name "y"; elem_type INT64; dim { dim_param "b" }
    expect(hex(encodeValueInfo('y', OnnxDataType.INT64, ['b']).finish())).toBe('0a0179120b0a09080712050a03120162');
  });

  it('encodes a raw-data TensorProto', () => {
    const raw = new Uint8Array([0, 0, 128, 63]); // 1.0f little-endian
    // dims 1, data_type FLOAT, name "t", raw_data
    expect(hex(encodeRawTensor('t', OnnxDataType.FLOAT, [1], raw).finish())).toBe('08011001420174' + '4a040000803f');
  });

  it('writes a float32 table as little-endian raw_data gathered straight into last_hidden_state', () => {
    const values = Float32Array.from([1, 2, 3, 4, 5, 6]);
    const bytes = Buffer.from(encodeGatherEmbeddingModel({ table: { dtype: 'float32', values }, rows: 3, dimension: 2, producerVersion: 't' }).finish());
    const tensor = Buffer.from(encodeRawTensor('embeddings', OnnxDataType.FLOAT, [3, 2], new Uint8Array(values.buffer)).finish());
    expect(bytes.indexOf(tensor)).toBeGreaterThan(0);
    const gather = encodeNode({ opType: 'Gather', name: 'embedding_lookup', inputs: ['embeddings', 'input_ids'], outputs: ['last_hidden_state'], intAttributes: { axis: 0 } });
    expect(bytes.indexOf(Buffer.from(gather.finish()))).toBeGreaterThan(0);
    expect(bytes.includes(Buffer.from('Cast'))).toBe(false);
    expect(() => encodeGatherEmbeddingModel({ table: { dtype: 'float32', values }, rows: 4, dimension: 2, producerVersion: 't' })).toThrow(/expected 4 x 2/);
  });

  it('writes a float16 table as FLOAT16 raw_data (little-endian uint16) and casts the gathered rows to float32', () => {
    const bits = Uint16Array.from([0x3c00, 0xc000, 0x0001, 0x7bff, 0x3555, 0x0000]);
    const bytes = Buffer.from(encodeGatherEmbeddingModel({ table: { dtype: 'float16', bits }, rows: 3, dimension: 2, producerVersion: 't' }).finish());
    // dims 3 2, data_type 10 (FLOAT16), name "embeddings", raw_data: 12 bytes, low byte first
    const tensor = '08030802100a' + '420a' + Buffer.from('embeddings').toString('hex') + '4a0c' + '003c' + '00c0' + '0100' + 'ff7b' + '5535' + '0000';
    expect(hex(encodeRawTensor('embeddings', OnnxDataType.FLOAT16, [3, 2], littleEndianBytes(bits)).finish())).toBe(tensor);
    expect(bytes.indexOf(Buffer.from(tensor, 'hex'))).toBeGreaterThan(0);
    const gather = encodeNode({ opType: 'Gather', name: 'embedding_lookup', inputs: ['embeddings', 'input_ids'], outputs: ['embeddings_float16'], intAttributes: { axis: 0 } });
    const cast = encodeNode({ opType: 'Cast', name: 'to_float32', inputs: ['embeddings_float16'], outputs: ['last_hidden_state'], intAttributes: { to: 1 } });
    expect(bytes.indexOf(Buffer.from(gather.finish()))).toBeGreaterThan(0);
    expect(bytes.indexOf(Buffer.from(cast.finish()))).toBeGreaterThan(bytes.indexOf(Buffer.from(gather.finish())));
    // The graph output stays float32.
    expect(bytes.indexOf(Buffer.from(encodeValueInfo('last_hidden_state', OnnxDataType.FLOAT, ['batch_size', 'sequence_length', 2]).finish()))).toBeGreaterThan(0);
    expect(() => encodeGatherEmbeddingModel({ table: { dtype: 'float16', bits }, rows: 2, dimension: 2, producerVersion: 't' })).toThrow(/6 values, expected 2 x 2/);
  });
});
