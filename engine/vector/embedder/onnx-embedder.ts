import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Embedder, OnnxEmbedderOptions } from './embedder.js';
import { EmbedBatcher } from './embed-batcher.js';
import { l2Normalize, maskedMeanPool } from './mean-pooling.js';
import { CONFIG_FILE, DEFAULT_BATCH_SIZE, DEFAULT_MAX_TOKENS, MODEL_ONNX_FILE, readJsonIfPresent, SENTENCE_BERT_CONFIG_FILE } from './model-files.js';
import { OnnxSessionWorker, type Int64Feed } from './onnx-session-worker.js';
import { loadWordPieceTokenizer, type WordPieceTokenizer } from './wordpiece-tokenizer.js';

/** The inputs a BERT-style export declares; the embedder feeds exactly those the model has. */
const KNOWN_INPUTS = ['input_ids', 'attention_mask', 'token_type_ids'] as const;
/** Token-level output to mean-pool; a model that pools itself may offer sentence_embedding instead. */
const TOKEN_OUTPUT = 'last_hidden_state';
const POOLED_OUTPUT = 'sentence_embedding';
const ID_HASH_HEX_CHARS = 12;

/**
 * The real model path: tokenizer -> onnxruntime (in a worker thread, batched) -> attention-masked
 * mean pooling -> L2 normalisation, as sentence-transformers computes all-MiniLM-L6-v2.
 * @throws Error when the model files are missing or invalid.
 */
export async function createOnnxEmbedder(options: OnnxEmbedderOptions): Promise<OnnxEmbedder> {
  return OnnxEmbedder.create(options);
}

export class OnnxEmbedder implements Embedder {
  readonly id: string;
  readonly kind = 'onnx' as const;
  readonly dims: number;
  readonly maxTokens: number;
  #tokenizer: WordPieceTokenizer;
  #session: OnnxSessionWorker;
  #output: string;
  #padId: number;
  #batcher: EmbedBatcher<number[]>;
  #closed: Error | null = null;

  private constructor(init: { id: string; dims: number; maxTokens: number; batchSize: number; tokenizer: WordPieceTokenizer; session: OnnxSessionWorker; output: string }) {
    this.id = init.id;
    this.dims = init.dims;
    this.maxTokens = init.maxTokens;
    this.#tokenizer = init.tokenizer;
    this.#session = init.session;
    this.#output = init.output;
    this.#padId = init.tokenizer.tokenId('[PAD]') ?? 0;
    this.#batcher = new EmbedBatcher({ batchSize: init.batchSize, run: (batch) => this.#run(batch), lengthOf: (ids) => ids.length });
    init.session.onStop((err) => {
      this.#closed ??= err;
      void this.#batcher.close(err);
    });
  }

  static async create(options: OnnxEmbedderOptions): Promise<OnnxEmbedder> {
    const { modelDir } = options;
    const modelPath = join(modelDir, MODEL_ONNX_FILE);
    const size = await stat(modelPath).then(
      (s) => (s.isFile() ? s.size : -1),
      () => -1,
    );
    if (size <= 0) throw new Error(size === 0 ? `${modelPath} is empty` : `no ${MODEL_ONNX_FILE} in ${modelDir}`);
    const batchSize = options.batchSize ?? DEFAULT_BATCH_SIZE;
    if (!Number.isInteger(batchSize) || batchSize < 1) throw new Error(`batchSize must be a positive integer, got ${batchSize}`);

    const tokenizer = await loadWordPieceTokenizer(modelDir);
    const maxTokens = await resolveMaxTokens(modelDir, options.maxTokens, tokenizer.specialTokenCount);
    const hashing = sha256Hex(modelPath);
    hashing.catch(() => {}); // awaited below; this only keeps an early exit from leaving it unhandled
    const session = await OnnxSessionWorker.start(modelPath, {
      ...(options.intraOpThreads !== undefined ? { intraOpNumThreads: options.intraOpThreads } : {}),
      interOpNumThreads: 1,
      graphOptimizationLevel: 'all',
      executionMode: 'sequential',
      // ORT would print failures to stderr itself; they reach the caller as errors instead.
      logSeverityLevel: 4,
      // No CPU memory arena: ONNX Runtime's arena keeps what a run's tensors took for good and
      // grows with every new input shape (batch x sequence), so one large batch left hundreds of
      // MiB resident that no budget counts (the memory governor then took it out of the page
      // cache). Without it each run's memory is freed when the run ends. Measured with a model of
      // 1024 dimensions, 5 batches of 32 x 256 tokens: +306 MiB resident afterwards with the
      // arena, +40 MiB without (test/vector/embedder-onnx.test.ts checks the bound).
      enableCpuMemArena: false,
    });
    try {
      const { inputNames, outputNames } = session.info;
      const unknown = inputNames.filter((n) => !(KNOWN_INPUTS as readonly string[]).includes(n));
      if (unknown.length > 0 || !inputNames.includes('input_ids')) {
        throw new Error(`${modelPath} has inputs [${inputNames.join(', ')}]; expected input_ids and optionally attention_mask, token_type_ids`);
      }
      const output = outputNames.includes(TOKEN_OUTPUT) ? TOKEN_OUTPUT : outputNames.includes(POOLED_OUTPUT) ? POOLED_OUTPUT : outputNames[0];
      if (output === undefined) throw new Error(`${modelPath} has no outputs`);
      // One run before serving: proves the model runs and tells its vector length.
      const probe = await runSession(session, output, [tokenizer.encode('', maxTokens)], tokenizer.tokenId('[PAD]') ?? 0);
      const dims = probe[0]!.length;
      // The id names the model's bytes, not where they sit: moving or renaming the directory
      // must not make every stored record look stale (and re-embed it).
      const hash = (await hashing).slice(0, ID_HASH_HEX_CHARS);
      const id = options.modelName === undefined ? `onnx:${hash}` : `onnx:${options.modelName}:${hash}`;
      return new OnnxEmbedder({ id, dims, maxTokens, batchSize, tokenizer, session, output });
    } catch (err) {
      await session.close();
      throw err;
    }
  }

