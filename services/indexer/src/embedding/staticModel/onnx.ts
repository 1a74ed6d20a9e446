/**
 * Hand-written ONNX serialisation for the one graph the static embedding model needs:
 *
 *   input_ids       int64 [batch, sequence]
 *   attention_mask  int64 [batch, sequence]   (declared for HF-style callers, unused by the graph)
 *   float16 table:  last_hidden_state = Cast<to=FLOAT>(Gather(embeddings, input_ids))  float32 [batch, sequence, dim]
 *   float32 table:  last_hidden_state = Gather(embeddings, input_ids)                  float32 [batch, sequence, dim]
 *
 * Field numbers follow onnx.proto (ModelProto, GraphProto, NodeProto, TensorProto, ...).
 */
import fs from 'node:fs';
import os from 'node:os';

import { ProtoWriter } from './protobuf.js';

/** TensorProto.DataType values used here. */
export const OnnxDataType = { FLOAT: 1, INT64: 7, FLOAT16: 10 } as const;
/** AttributeProto.AttributeType values used here. */
const OnnxAttributeType = { INT: 2 } as const;

// Field numbers from onnx.proto.
const MODEL = { irVersion: 1, producerName: 2, producerVersion: 3, domain: 4, modelVersion: 5, docString: 6, graph: 7, opsetImport: 8, metadataProps: 14 } as const;
const OPSET_ID = { domain: 1, version: 2 } as const;
const STRING_ENTRY = { key: 1, value: 2 } as const;
const GRAPH = { node: 1, name: 2, initializer: 5, docString: 10, input: 11, output: 12 } as const;
const NODE = { input: 1, output: 2, name: 3, opType: 4, attribute: 5, docString: 6, domain: 7 } as const;
const ATTRIBUTE = { name: 1, i: 3, type: 20 } as const;
const TENSOR = { dims: 1, dataType: 2, name: 8, rawData: 9 } as const;
const VALUE_INFO = { name: 1, type: 2 } as const;
const TYPE = { tensorType: 1 } as const;
const TYPE_TENSOR = { elemType: 1, shape: 2 } as const;
const SHAPE = { dim: 1 } as const;
const DIMENSION = { dimValue: 1, dimParam: 2 } as const;

/** A dimension: a fixed size or a symbolic name such as "batch". */
type Dim = number | string;

export function encodeValueInfo(name: string, elemType: number, dims: readonly Dim[]): ProtoWriter {
  const shape = new ProtoWriter();
  for (const d of dims) {
    const dim = new ProtoWriter();
    if (typeof d === 'number') dim.int(DIMENSION.dimValue, d);
    else dim.string(DIMENSION.dimParam, d);
    shape.message(SHAPE.dim, dim);
  }
  const tensorType = new ProtoWriter().int(TYPE_TENSOR.elemType, elemType).message(TYPE_TENSOR.shape, shape);
  const type = new ProtoWriter().message(TYPE.tensorType, tensorType);
  return new ProtoWriter().string(VALUE_INFO.name, name).message(VALUE_INFO.type, type);
}

/** TensorProto with raw_data (little-endian, row-major), as ONNX requires for raw_data. */
export function encodeRawTensor(name: string, dataType: number, dims: readonly number[], rawData: Uint8Array): ProtoWriter {
  const t = new ProtoWriter();
  for (const d of dims) t.int(TENSOR.dims, d);
  t.int(TENSOR.dataType, dataType);
  t.string(TENSOR.name, name);
  t.bytes(TENSOR.rawData, rawData);
  return t;
}

interface NodeSpec {
  opType: string;
  name: string;
  inputs: readonly string[];
  outputs: readonly string[];
  intAttributes?: Readonly<Record<string, number>>;
  docString?: string;
}

export function encodeNode(spec: NodeSpec): ProtoWriter {
  const n = new ProtoWriter();
  for (const input of spec.inputs) n.string(NODE.input, input);
  for (const output of spec.outputs) n.string(NODE.output, output);
  n.string(NODE.name, spec.name);
  n.string(NODE.opType, spec.opType);
  for (const [key, value] of Object.entries(spec.intAttributes ?? {})) {
    n.message(NODE.attribute, new ProtoWriter().string(ATTRIBUTE.name, key).int(ATTRIBUTE.i, value).int(ATTRIBUTE.type, OnnxAttributeType.INT));
  }
  if (spec.docString) n.string(NODE.docString, spec.docString);
  return n;
}

interface GraphSpec {
  name: string;
  nodes: readonly ProtoWriter[];
  initializers: readonly ProtoWriter[];
  inputs: readonly ProtoWriter[];
  outputs: readonly ProtoWriter[];
  docString?: string;
}

export function encodeGraph(spec: GraphSpec): ProtoWriter {
  const g = new ProtoWriter();
  for (const node of spec.nodes) g.message(GRAPH.node, node);
  g.string(GRAPH.name, spec.name);
  for (const init of spec.initializers) g.message(GRAPH.initializer, init);
  if (spec.docString) g.string(GRAPH.docString, spec.docString);
  for (const input of spec.inputs) g.message(GRAPH.input, input);
  for (const output of spec.outputs) g.message(GRAPH.output, output);
  return g;
}

interface ModelSpec {
  irVersion: number;
  opsetVersion: number;
  producerName: string;
  producerVersion: string;
  modelVersion?: number;
  docString?: string;
  graph: ProtoWriter;
  metadata?: Readonly<Record<string, string>>;
}

