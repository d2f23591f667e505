/**
 * The shape every aggregation stage implements, and what they share. A stage turns a stream of
 * document chunks into another; streaming stages work chunk by chunk, blocking ones ($group,
 * $sort, $count, $bucket, $bucketAuto, $sample, $setWindowFields, $fill, $densify) take their
 * whole input first, within the query's memory bound (QueryMemory), spilling past it where
 * MongoDB does; $facet streams its input to its sub-pipelines.
 */

import { fail } from '../../errors.js';
import type { Interrupt } from '../../interrupt.js';
import type { SpillSpace } from '../../storage/index.js';
import type { Needs } from './dependencies.js';
import type { Scope } from './expression/expression.js';
import type { Doc } from '../values.js';
import type { CompiledFilter } from '../query/compile-filter.js';
import type { CollStatsSpec } from './stages/coll-stats.js';

/** Chunks of documents, in order. */
export type DocStream = AsyncIterable<Doc[]>;

export const AGGREGATE_LIMITS = {
  /** Stages in a pipeline, sub-pipelines included (MongoDB: 1000). */
  maxStages: 1000,
  /** Estimated bytes a blocking stage may hold (MongoDB: 100 MB without allowDiskUse). */
  maxBlockingBytes: 64 * 1024 * 1024,
  /** Documents one $densify may generate (MongoDB's internalQueryMaxAllowedDensifyDocs default). */
  maxDensifyDocs: 500_000,
  /** Estimated bytes of the documents a pipeline returns (find's bound). */
  maxResultBytes: 32 * 1024 * 1024,
} as const;

/**
 * What a query may hold in memory, and whether it may spill to disk past that (MongoDB's
 * allowDiskUse): $sort, $group, $setWindowFields, $bucketAuto, $sample, $densify and a find's sort
 * spill (external-sort.ts); what MongoDB never spills ($graphLookup, a $facet's output, a
 * $lookup's matches) fails past the bound.
 */
export interface QueryMemory {
  /** Estimated bytes one blocking stage (or a find's in-memory sort) may hold. */
  readonly maxBlockingBytes: number;
  /** MongoDB's allowDiskUse as the query gave it (default true): false fails past the bound with MongoDB's message. */
  readonly allowDiskUse: boolean;
  /** The query's spill files; undefined when it may not spill (allowDiskUse false, or no spill area: the engine used as a library). */
  readonly spill: SpillSpace | undefined;
  /** What stops the query before its end (its time limit, its client gone), checked at every chunk; none when absent. */
  readonly interrupt?: Interrupt;
}

/** The memory of a query run without a server's settings: the default bound, no spilling. */
export const IN_MEMORY_ONLY: QueryMemory = { maxBlockingBytes: AGGREGATE_LIMITS.maxBlockingBytes, allowDiskUse: true, spill: undefined };

/** How a stage fails when the documents one lookup reads pass the blocking bound (StageContext.lookup). */
export type LookupRefusal = (collection: string, limit: number) => never;

/**
 * MongoDB's message for a $lookup's matches past its bound (internalLookupStageIntermediateDocumentMaxSizeBytes,
 * code 4568): they are held whole in one document. @throws QUERY_ERROR
 */
export const refuseLookupMatches: LookupRefusal = (collection, limit) => stageError('$lookup', `Total size of documents in ${collection} matching pipeline's $lookup stage exceeds ${limit} bytes`);

/** What a running stage may ask of the model: other collections, on the pipeline's snapshot. */
export interface StageContext {
  /**
   * The documents of `collection` that `filter` matches (a filter document), in plan order.
   * `key`, when given, stands for the filter (equal keys, equal filters): a repeat may be answered
   * from what the run read before, then without a promise. The documents are held within the
   * blocking bound: past it, `refuse` (default: refuseLookupMatches).
   */
  lookup(collection: string, filter: Doc, key?: string, refuse?: LookupRefusal): Doc[] | Promise<Doc[]>;
  /**
   * The whole stored documents of the pipeline's own collection with the `_id`s of `docs` (read
   * in part), on the pipeline's snapshot: a top-k sort reads only its keys, then these (pipeline.ts).
   * Absent where the input is not a collection's documents.
   */
  whole?(docs: readonly Doc[]): Doc[];
  /**
   * Every document of `collection`, in chunks; with `filter` (a sub-pipeline's leading $match,
   * bound to its variables), those it matches, read through the planner as a find's are.
   */
  scan(collection: string, filter?: CompiledFilter): DocStream;
  /** The variables a sub-pipeline runs with ($lookup's `let`), if any. */
  readonly vars: Scope | undefined;
  /** What $indexStats outputs: a document per index of the pipeline's collection (none when it does not exist). */
  indexStats?(): Doc[];
  /**
   * What $collStats outputs for the pipeline's collection, read on the pipeline's snapshot.
   * @throws NOT_FOUND for storageStats or count of a collection that does not exist
   */
  collStats?(spec: CollStatsSpec): Promise<Doc>;
  /** The query's memory bound and spill files. */
  readonly memory: QueryMemory;
}

