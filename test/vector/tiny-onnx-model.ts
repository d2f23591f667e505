import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { seededRandom } from '../helpers/random.js';

/*
 * A tiny BERT-shaped ONNX model, built byte by byte, so the ONNX embedding path can be tested end
 * to end without the real MiniLM files. The protobuf encoder below covers only the ONNX messages
 * and fields the model needs (onnx.proto3 field numbers noted at each use).
 *
 * Graph (opset 13):
 *   last_hidden_state[b,s,:] = words[input_ids[b,s]] + types[token_type_ids[b,s]] + attention_mask[b,s] * bias
 * The [PAD] row of `words` is large on purpose: a pooling that ignores attention_mask drifts far
 * from the reference, and the bias term proves attention_mask is fed as given.
 * With output 'sentence_embedding' the model instead emits mean(words[input_ids], axis 1), 2-D.
 */

// ---- protobuf wire format --------------------------------------------------------------------

type Field = Uint8Array;

function varint(value: number | bigint): number[] {
  let v = BigInt.asUintN(64, BigInt(value));
  const out: number[] = [];
  while (v >= 0x80n) {
    out.push(Number(v & 0x7fn) | 0x80);
    v >>= 7n;
  }
  out.push(Number(v));
  return out;
}

const concat = (parts: readonly Uint8Array[]): Uint8Array => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
};

/** Wire type 0. */
const vint = (field: number, value: number | bigint): Field => Uint8Array.from([...varint(field << 3), ...varint(value)]);
/** Wire type 2: bytes, strings and embedded messages. */
const bytes = (field: number, payload: Uint8Array): Field => concat([Uint8Array.from([...varint((field << 3) | 2), ...varint(payload.length)]), payload]);
const str = (field: number, s: string): Field => bytes(field, new TextEncoder().encode(s));
const msg = (field: number, ...fields: Field[]): Field => bytes(field, concat(fields));

// ---- ONNX messages ---------------------------------------------------------------------------

const FLOAT = 1;
const INT64 = 7;

/** TensorProto: dims=1, data_type=2, name=8, raw_data=9 (little-endian). */
function tensor(field: number, name: string, dims: readonly number[], data: Float32Array | BigInt64Array): Field {
  const type = data instanceof Float32Array ? FLOAT : INT64;
  const raw = new Uint8Array(data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength));
  return msg(field, ...dims.map((d) => vint(1, d)), vint(2, type), str(8, name), bytes(9, raw));
}

/** ValueInfoProto{name=1, type=2: TypeProto{tensor_type=1: {elem_type=1, shape=2: {dim=1: {dim_value=1 | dim_param=2}}}}}. */
function valueInfo(field: number, name: string, elemType: number, dims: ReadonlyArray<string | number>): Field {
  const dimFields = dims.map((d) => msg(1, typeof d === 'number' ? vint(1, d) : str(2, d)));
  return msg(field, str(1, name), msg(2, msg(1, vint(1, elemType), msg(2, ...dimFields))));
}

/** NodeProto: input=1, output=2, name=3, op_type=4, attribute=5 (AttributeProto{name=1, i=3, ints=8, type=20}). */
function node(opType: string, inputs: readonly string[], outputs: readonly string[], attrs: Field[] = []): Field {
  return msg(1, ...inputs.map((i) => str(1, i)), ...outputs.map((o) => str(2, o)), str(3, `${opType}_${outputs[0]}`), str(4, opType), ...attrs);
}
const intAttr = (name: string, value: number): Field => msg(5, str(1, name), vint(3, value), vint(20, 2));
const intsAttr = (name: string, values: readonly number[]): Field => msg(5, str(1, name), ...values.map((v) => vint(8, v)), vint(20, 7));

// ---- the tiny model --------------------------------------------------------------------------

/** The vocabulary, in id order: BERT's special tokens first, then whole words and ## pieces. */
export const TINY_VOCAB: readonly string[] = [
  '[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]',
  'the', 'quick', 'brown', 'fox', 'jumps', 'over', 'lazy', 'dog',
  'hello', 'world', 'cafe', 'naive', 'resume',
  'un', '##believ', '##able', 'play', '##ing', '##ed', '##s',
  ',', '.', '!', '?', "'", '-', 's',
  '中', '文', 'a', 'cat', 'sat', 'on', 'mat', 'ab', '##c',
];

