/**
 * A tiny cross-encoder for tests and the rerank benchmark: a BERT-layout directory whose ONNX
 * graph scores a (query, passage) pair by how many distinct words they share
 * (logit = 2·shared − 1), over a fixed small vocabulary. Built the way the static embedder is.
 */
import fs from 'node:fs';
import path from 'node:path';
import {
  OnnxDataType,
  encodeGraph,
  encodeModel,
  encodeNode,
  encodeRawTensor,
  encodeValueInfo,
  float32LittleEndian,
  writeProtoFile,
} from '../embedding/staticModel/onnx';
import { FIRST_WORD_ID, SPECIAL_TOKENS, tokenizerConfigJson, tokenizerJson } from '../embedding/staticModel/tokenizer';

export const TINY_CROSS_ENCODER_WORDS = ['the', 'cat', 'sat', 'on', 'mat', 'stock', 'market', 'fell', 'shares', 'food', 'for', 'planes', 'pilots', 'and'];

function int64(values: number[]): Uint8Array {
  const out = new BigInt64Array(values.map(BigInt));
  return new Uint8Array(out.buffer);
}

/** Writes the tiny cross-encoder to `dir`; `words` extends the vocabulary. */
export function buildTinyCrossEncoder(dir: string, words: readonly string[] = TINY_CROSS_ENCODER_WORDS): void {
  const vocab = SPECIAL_TOKENS.length + words.length;
  // One-hot rows for words; special tokens map to zero so [CLS]/[SEP] never count as shared.
  const table = new Float32Array(vocab * vocab);
  for (let id = FIRST_WORD_ID; id < vocab; id++) table[id * vocab + id] = 1;
  const scalar = (name: string, v: number) => encodeRawTensor(name, OnnxDataType.FLOAT, [], float32LittleEndian(Float32Array.of(v)));
  const node = (opType: string, inputs: string[], output: string, intAttributes?: Record<string, number>) =>
    encodeNode({ opType, name: output, inputs, outputs: [output], ...(intAttributes ? { intAttributes } : {}) });
  const graph = encodeGraph({
    name: 'tiny_cross_encoder',
    nodes: [
      node('Gather', ['table', 'input_ids'], 'onehot', { axis: 0 }),
      node('Cast', ['attention_mask'], 'mask', { to: OnnxDataType.FLOAT }),
      node('Cast', ['token_type_ids'], 'segment', { to: OnnxDataType.FLOAT }),
      node('Mul', ['segment', 'mask'], 'passage_mask'),
      node('Sub', ['one', 'segment'], 'query_segment'),
      node('Mul', ['query_segment', 'mask'], 'query_mask'),
      node('Unsqueeze', ['query_mask', 'last_axis'], 'query_mask3'),
      node('Unsqueeze', ['passage_mask', 'last_axis'], 'passage_mask3'),
      node('Mul', ['onehot', 'query_mask3'], 'query_words'),
      node('Mul', ['onehot', 'passage_mask3'], 'passage_words'),
      node('ReduceSum', ['query_words', 'sequence_axis'], 'query_counts', { keepdims: 0 }),
      node('ReduceSum', ['passage_words', 'sequence_axis'], 'passage_counts', { keepdims: 0 }),
      node('Min', ['query_counts', 'one'], 'query_bag'),
      node('Min', ['passage_counts', 'one'], 'passage_bag'),
      node('Min', ['query_bag', 'passage_bag'], 'shared_words'),
      node('ReduceSum', ['shared_words', 'last_axis'], 'shared', { keepdims: 1 }),
      node('Mul', ['shared', 'weight'], 'scaled'),
      node('Add', ['scaled', 'bias'], 'logits'),
    ],
    initializers: [
      encodeRawTensor('table', OnnxDataType.FLOAT, [vocab, vocab], float32LittleEndian(table)),
      scalar('one', 1),
      scalar('weight', 2),
      scalar('bias', -1),
      encodeRawTensor('last_axis', OnnxDataType.INT64, [1], int64([-1])),
      encodeRawTensor('sequence_axis', OnnxDataType.INT64, [1], int64([1])),
    ],
    inputs: [
      encodeValueInfo('input_ids', OnnxDataType.INT64, ['batch_size', 'sequence_length']),
      encodeValueInfo('attention_mask', OnnxDataType.INT64, ['batch_size', 'sequence_length']),
      encodeValueInfo('token_type_ids', OnnxDataType.INT64, ['batch_size', 'sequence_length']),
    ],
    outputs: [encodeValueInfo('logits', OnnxDataType.FLOAT, ['batch_size', 1])],
  });
  fs.mkdirSync(path.join(dir, 'onnx'), { recursive: true });
  writeProtoFile(path.join(dir, 'onnx', 'model.onnx'), encodeModel({ irVersion: 8, opsetVersion: 13, producerName: 'memex-test', producerVersion: '1', graph }));
  const config = {
    model_type: 'bert',
    architectures: ['BertForSequenceClassification'],
    num_labels: 1,
    id2label: { 0: 'LABEL_0' },
    label2id: { LABEL_0: 0 },
    vocab_size: vocab,
  };
  fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify(config));
  fs.writeFileSync(path.join(dir, 'tokenizer.json'), tokenizerJson({ words, modelMaxLength: 512 }));
  fs.writeFileSync(path.join(dir, 'tokenizer_config.json'), tokenizerConfigJson({ modelMaxLength: 512 }));
}
