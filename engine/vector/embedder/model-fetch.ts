import { randomBytes } from 'node:crypto';
import { mkdir, open, rename, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { DEFAULT_MODEL_BASE_URL, MODEL_FILES } from './model-files.js';

export interface FetchModelOptions {
  modelDir: string;
  /** Where the files are, ending in '/' or not (default: the Hugging Face repo's resolve/main/). */
  baseUrl?: string;
  log?: (line: string) => void;
}

/**
 * Downloads the model files into modelDir. A file already present with a non-zero size is kept;
 * each download goes to a temporary name, is fsynced, then renamed, so an interrupted fetch never
 * leaves a partial file under a real name. Every file is attempted.
 * @throws Error naming each file that failed, after trying all of them.
 */
export async function fetchModel(options: FetchModelOptions): Promise<void> {
  const log = options.log ?? (() => {});
  const base = (options.baseUrl ?? DEFAULT_MODEL_BASE_URL).replace(/\/?$/, '/');
  await mkdir(options.modelDir, { recursive: true });
  const failures: string[] = [];
  for (const file of MODEL_FILES) {
    const dest = join(options.modelDir, file.name);
    const present = await stat(dest).then(
      (s) => s.isFile() && s.size > 0,
      () => false,
    );
    if (present) {
      log(`${file.name}: already present, kept`);
      continue;
    }
    const url = new URL(file.remotePath, base).href;
    try {
      const bytes = await download(url, dest);
      log(`${file.name}: ${formatBytes(bytes)} from ${url}`);
    } catch (err) {
      const line = `${file.name}: ${err instanceof Error ? err.message : String(err)}`;
      failures.push(line);
      log(line);
    }
  }
  if (failures.length > 0) {
    throw new Error(`could not fetch ${failures.length} of ${MODEL_FILES.length} model files into ${options.modelDir}:\n  ${failures.join('\n  ')}`);
  }
}

/** Streams url into dest via a temporary file; returns the byte count. */
async function download(url: string, dest: string): Promise<number> {
  let response: Response;
  try {
    response = await fetch(url, { redirect: 'follow' });
  } catch (err) {
    const cause = (err as { cause?: { message?: string } }).cause?.message;
    throw new Error(`cannot reach ${url}: ${cause ?? (err as Error).message}`);
  }
  if (!response.ok || response.body === null) {
    await response.body?.cancel();
    throw new Error(`HTTP ${response.status} ${response.statusText} from ${url}`);
  }
  const tmp = `${dest}.part-${process.pid}-${randomBytes(4).toString('hex')}`;
  const handle = await open(tmp, 'w');
  let bytes = 0;
  try {
    try {
      for await (const chunk of response.body) {
        const data = chunk as Uint8Array;
        await handle.write(data);
        bytes += data.length;
      }
    } catch (err) {
      const cause = (err as { cause?: { message?: string } }).cause?.message;
      throw new Error(`download from ${url} broke off after ${bytes} bytes: ${cause ?? (err as Error).message}`);
    }
    const expected = Number(response.headers.get('content-length') ?? NaN);
    // content-length is the encoded size; only compare when the body was not content-encoded.
    if (Number.isFinite(expected) && response.headers.get('content-encoding') === null && expected !== bytes) {
      throw new Error(`got ${bytes} bytes from ${url}, expected ${expected}`);
    }
    if (bytes === 0) throw new Error(`empty response from ${url}`);
    await handle.sync();
    await handle.close();
    await rename(tmp, dest);
    return bytes;
  } catch (err) {
    await handle.close().catch(() => {});
    await unlink(tmp).catch(() => {});
    throw err;
  }
}

function formatBytes(n: number): string {
  return n >= 1024 * 1024 ? `${(n / 1024 / 1024).toFixed(1)} MiB` : n >= 1024 ? `${(n / 1024).toFixed(1)} KiB` : `${n} B`;
}