  /** Session runs made to serve embed() calls (the load-time probe is not counted). */
  get runCount(): number {
    return this.#batcher.runs;
  }

  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    if (this.#closed !== null) throw this.#closed;
    // Tokenising here (cheap, synchronous) lets the batcher sort by token count.
    const encoded = texts.map((t) => this.#tokenizer.encode(t, this.maxTokens));
    return this.#batcher.submit(encoded);
  }

  async close(): Promise<void> {
    this.#closed ??= new Error('the embedder is closed');
    await this.#batcher.close(this.#closed);
    await this.#session.close();
  }

  #run(batch: number[][]): Promise<Float32Array[]> {
    return runSession(this.#session, this.#output, batch, this.#padId);
  }
}

/** One padded batch through the session, pooled (3-D output) or taken as is (2-D), then L2-normalised. */
async function runSession(session: OnnxSessionWorker, output: string, batch: readonly number[][], padId: number): Promise<Float32Array[]> {
  const rows = batch.length;
  const sequence = Math.max(...batch.map((ids) => ids.length));
  const inputIds = new BigInt64Array(rows * sequence).fill(BigInt(padId));
  const mask = new BigInt64Array(rows * sequence);
  batch.forEach((ids, r) => {
    ids.forEach((id, s) => {
      inputIds[r * sequence + s] = BigInt(id);
      mask[r * sequence + s] = 1n;
    });
  });
  const all: Record<string, Int64Feed> = {
    input_ids: { data: inputIds, dims: [rows, sequence] },
    attention_mask: { data: mask, dims: [rows, sequence] },
    token_type_ids: { data: new BigInt64Array(rows * sequence), dims: [rows, sequence] },
  };
  const feeds = Object.fromEntries(session.info.inputNames.map((n) => [n, all[n]!]));
  const { data, dims } = await session.run(feeds, output);
  if (dims.length === 3 && dims[0] === rows && dims[1] === sequence) {
    return maskedMeanPool(data, mask, rows, sequence, dims[2]!).map(l2Normalize);
  }
  if (dims.length === 2 && dims[0] === rows) {
    const width = dims[1]!;
    return Array.from({ length: rows }, (_, r) => l2Normalize(data.slice(r * width, (r + 1) * width)));
  }
  throw new Error(`output ${output} has shape [${dims.join(', ')}] for a batch of ${rows}x${sequence}; expected [batch, sequence, dims] or [batch, dims]`);
}

/** options.maxTokens, else sentence_bert_config.json's max_seq_length, else 256; never beyond config.json's max_position_embeddings. */
async function resolveMaxTokens(modelDir: string, requested: number | undefined, specialTokens: number): Promise<number> {
  const stConfig = await readJsonIfPresent(join(modelDir, SENTENCE_BERT_CONFIG_FILE));
  const modelConfig = await readJsonIfPresent(join(modelDir, CONFIG_FILE));
  const fromConfig = stConfig?.['max_seq_length'];
  let maxTokens = requested ?? (typeof fromConfig === 'number' ? fromConfig : DEFAULT_MAX_TOKENS);
  const positions = modelConfig?.['max_position_embeddings'];
  if (typeof positions === 'number' && positions > 0) maxTokens = Math.min(maxTokens, positions);
  if (!Number.isInteger(maxTokens) || maxTokens <= specialTokens) {
    throw new Error(`maxTokens must be an integer above ${specialTokens} (the special tokens), got ${maxTokens}`);
  }
  return maxTokens;
}

function sha256Hex(path: string): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    const hash = createHash('sha256');
    createReadStream(path)
      .on('data', (chunk) => hash.update(chunk))
      .on('error', (err) => reject(new Error(`cannot read ${path}: ${err.message}`)))
      .on('end', () => resolvePromise(hash.digest('hex')));
  });
}
