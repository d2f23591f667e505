import { parseArgs } from 'node:util';
import { DEFAULT_MODEL_BASE_URL, DEFAULT_MODEL_DIR, fetchModel } from '../engine/vector/embedder/index.js';

/*
 * `npm run model:fetch [-- --dir <dir>] [--base-url <url>]`: downloads all-MiniLM-L6-v2 (ONNX
 * export and tokenizer files) into the embedding model directory, where the internet is reachable.
 * The directory defaults to TETRA_EMBEDDING_MODEL_DIR, then ./models/all-MiniLM-L6-v2; the source
 * to TETRA_MODEL_BASE_URL, then the Hugging Face repo. Files already there are kept.
 */
async function main(): Promise<void> {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    options: { dir: { type: 'string' }, 'base-url': { type: 'string' }, help: { type: 'boolean', short: 'h' } },
    strict: true,
  });
  if (values.help === true) {
    process.stdout.write('usage: npm run model:fetch -- [--dir <model dir>] [--base-url <url>]\n');
    return;
  }
  const modelDir = values.dir ?? process.env['TETRA_EMBEDDING_MODEL_DIR'] ?? DEFAULT_MODEL_DIR;
  const baseUrl = values['base-url'] ?? process.env['TETRA_MODEL_BASE_URL'] ?? DEFAULT_MODEL_BASE_URL;
  process.stdout.write(`fetching the embedding model into ${modelDir} from ${baseUrl}\n`);
  await fetchModel({ modelDir, baseUrl, log: (line) => process.stdout.write(`  ${line}\n`) });
  process.stdout.write(`done: start tetradb with TETRA_EMBEDDING_MODEL_DIR=${modelDir} (the default needs nothing)\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`model:fetch failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