export interface TinyModel {
  dir: string;
  vocab: readonly string[];
  dims: number;
  /** Row-major [vocab.length, dims]. */
  words: Float32Array;
  /** Row-major [2, dims]. */
  types: Float32Array;
  bias: Float32Array;
  output: 'last_hidden_state' | 'sentence_embedding';
}

export interface TinyModelOptions {
  dims?: number;
  seed?: number;
  output?: 'last_hidden_state' | 'sentence_embedding';
  /** Which tokenizer files to write: vocab.txt always; tokenizer.json (+ tokenizer_config.json) unless false. */
  tokenizerJson?: boolean;
  /** Extra JSON files (name -> content) written as they are, e.g. sentence_bert_config.json. */
  extraFiles?: Record<string, unknown>;
}

/** Writes model.onnx, vocab.txt and (by default) tokenizer.json + tokenizer_config.json + config.json into dir. */
export function writeTinyModel(dir: string, options: TinyModelOptions = {}): TinyModel {
  const dims = options.dims ?? 8;
  const output = options.output ?? 'last_hidden_state';
  const rand = seededRandom(options.seed ?? 7);
  const vocab = TINY_VOCAB;
  const words = Float32Array.from({ length: vocab.length * dims }, () => rand() * 2 - 1);
  for (let d = 0; d < dims; d++) words[d] = 25 + d; // [PAD]: far from everything else
  const types = Float32Array.from({ length: 2 * dims }, () => (rand() * 2 - 1) / 4);
  const bias = Float32Array.from({ length: dims }, () => rand() * 2 - 1);

  writeFileSync(join(dir, 'model.onnx'), buildTinyOnnx({ dims, vocabSize: vocab.length, words, types, bias, output }));
  writeFileSync(join(dir, 'vocab.txt'), `${vocab.join('\n')}\n`);
  if (options.tokenizerJson !== false) {
    writeFileSync(join(dir, 'tokenizer.json'), JSON.stringify(minilmStyleTokenizerJson(vocab)));
    writeFileSync(join(dir, 'tokenizer_config.json'), JSON.stringify(MINILM_STYLE_TOKENIZER_CONFIG));
  }
  writeFileSync(join(dir, 'config.json'), JSON.stringify({ model_type: 'bert', hidden_size: dims, max_position_embeddings: 512, vocab_size: vocab.length }));
  for (const [name, content] of Object.entries(options.extraFiles ?? {})) writeFileSync(join(dir, name), JSON.stringify(content));
  return { dir, vocab, dims, words, types, bias, output };
}

function buildTinyOnnx(m: { dims: number; vocabSize: number; words: Float32Array; types: Float32Array; bias: Float32Array; output: TinyModel['output'] }): Uint8Array {
  const ids = ['batch', 'sequence'];
  const inputs = [
    valueInfo(11, 'input_ids', INT64, ids),
    valueInfo(11, 'attention_mask', INT64, ids),
    valueInfo(11, 'token_type_ids', INT64, ids),
  ];
  const initializers = [tensor(5, 'words', [m.vocabSize, m.dims], m.words)];
  if (m.output === 'last_hidden_state') {
    initializers.push(tensor(5, 'types', [2, m.dims], m.types), tensor(5, 'bias', [m.dims], m.bias), tensor(5, 'last_axis', [1], BigInt64Array.from([-1n])));
  }
  const nodes =
    m.output === 'last_hidden_state'
      ? [
          node('Gather', ['words', 'input_ids'], ['w'], [intAttr('axis', 0)]),
          node('Gather', ['types', 'token_type_ids'], ['t'], [intAttr('axis', 0)]),
          node('Add', ['w', 't'], ['wt']),
          node('Cast', ['attention_mask'], ['mask_f'], [intAttr('to', FLOAT)]),
          node('Unsqueeze', ['mask_f', 'last_axis'], ['mask_3d']),
          node('Mul', ['mask_3d', 'bias'], ['mb']),
          node('Add', ['wt', 'mb'], ['last_hidden_state']),
        ]
      : [
          node('Gather', ['words', 'input_ids'], ['w'], [intAttr('axis', 0)]),
          node('ReduceMean', ['w'], ['sentence_embedding'], [intsAttr('axes', [1]), intAttr('keepdims', 0)]),
        ];
  const out =
    m.output === 'last_hidden_state'
      ? valueInfo(12, 'last_hidden_state', FLOAT, ['batch', 'sequence', m.dims])
      : valueInfo(12, 'sentence_embedding', FLOAT, ['batch', m.dims]);
  // GraphProto: node=1, name=2, initializer=5, input=11, output=12.
  const graph = msg(7, ...nodes, str(2, 'tiny-bert'), ...initializers, ...inputs, out);
  // ModelProto: ir_version=1, producer_name=2, graph=7, opset_import=8 {domain=1, version=2}.
  return concat([vint(1, 8), str(2, 'tetradb-test'), graph, msg(8, str(1, ''), vint(2, 13))]);
}

