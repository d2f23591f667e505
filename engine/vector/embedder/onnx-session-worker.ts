import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/*
 * onnxruntime-node's session.run() computes on the calling thread (ORT's intra-op threads help,
 * but the caller blocks until the run ends). To keep HTTP handling responsive while a batch runs,
 * the session lives in a worker thread. The worker is deliberately small plain JavaScript (given
 * as source, so it runs the same under tsx, vitest and compiled builds): it creates the session,
 * runs int64 feeds and sends back one float32 output. Tokenising, batching and pooling stay on
 * the main thread, typed and tested.
 */

const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const ort = require(workerData.ortPath);
const message = (e) => (e && e.message ? e.message : String(e));
let session = null;
ort.InferenceSession.create(workerData.modelPath, workerData.sessionOptions).then(
  (s) => {
    session = s;
    parentPort.postMessage({
      type: 'ready',
      inputNames: s.inputNames,
      outputNames: s.outputNames,
      outputs: s.outputMetadata.map((m) => ({ name: m.name, type: m.type, shape: m.shape })),
    });
  },
  (e) => parentPort.postMessage({ type: 'failed', message: message(e) }),
);
parentPort.on('message', async (m) => {
  if (m.type === 'close') {
    try { if (session) await session.release(); } finally { parentPort.close(); }
    return;
  }
  try {
    const feeds = {};
    for (const name of Object.keys(m.feeds)) feeds[name] = new ort.Tensor('int64', m.feeds[name].data, m.feeds[name].dims);
    const out = (await session.run(feeds, [m.output]))[m.output];
    if (out.type !== 'float32') throw new Error('output ' + m.output + ' is ' + out.type + ', expected float32');
    // A copy: the buffer ORT hands back is not guaranteed to be transferable.
    const data = new Float32Array(out.data);
    parentPort.postMessage({ type: 'result', id: m.id, data, dims: out.dims }, [data.buffer]);
  } catch (e) {
    parentPort.postMessage({ type: 'error', id: m.id, message: message(e) });
  }
});
`;

export interface OnnxSessionInfo {
  inputNames: string[];
  outputNames: string[];
  outputs: Array<{ name: string; type?: string; shape?: Array<number | string> }>;
}

export interface OnnxSessionOptions {
  intraOpNumThreads?: number;
  interOpNumThreads: number;
  graphOptimizationLevel: 'disabled' | 'basic' | 'extended' | 'all';
  executionMode: 'sequential' | 'parallel';
  logSeverityLevel: 0 | 1 | 2 | 3 | 4;
  enableCpuMemArena?: boolean;
}

export interface Int64Feed {
  data: BigInt64Array;
  dims: number[];
}

export interface Float32Output {
  data: Float32Array;
  dims: number[];
}

type WorkerReply =
  | ({ type: 'ready' } & OnnxSessionInfo)
  | { type: 'failed'; message: string }
  | { type: 'result'; id: number; data: Float32Array; dims: number[] }
  | { type: 'error'; id: number; message: string };

/** One ORT InferenceSession in its own worker thread. */
export class OnnxSessionWorker {
  readonly info: OnnxSessionInfo;
  #worker: Worker;
  #pending = new Map<number, { resolve: (out: Float32Output) => void; reject: (err: Error) => void }>();
  #nextId = 1;
  #stopped: Error | null = null;
  #onStop: (err: Error) => void = () => {};

  private constructor(worker: Worker, info: OnnxSessionInfo) {
    this.#worker = worker;
    this.info = info;
    worker.on('message', (reply: WorkerReply) => this.#onReply(reply));
    worker.on('error', (err: Error) => this.#stop(new Error(`the ONNX worker failed: ${err.message}`)));
    worker.on('exit', (code) => this.#stop(new Error(`the ONNX worker exited (code ${code})`)));
    worker.unref(); // idle, it must not keep the process alive; runs ref it
  }

  /**
   * Starts a worker and creates the session from modelPath.
   * @throws Error when ORT cannot load the model.
   */
  static start(modelPath: string, sessionOptions: OnnxSessionOptions): Promise<OnnxSessionWorker> {
    const ortPath = createRequire(import.meta.url).resolve('onnxruntime-node');
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { ortPath, modelPath, sessionOptions } });
    return new Promise((resolve, reject) => {
      const onExit = (code: number): void => reject(new Error(`the ONNX worker exited (code ${code}) while loading ${modelPath}`));
      const onError = (err: Error): void => reject(new Error(`the ONNX worker failed while loading ${modelPath}: ${err.message}`));
      worker.once('exit', onExit);
      worker.once('error', onError);
      worker.once('message', (reply: WorkerReply) => {
        worker.off('exit', onExit);
        worker.off('error', onError);
        if (reply.type === 'ready') {
          resolve(new OnnxSessionWorker(worker, { inputNames: reply.inputNames, outputNames: reply.outputNames, outputs: reply.outputs }));
        } else {
          void worker.terminate();
          reject(new Error(`onnxruntime cannot load ${modelPath}: ${reply.type === 'failed' ? reply.message : reply.type}`));
        }
      });
    });
  }

  /** Called once if the worker dies; runs in flight are rejected before. */
  onStop(listener: (err: Error) => void): void {
    this.#onStop = listener;
  }

  /** Runs the session on int64 feeds (copied to the worker) and returns one float32 output. */
  run(feeds: Record<string, Int64Feed>, output: string): Promise<Float32Output> {
    if (this.#stopped !== null) return Promise.reject(this.#stopped);
    const id = this.#nextId++;
    return new Promise<Float32Output>((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      if (this.#pending.size === 1) this.#worker.ref();
      this.#worker.postMessage({ type: 'run', id, feeds, output });
    });
  }

  /** Releases the session and ends the worker. Idempotent. */
  async close(): Promise<void> {
    if (this.#stopped !== null) return;
    const exited = new Promise<void>((resolve) => this.#worker.once('exit', () => resolve()));
    this.#stopped = new Error('the ONNX session is closed');
    this.#worker.ref();
    this.#worker.postMessage({ type: 'close' });
    // Fallback for a worker stuck in native code: close() must end.
    const timer = setTimeout(() => void this.#worker.terminate(), 5000);
    await exited;
    clearTimeout(timer);
    this.#rejectAll(this.#stopped);
  }

  #onReply(reply: WorkerReply): void {
    if (reply.type !== 'result' && reply.type !== 'error') return;
    const pending = this.#pending.get(reply.id);
    if (pending === undefined) return;
    this.#pending.delete(reply.id);
    if (this.#pending.size === 0) this.#worker.unref();
    if (reply.type === 'result') pending.resolve({ data: reply.data, dims: reply.dims });
    else pending.reject(new Error(`onnxruntime run failed: ${reply.message}`));
  }

  #stop(err: Error): void {
    if (this.#stopped !== null) return;
    this.#stopped = err;
    this.#rejectAll(err);
    this.#onStop(err);
  }

  #rejectAll(err: Error): void {
    for (const p of this.#pending.values()) p.reject(err);
    this.#pending.clear();
  }
}
