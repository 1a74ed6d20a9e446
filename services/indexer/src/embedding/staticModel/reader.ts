/**
 * Reads back the one graph `encodeGatherEmbeddingModel` writes: `last_hidden_state =
 * [Cast<FLOAT>](Gather(embeddings, input_ids))`, returning its table. Anything else (another
 * producer's model, more nodes, other inputs) is `undefined`: such a model is run by onnxruntime.
 *
 * Just enough protocol-buffers decoding for ModelProto → GraphProto → NodeProto / TensorProto
 * (field numbers from onnx.proto, as in onnx.ts).
 */
import { OnnxDataType } from './onnx';

interface StaticTable {
  rows: number;
  dimension: number;
  /** float16 bit patterns (row-major), or float32 values. */
  data: { dtype: 'float16'; bits: Uint16Array } | { dtype: 'float32'; values: Float32Array };
}

interface Field {
  field: number;
  /** Varint value (wire type 0), or the payload's [start, end) in the buffer (wire type 2). */
  value: number;
  start: number;
  end: number;
}

function* fields(buf: Uint8Array, start: number, end: number): Generator<Field> {
  let at = start;
  const varint = (): number => {
    let result = 0;
    let shift = 1;
    for (;;) {
      if (at >= end) throw new Error('truncated varint');
      const byte = buf[at++]!;
      result += (byte & 0x7f) * shift;
      if (byte < 0x80) return result;
      shift *= 128;
    }
  };
  while (at < end) {
    const key = varint();
    const field = Math.floor(key / 8);
    const wire = key % 8;
    if (wire === 0) yield { field, value: varint(), start: 0, end: 0 };
    else if (wire === 2) {
      const length = varint();
      if (at + length > end) throw new Error('truncated field');
      yield { field, value: 0, start: at, end: at + length };
      at += length;
    } else if (wire === 5) at += 4;
    else if (wire === 1) at += 8;
    else throw new Error(`unsupported wire type ${wire}`);
  }
}

const text = (buf: Uint8Array, f: Field) => Buffer.from(buf.buffer, buf.byteOffset + f.start, f.end - f.start).toString('utf8');

interface NodeInfo {
  opType: string;
  inputs: string[];
  outputs: string[];
}

/** Where a static model file holds its table: `byteOffset` from the file's start, row-major, little-endian. */
export interface StaticTableLocation {
  rows: number;
  dimension: number;
  dtype: 'float16' | 'float32';
  byteOffset: number;
}

/** The table of a static model file, or undefined when the graph is not the Gather graph. */
export function readStaticTable(model: Uint8Array): StaticTable | undefined {
  const location = locateStaticTable(model);
  if (!location) return undefined;
  const { rows, dimension, dtype } = location;
  const width = dtype === 'float16' ? 2 : 4;
  // A view of the file's bytes when the table sits at an offset the typed array can start at
  // (no second copy of ~64 MB), else an aligned copy. Little-endian, as ONNX raw_data is and as
  // this (x86-64, arm64) host is.
  const offset = model.byteOffset + location.byteOffset;
  const aligned = offset % width === 0;
  const bytes = rows * dimension * width;
  const bytesOf = aligned ? model : new Uint8Array(bytes);
  if (!aligned) bytesOf.set(model.subarray(location.byteOffset, location.byteOffset + bytes));
  const at = aligned ? offset : 0;
  return {
    rows,
    dimension,
    data:
      dtype === 'float16'
        ? { dtype: 'float16', bits: new Uint16Array(bytesOf.buffer, at, rows * dimension) }
        : { dtype: 'float32', values: new Float32Array(bytesOf.buffer, at, rows * dimension) },
  };
}

/** Where the table of a static model file lies, or undefined when the graph is not the Gather graph. */
export function locateStaticTable(model: Uint8Array): StaticTableLocation | undefined {
  const graph = [...fields(model, 0, model.length)].find((f) => f.field === 7);
  if (!graph) return undefined;
  const nodes: NodeInfo[] = [];
  let table: { dims: number[]; dataType: number; raw: Field | undefined; name: string } | undefined;
  let initializers = 0;
  for (const f of fields(model, graph.start, graph.end)) {
    if (f.field === 1) {
      const node: NodeInfo = { opType: '', inputs: [], outputs: [] };
      for (const n of fields(model, f.start, f.end)) {
        if (n.field === 1) node.inputs.push(text(model, n));
        else if (n.field === 2) node.outputs.push(text(model, n));
        else if (n.field === 4) node.opType = text(model, n);
      }
      nodes.push(node);
    } else if (f.field === 5) {
      initializers += 1;
      const t = { dims: [] as number[], dataType: 0, raw: undefined as Field | undefined, name: '' };
      for (const n of fields(model, f.start, f.end)) {
        if (n.field === 1) t.dims.push(n.value);
        else if (n.field === 2) t.dataType = n.value;
        else if (n.field === 8) t.name = text(model, n);
        else if (n.field === 9) t.raw = n;
      }
      table = t;
    }
  }
  if (!table || initializers !== 1 || table.name !== 'embeddings' || !table.raw || table.dims.length !== 2) return undefined;
  const [gather, cast] = nodes;
  const half = table.dataType === OnnxDataType.FLOAT16;
  if (!half && table.dataType !== OnnxDataType.FLOAT) return undefined;
  if (nodes.length !== (half ? 2 : 1) || gather?.opType !== 'Gather' || gather.inputs.join() !== 'embeddings,input_ids') return undefined;
  if (half && (cast?.opType !== 'Cast' || cast.inputs[0] !== gather.outputs[0] || cast.outputs[0] !== 'last_hidden_state')) return undefined;
  if (!half && gather.outputs[0] !== 'last_hidden_state') return undefined;
  const [rows, dimension] = table.dims as [number, number];
  const width = half ? 2 : 4;
  const bytes = table.raw.end - table.raw.start;
  if (bytes !== rows * dimension * width) return undefined;
  return { rows, dimension, dtype: half ? 'float16' : 'float32', byteOffset: table.raw.start };
}