/**
 * A tokenizer.json shaped like all-MiniLM-L6-v2's own file (BertNormalizer, BertPreTokenizer,
 * WordPiece, [CLS] $A [SEP] template), written out by hand rather than by the code under test.
 * Its truncation (128) and fixed padding mirror the real file too: sentence-transformers ignores
 * both (it truncates at max_seq_length and pads per batch), and so must we.
 */
export function minilmStyleTokenizerJson(vocab: readonly string[]): Record<string, unknown> {
  const id = (t: string): number => vocab.indexOf(t);
  const special = (t: string) => ({ id: id(t), content: t, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true });
  return {
    version: '1.0',
    truncation: { direction: 'Right', max_length: 128, strategy: 'LongestFirst', stride: 0 },
    padding: { strategy: { Fixed: 128 }, direction: 'Right', pad_to_multiple_of: null, pad_id: 0, pad_type_id: 0, pad_token: '[PAD]' },
    added_tokens: ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'].map(special),
    normalizer: { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: true },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: {
      type: 'TemplateProcessing',
      single: [{ SpecialToken: { id: '[CLS]', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '[SEP]', type_id: 0 } }],
      pair: [
        { SpecialToken: { id: '[CLS]', type_id: 0 } },
        { Sequence: { id: 'A', type_id: 0 } },
        { SpecialToken: { id: '[SEP]', type_id: 0 } },
        { Sequence: { id: 'B', type_id: 1 } },
        { SpecialToken: { id: '[SEP]', type_id: 1 } },
      ],
      special_tokens: {
        '[CLS]': { id: '[CLS]', ids: [id('[CLS]')], tokens: ['[CLS]'] },
        '[SEP]': { id: '[SEP]', ids: [id('[SEP]')], tokens: ['[SEP]'] },
      },
    },
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    model: {
      type: 'WordPiece',
      unk_token: '[UNK]',
      continuing_subword_prefix: '##',
      max_input_chars_per_word: 100,
      vocab: Object.fromEntries(vocab.map((t, i) => [t, i])),
    },
  };
}

export const MINILM_STYLE_TOKENIZER_CONFIG = {
  clean_up_tokenization_spaces: true,
  cls_token: '[CLS]',
  do_basic_tokenize: true,
  do_lower_case: true,
  mask_token: '[MASK]',
  model_max_length: 512,
  never_split: null,
  pad_token: '[PAD]',
  sep_token: '[SEP]',
  strip_accents: null,
  tokenize_chinese_chars: true,
  tokenizer_class: 'BertTokenizer',
  unk_token: '[UNK]',
};

/** The reference embedding, in plain JS from the same weights: masked mean over the real tokens, then L2. */
export function tinyReferenceEmbedding(model: TinyModel, ids: readonly number[]): Float32Array {
  const sum = new Float64Array(model.dims);
  for (const tokenId of ids) {
    for (let d = 0; d < model.dims; d++) {
      const w = model.words[tokenId * model.dims + d] ?? 0;
      sum[d]! += model.output === 'last_hidden_state' ? w + (model.types[d] ?? 0) + (model.bias[d] ?? 0) : w;
    }
  }
  const mean = Array.from(sum, (v) => v / ids.length);
  const norm = Math.hypot(...mean);
  return Float32Array.from(mean, (v) => v / norm);
}