/** A compiled stage. */
export interface Stage {
  readonly name: string;
  /** Collections the stage reads besides its input ($lookup's `from`), for the snapshot. */
  readonly reads: readonly string[];
  /** What it reads of its input (dependencies.ts). */
  readonly needs: Needs;
  run(input: DocStream, ctx: StageContext): DocStream;
}

/** Throws QUERY_ERROR naming the stage. @throws QUERY_ERROR */
export function stageError(stage: string, message: string): never {
  fail('QUERY_ERROR', message, { stage });
}

/** A stage that maps each chunk (streaming). */
export function streaming(name: string, needs: Needs, fn: (chunk: Doc[], ctx: StageContext) => Doc[] | Promise<Doc[]>, reads: readonly string[] = []): Stage {
  return {
    name,
    reads,
    needs,
    async *run(input, ctx) {
      for await (const chunk of input) {
        const out = await fn(chunk, ctx);
        if (out.length > 0) yield out;
      }
    },
  };
}

/**
 * Appends every item to `out`. Not `out.push(...items)`: spreading passes each item as an
 * argument, and past ~120k of them V8 throws RangeError (a $unwind of a large array makes chunks
 * that size).
 */
export function pushAll<T>(out: T[], items: readonly T[]): void {
  for (let i = 0; i < items.length; i++) out.push(items[i]!);
}

/** A rough size of a value in memory (strings by length, numbers 8, containers with overhead). */
export function approxBytes(v: unknown): number {
  switch (typeof v) {
    case 'string':
      return 16 + 2 * v.length;
    case 'number':
    case 'boolean':
      return 8;
    case 'object': {
      if (v === null) return 8;
      if (v instanceof Date) return 24;
      if (Array.isArray(v)) {
        let n = 16;
        for (const el of v) n += approxBytes(el);
        return n;
      }
      let n = 16;
      for (const k of Object.keys(v)) n += 16 + 2 * k.length + approxBytes((v as Doc)[k]);
      return n;
    }
    default:
      return 8;
  }
}

/** Counts what a blocking stage holds against its bound. */
export class BlockingBudget {
  #bytes = 0;
  readonly #stage: string;
  /** The bound: the query's (QueryMemory.maxBlockingBytes). */
  readonly limit: number;

  constructor(stage: string, memory: Pick<QueryMemory, 'maxBlockingBytes'> = IN_MEMORY_ONLY) {
    this.#stage = stage;
    this.limit = memory.maxBlockingBytes;
  }

  /** What is held now. */
  get bytes(): number {
    return this.#bytes;
  }

  /** True when what is held is past the bound (a spilling stage's cue). */
  get over(): boolean {
    return this.#bytes > this.limit;
  }

  /** Counts `v` as held; returns its estimated size. @throws QUERY_ERROR past the bound */
  add(v: unknown): number {
    const n = approxBytes(v);
    this.addBytes(n);
    return n;
  }

  /** Counts `n` more bytes as held (fewer when negative). @throws QUERY_ERROR past the bound */
  addBytes(n: number): void {
    this.#bytes += n;
    if (this.#bytes > this.limit) this.refuse();
  }

  /** Counts `n` more bytes as held without checking the bound (a spilling stage checks `over`). */
  count(n: number): void {
    this.#bytes += n;
  }

  /** Fails as a stage past its bound that cannot spill. @throws QUERY_ERROR */
  refuse(): never {
    stageError(this.#stage, `${this.#stage} holds more than ${this.limit} bytes of documents: filter earlier in the pipeline ($match), or project fewer fields`);
  }

  /** What is held went down by `bytes` (a sort dropped documents past its limit, or spilled them). */
  release(bytes: number): void {
    this.#bytes -= bytes;
  }
}

/** Gathers a whole stream, within a blocking stage's bound (`budget`, when the stage goes on counting what it holds). */
export async function gather(input: DocStream, stage: string, budget: BlockingBudget): Promise<Doc[]> {
  const out: Doc[] = [];
  for await (const chunk of input) {
    for (const d of chunk) {
      budget.add(d);
      out.push(d);
    }
  }
  return out;
}

/** Re-chunks an array as a stream. */
export async function* chunksOf(docs: readonly Doc[], size = 256): DocStream {
  for (let i = 0; i < docs.length; i += size) yield docs.slice(i, i + size);
}

/** A value the user wrote as a field name of an output document: no `$` first, no `.`. @throws QUERY_ERROR */
export function outputField(stage: string, name: unknown, what: string): string {
  if (typeof name !== 'string' || name === '') stageError(stage, `${stage}'s ${what} must be a non-empty string`);
  if (name.startsWith('$')) stageError(stage, `${stage}'s ${what} must not start with '$': '${name}'`);
  if (name.includes('.')) stageError(stage, `${stage}'s ${what} must not contain '.': '${name}'`);
  if (name.includes('\0')) stageError(stage, `${stage}'s ${what} must not contain the NUL character`);
  return name;
}


