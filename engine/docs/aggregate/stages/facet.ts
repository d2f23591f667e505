/**
 * $facet: several sub-pipelines over the same input, one output document with each one's results
 * in an array field. As MongoDB runs it (document_source_facet, TeeBuffer), the input is not
 * gathered: it passes to the sub-pipelines a chunk at a time, the next chunk read once every
 * sub-pipeline still reading has taken this one, so the stage itself holds one chunk; the
 * sub-pipelines run side by side, each blocking stage in them holding (and spilling past the
 * bound, allowDiskUse) what it would hold alone. The results are counted against the blocking
 * bound as MongoDB bounds the document it builds (internalQueryFacetMaxOutputDocSizeBytes):
 * past it, MongoDB's "document constructed by $facet is <n> bytes, which exceeds the limit of
 * <m> bytes".
 */

import { isPlainObject, setOwn, type Doc } from '../../values.js';
import { approxBytes, outputField, pushAll, stageError, type DocStream, type Stage } from '../stage.js';
import type { SubPipelineCompiler } from './lookup.js';

const NOT_IN_FACET = new Set(['$facet', '$out', '$merge', '$collStats', '$indexStats', '$geoNear']);

/** Why a reader of an abandoned tee stops: another sub-pipeline failed (its error is the stage's). */
const ABANDONED = 'a $facet sub-pipeline failed';

/**
 * One stream read by several readers at their own pace, holding one chunk: a reader that took the
 * current chunk waits until every reader still reading took it too, then the next is read.
 */
class Tee {
  readonly #source: AsyncIterator<Doc[]>;
  /** Per reader: true once it took the current chunk (or stopped reading). */
  readonly #took: boolean[];
  readonly #reading: boolean[];
  #chunk: Doc[] | undefined;
  #done = false;
  #abandoned = false;
  #loading: Promise<void> | undefined;
  /** Readers waiting for the others to take the current chunk. */
  #waiting: Array<() => void> = [];

  constructor(source: DocStream, readers: number) {
    this.#source = source[Symbol.asyncIterator]();
    this.#took = new Array<boolean>(readers).fill(true);
    this.#reading = new Array<boolean>(readers).fill(true);
  }

  /** Reader `i`'s stream: every chunk of the source, each its own copy of the array (the documents are shared, as before). */
  async *reader(i: number): DocStream {
    try {
      for (;;) {
        const chunk = await this.#next(i);
        if (chunk === undefined) return;
        yield chunk.slice();
      }
    } finally {
      await this.leave(i);
    }
  }

  /**
   * Reader `i` reads no more (its stream ended, or its sub-pipeline did: one that never started
   * reading must not hold the others back). When nobody reads any more, the source is closed
   * before its end (a $limit in every facet).
   */
  async leave(i: number): Promise<void> {
    if (!this.#reading[i]) return;
    this.#reading[i] = false;
    this.#took[i] = true;
    this.#wake();
    if (!this.#reading.includes(true)) await this.close();
  }

  /** Stops every reader (each one's next read throws): another failed. */
  abandon(): void {
    this.#abandoned = true;
    this.#wake();
  }

  /** Closes the source (its stages' spill files go). Never rejects. */
  async close(): Promise<void> {
    if (this.#done) return;
    this.#done = true;
    await this.#source.return?.(undefined)?.catch(() => undefined);
  }

  async #next(i: number): Promise<Doc[] | undefined> {
    for (;;) {
      if (this.#abandoned) throw new Error(ABANDONED);
      if (!this.#took[i]) {
        this.#took[i] = true;
        return this.#chunk;
      }
      if (this.#done) return undefined;
      if (this.#took.every((t) => t)) {
        this.#loading ??= this.#load();
        await this.#loading;
      } else {
        await new Promise<void>((resolve) => this.#waiting.push(resolve));
      }
    }
  }

  async #load(): Promise<void> {
    try {
      const r = await this.#source.next();
      if (r.done === true) {
        this.#done = true;
        this.#chunk = undefined;
      } else {
        this.#chunk = r.value;
        for (let i = 0; i < this.#took.length; i++) this.#took[i] = !this.#reading[i];
      }
    } finally {
      this.#loading = undefined;
      this.#wake();
    }
  }

  #wake(): void {
    const waiting = this.#waiting;
    this.#waiting = [];
    for (const resolve of waiting) resolve();
  }
}

export function facetStage(spec: unknown, names: ReadonlySet<string>, compileSub: SubPipelineCompiler): Stage {
  const stage = '$facet';
  if (!isPlainObject(spec) || Object.keys(spec).length === 0) stageError(stage, 'the $facet specification must be a non-empty object');
  const facets = Object.entries(spec).map(([name, pipeline]) => {
    outputField(stage, name, 'output field');
    if (Array.isArray(pipeline)) {
      for (const s of pipeline) {
        const op = isPlainObject(s) ? Object.keys(s)[0] : undefined;
        if (op !== undefined && NOT_IN_FACET.has(op)) stageError(stage, `${op} is not allowed to be used within a $facet stage`);
      }
    }
    return { name, pipeline: compileSub(pipeline, names) };
  });
  // Each facet reads what its own pipeline needs; one that keeps whole documents needs them all.
  const fields = new Set<string>();
  let all = false;
  for (const f of facets) {
    if (f.pipeline.fields === undefined) all = true;
    else for (const x of f.pipeline.fields) fields.add(x);
  }
  return {
    name: stage,
    reads: facets.flatMap((f) => f.pipeline.reads),
    needs: { fields: all ? 'all' : fields, replaces: true },
    async *run(input, ctx) {
      const limit = ctx.memory.maxBlockingBytes;
      const tee = new Tee(input, facets.length);
      const results = facets.map((): Doc[] => []);
      let bytes = 0;
      let failure: { error: unknown } | undefined;
      const runs = facets.map(async (f, i) => {
        try {
          for await (const c of f.pipeline.run(tee.reader(i), ctx)) {
            for (const d of c) bytes += approxBytes(d);
            if (bytes > limit) stageError(stage, `document constructed by $facet is ${bytes} bytes, which exceeds the limit of ${limit} bytes`);
            pushAll(results[i]!, c);
          }
        } catch (error) {
          // The first failure is the stage's; the other sub-pipelines are stopped.
          if (failure === undefined) {
            failure = { error };
            tee.abandon();
          }
        } finally {
          await tee.leave(i);
        }
      });
      await Promise.all(runs);
      await tee.close();
      if (failure !== undefined) throw failure.error;
      const out: Doc = {};
      facets.forEach((f, i) => setOwn(out, f.name, results[i]!));
      yield [out];
    },
  };
}
