import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { createFallbackEmbedder, FALLBACK_EMBEDDER_ID } from './fallback-embedder.js';
import { MODEL_ONNX_FILE } from './model-files.js';
import { createOnnxEmbedder } from './onnx-embedder.js';

/** Turns texts into unit vectors. One instance per process; safe to call concurrently. */
export interface Embedder {
  /**
   * Stable identity stored with each record: 'fallback:hashed-ngrams-v1' or
   * 'onnx:<model name>:<first 12 hex of the SHA-256 of model.onnx>'. A record whose id differs
   * from the active embedder's needs re-embedding.
   */
  readonly id: string;
  readonly kind: 'onnx' | 'fallback';
  /** Length of every vector: 384 for all-MiniLM-L6-v2 and for the fallback; what the model gives otherwise. */
  readonly dims: number;
  /** Tokens read per text, special tokens included (256 for MiniLM); the fallback reads up to 8192 words. */
  readonly maxTokens: number;
  /**
   * Embeds texts; each result is an L2-normalised Float32Array(dims), in input order. On the ONNX
   * path, concurrent calls are coalesced into batches of up to batchSize texts.
   */
  embed(texts: readonly string[]): Promise<Float32Array[]>;
  /** Finishes the embed() calls already made, refuses new ones, releases the model. Idempotent. */
  close(): Promise<void>;
}

export interface EmbedderChoice {
  embedder: Embedder;
  /** Why this embedder, for the startup log, e.g. 'model files found in ./models/all-MiniLM-L6-v2'. */
  reason: string;
}

export interface OnnxEmbedderOptions {
  modelDir: string;
  /** Most texts per session run (default 32). */
  batchSize?: number;
  /** ORT intra-op threads per run (default: ORT's choice, the number of physical cores). */
  intraOpThreads?: number;
  /** Truncation length, special tokens included (default: sentence_bert_config.json's max_seq_length, else 256). */
  maxTokens?: number;
  /** A name in the embedder id (default: none, the id is `onnx:<hash of model.onnx>`). */
  modelName?: string;
}

/**
 * The ONNX embedder when modelDir holds model.onnx, else the fallback. A model that is present
 * but cannot be loaded is an error, not a fallback: switching embedders re-embeds every stored
 * text, which a damaged download must not set off.
 * @throws Error naming the model directory and what is wrong with it
 */
export async function loadEmbedder(options: OnnxEmbedderOptions): Promise<EmbedderChoice> {
  const modelPath = join(options.modelDir, MODEL_ONNX_FILE);
  const present = await stat(modelPath).then(
    (s) => s.isFile() && s.size > 0,
    () => false,
  );
  if (!present) {
    return {
      embedder: createFallbackEmbedder(),
      reason: `no ${MODEL_ONNX_FILE} in ${options.modelDir}: using the fallback embedder ${FALLBACK_EMBEDDER_ID} (lexical; run \`npm run model:fetch\` for all-MiniLM-L6-v2)`,
    };
  }
  try {
    const embedder = await createOnnxEmbedder(options);
    return { embedder, reason: `model files found in ${options.modelDir}: using ${embedder.id} (${embedder.dims} dims, max ${embedder.maxTokens} tokens)` };
  } catch (err) {
    throw new Error(
      `the embedding model in ${options.modelDir} cannot be loaded (${err instanceof Error ? err.message : String(err)}); fix or remove ${modelPath} (without it the service uses the fallback embedder)`,
      { cause: err },
    );
  }
}
