/*
 * Coalesces concurrent embed() calls into batched model runs. Calls that arrive in the same tick,
 * or while a run is in flight, wait in a queue; when the model is free, the queue is taken as one
 * snapshot, sorted by length (so a batch pads to similar lengths), and run in batches of up to
 * batchSize, the snapshot before anything that arrives later (no starvation). One run at a time:
 * the model's own threads parallelise inside a run. A failing run rejects only the calls with a
 * text in it; each call resolves once, with its own results in its own order. Closing drains:
 * calls already accepted are served, new ones are refused.
 */

interface Call {
  results: Float32Array[];
  remaining: number;
  settled: boolean;
  resolve: (vectors: Float32Array[]) => void;
  reject: (err: Error) => void;
}

interface Pending<T> {
  input: T;
  length: number;
  call: Call;
  index: number;
}

export interface EmbedBatcherOptions<T> {
  batchSize: number;
  /** Runs the model on one batch; returns one vector per input, in order. */
  run: (inputs: T[]) => Promise<Float32Array[]>;
  /** The padding-relevant length of an input (its token count). */
  lengthOf: (input: T) => number;
}

export class EmbedBatcher<T> {
  #options: EmbedBatcherOptions<T>;
  #queue: Pending<T>[] = [];
  #snapshot: Pending<T>[] = [];
  /** Next unread index in #snapshot. */
  #at = 0;
  #inFlight: Promise<void> | null = null;
  #scheduled = false;
  #closedError: Error | null = null;
  #runs = 0;

  constructor(options: EmbedBatcherOptions<T>) {
    if (!Number.isInteger(options.batchSize) || options.batchSize < 1) throw new Error(`batchSize must be a positive integer, got ${options.batchSize}`);
    this.#options = options;
  }

  /** Model runs started so far. */
  get runs(): number {
    return this.#runs;
  }

  submit(inputs: readonly T[]): Promise<Float32Array[]> {
    if (this.#closedError !== null) return Promise.reject(this.#closedError);
    if (inputs.length === 0) return Promise.resolve([]);
    return new Promise((resolve, reject) => {
      const call: Call = { results: new Array<Float32Array>(inputs.length), remaining: inputs.length, settled: false, resolve, reject };
      inputs.forEach((input, index) => this.#queue.push({ input, length: this.#options.lengthOf(input), call, index }));
      this.#schedule();
    });
  }

  /**
   * Refuses new calls (they reject with `reason`) and resolves once every call already accepted
   * has been served or has failed.
   */
  async close(reason: Error): Promise<void> {
    this.#closedError ??= reason;
    while (this.#inFlight !== null || this.#scheduled || this.#hasWaiting()) {
      if (this.#inFlight !== null) await this.#inFlight;
      else if (this.#scheduled) await new Promise((resolve) => setImmediate(resolve));
      else this.#pump();
    }
  }

  #schedule(): void {
    if (this.#inFlight !== null || this.#scheduled) return;
    this.#scheduled = true;
    // setImmediate, not a microtask: calls made in the same tick (Promise.all over many
    // requests' handlers) all land in the queue before the first batch is cut.
    setImmediate(() => {
      this.#scheduled = false;
      this.#pump();
    });
  }

  #pump(): void {
    if (this.#inFlight !== null) return;
    const batch = this.#nextBatch();
    if (batch.length === 0) return;
    this.#runs++;
    this.#inFlight = this.#runBatch(batch).finally(() => {
      this.#inFlight = null;
      if (this.#hasWaiting()) this.#pump();
    });
  }

  /** Up to batchSize waiting inputs: the rest of the current snapshot first, then a new sorted snapshot of the queue. */
  #nextBatch(): Pending<T>[] {
    const batch: Pending<T>[] = [];
    while (batch.length < this.#options.batchSize) {
      if (this.#at === this.#snapshot.length) {
        if (this.#queue.length === 0) break;
        this.#snapshot = this.#queue.splice(0).sort((a, b) => a.length - b.length);
        this.#at = 0;
      }
      const p = this.#snapshot[this.#at++]!;
      if (!p.call.settled) batch.push(p); // a call that failed in an earlier batch needs no more work
    }
    return batch;
  }

  #hasWaiting(): boolean {
    return this.#at < this.#snapshot.length || this.#queue.length > 0;
  }

  async #runBatch(batch: Pending<T>[]): Promise<void> {
    let vectors: Float32Array[];
    try {
      vectors = await this.#options.run(batch.map((p) => p.input));
      if (vectors.length !== batch.length) throw new Error(`the model returned ${vectors.length} vectors for ${batch.length} texts`);
    } catch (err) {
      const error = err instanceof Error ? err : new Error(String(err));
      for (const p of batch) fail(p.call, error);
      return;
    }
    batch.forEach((p, i) => {
      const call = p.call;
      if (call.settled) return;
      call.results[p.index] = vectors[i]!;
      if (--call.remaining === 0) {
        call.settled = true;
        call.resolve(call.results);
      }
    });
  }
}

function fail(call: Call, err: Error): void {
  if (call.settled) return;
  call.settled = true;
  call.reject(err);
}
