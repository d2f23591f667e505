import { readFile } from 'node:fs/promises';

/*
 * The model directory's layout: what `npm run model:fetch` writes and what the ONNX embedder reads.
 * Files come from the Hugging Face repo sentence-transformers/all-MiniLM-L6-v2.
 */

export const DEFAULT_MODEL_DIR = './models/all-MiniLM-L6-v2';
export const DEFAULT_MODEL_BASE_URL = 'https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2/resolve/main/';

export const MODEL_ONNX_FILE = 'model.onnx';
export const TOKENIZER_JSON_FILE = 'tokenizer.json';
export const TOKENIZER_CONFIG_FILE = 'tokenizer_config.json';
export const VOCAB_FILE = 'vocab.txt';
export const CONFIG_FILE = 'config.json';
export const SPECIAL_TOKENS_MAP_FILE = 'special_tokens_map.json';
/** sentence-transformers' own config: max_seq_length (256 for MiniLM), the truncation length it uses. */
export const SENTENCE_BERT_CONFIG_FILE = 'sentence_bert_config.json';

/** Local name -> path in the model repo. model.onnx is the repo's fp32 export under onnx/. */
export const MODEL_FILES: ReadonlyArray<{ name: string; remotePath: string }> = [
  { name: MODEL_ONNX_FILE, remotePath: 'onnx/model.onnx' },
  { name: TOKENIZER_JSON_FILE, remotePath: TOKENIZER_JSON_FILE },
  { name: TOKENIZER_CONFIG_FILE, remotePath: TOKENIZER_CONFIG_FILE },
  { name: VOCAB_FILE, remotePath: VOCAB_FILE },
  { name: CONFIG_FILE, remotePath: CONFIG_FILE },
  { name: SPECIAL_TOKENS_MAP_FILE, remotePath: SPECIAL_TOKENS_MAP_FILE },
  { name: SENTENCE_BERT_CONFIG_FILE, remotePath: SENTENCE_BERT_CONFIG_FILE },
];

/** sentence-transformers' max_seq_length for all-MiniLM-L6-v2, used when the directory does not say. */
export const DEFAULT_MAX_TOKENS = 256;
export const DEFAULT_BATCH_SIZE = 32;

export type JsonObject = Record<string, unknown>;

/** A file's text, or undefined when it does not exist. @throws Error on other read failures. */
export async function readTextIfPresent(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new Error(`cannot read ${path}: ${(err as Error).message}`);
  }
}

/** A file's JSON object, or undefined when it does not exist. @throws Error when it is not a JSON object. */
export async function readJsonIfPresent(path: string): Promise<JsonObject | undefined> {
  const text = await readTextIfPresent(path);
  if (text === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new Error(`${path} is not valid JSON: ${(err as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error(`${path} is not a JSON object`);
  return value as JsonObject;
}