export function encodeModel(spec: ModelSpec): ProtoWriter {
  const m = new ProtoWriter();
  m.int(MODEL.irVersion, spec.irVersion);
  m.string(MODEL.producerName, spec.producerName);
  m.string(MODEL.producerVersion, spec.producerVersion);
  if (spec.modelVersion !== undefined) m.int(MODEL.modelVersion, spec.modelVersion);
  if (spec.docString) m.string(MODEL.docString, spec.docString);
  m.message(MODEL.graph, spec.graph);
  // Default ("ai.onnx") operator set: empty domain string.
  m.message(MODEL.opsetImport, new ProtoWriter().string(OPSET_ID.domain, '').int(OPSET_ID.version, spec.opsetVersion));
  for (const [key, value] of Object.entries(spec.metadata ?? {})) {
    m.message(MODEL.metadataProps, new ProtoWriter().string(STRING_ENTRY.key, key).string(STRING_ENTRY.value, value));
  }
  return m;
}

/** The bytes of a typed array in little-endian order, without copying on little-endian hosts. */
export function littleEndianBytes(values: Float32Array | Uint16Array): Uint8Array {
  const bytes = new Uint8Array(values.buffer, values.byteOffset, values.byteLength);
  if (os.endianness() === 'LE') return bytes;
  const width = values.BYTES_PER_ELEMENT;
  const swapped = new Uint8Array(bytes.length);
  for (let i = 0; i < bytes.length; i += width) {
    for (let j = 0; j < width; j++) swapped[i + j] = bytes[i + width - 1 - j]!;
  }
  return swapped;
}

export function float32LittleEndian(values: Float32Array): Uint8Array {
  return littleEndianBytes(values);
}

const GATHER_MODEL_IR_VERSION = 8;
const GATHER_MODEL_OPSET = 13;

/** A row-major [rows, dimension] embedding table: float32 values, or binary16 bit patterns. */
export type EmbeddingTable = { dtype: 'float32'; values: Float32Array } | { dtype: 'float16'; bits: Uint16Array };

interface GatherModelSpec {
  table: EmbeddingTable;
  rows: number;
  dimension: number;
  producerVersion: string;
  docString?: string;
  metadata?: Readonly<Record<string, string>>;
}

/**
 * ModelProto for `last_hidden_state = Gather(embeddings, input_ids)`, with a Cast to float32 after
 * the Gather when the table is float16 (opset 13 Gather takes any tensor type; Cast 13 converts
 * float16 to float). The output is float32 either way. The table is referenced, not copied.
 */
export function encodeGatherEmbeddingModel(spec: GatherModelSpec): ProtoWriter {
  const half = spec.table.dtype === 'float16';
  const data = spec.table.dtype === 'float16' ? spec.table.bits : spec.table.values;
  if (data.length !== spec.rows * spec.dimension) {
    throw new Error(`embedding table has ${data.length} values, expected ${spec.rows} x ${spec.dimension}`);
  }
  const nodes = [
    encodeNode({
      opType: 'Gather',
      name: 'embedding_lookup',
      inputs: ['embeddings', 'input_ids'],
      outputs: [half ? 'embeddings_float16' : 'last_hidden_state'],
      intAttributes: { axis: 0 },
    }),
  ];
  if (half) {
    nodes.push(
      encodeNode({
        opType: 'Cast',
        name: 'to_float32',
        inputs: ['embeddings_float16'],
        outputs: ['last_hidden_state'],
        intAttributes: { to: OnnxDataType.FLOAT },
      }),
    );
  }
  const graph = encodeGraph({
    name: 'static_word_embeddings',
    nodes,
    initializers: [
      encodeRawTensor('embeddings', half ? OnnxDataType.FLOAT16 : OnnxDataType.FLOAT, [spec.rows, spec.dimension], littleEndianBytes(data)),
    ],
    inputs: [
      encodeValueInfo('input_ids', OnnxDataType.INT64, ['batch_size', 'sequence_length']),
      encodeValueInfo('attention_mask', OnnxDataType.INT64, ['batch_size', 'sequence_length']),
    ],
    outputs: [
      encodeValueInfo('last_hidden_state', OnnxDataType.FLOAT, ['batch_size', 'sequence_length', spec.dimension]),
    ],
    docString:
      `Static word embeddings: last_hidden_state[b, s] = ${half ? 'float(embeddings[input_ids[b, s]]), from a float16 table' : 'embeddings[input_ids[b, s]]'}. ` +
      'attention_mask is accepted for compatibility with encoder-style callers and not used.',
  });
  return encodeModel({
    irVersion: GATHER_MODEL_IR_VERSION,
    opsetVersion: GATHER_MODEL_OPSET,
    producerName: 'memex-static-model-builder',
    producerVersion: spec.producerVersion,
    modelVersion: 1,
    ...(spec.docString ? { docString: spec.docString } : {}),
    graph,
    ...(spec.metadata ? { metadata: spec.metadata } : {}),
  });
}

/** Streams an encoded message to `filePath` chunk by chunk. Returns the byte count. */
export function writeProtoFile(filePath: string, message: ProtoWriter): number {
  const fd = fs.openSync(filePath, 'w');
  let written = 0;
  try {
    for (const chunk of message.toChunks()) {
      let offset = 0;
      while (offset < chunk.length) {
        offset += fs.writeSync(fd, chunk, offset, chunk.length - offset);
      }
      written += chunk.length;
    }
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  return written;
}
