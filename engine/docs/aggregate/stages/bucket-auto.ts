/**
 * $bucketAuto (manual: $bucketAuto): the input sorted by its `groupBy` value (missing as null, BSON
 * order) and cut into at most `buckets` buckets of about the same count, with MongoDB's algorithm
 * (document_source_bucket_auto): each bucket takes round(n / buckets) documents, then every
 * following document with the same value (a value never straddles two buckets); the last bucket
 * takes the rest. `_id` is `{min, max}`: min inclusive, max the next bucket's min (inclusive for
 * the last bucket, its largest value). With `granularity`, values must be non-negative numbers and
 * each boundary is rounded up to the series (granularity.ts), the bucket absorbing the values below
 * it; the first min is rounded down and the last max up. `output` holds accumulators as in $group
 * (default a count). As MongoDB does, the input goes through a sorter that spills past the
 * blocking bound (allowDiskUse; external-sort.ts), counted as it comes, then the buckets are built
 * one at a time from the sorted documents: only the bucket being built is held (its accumulators).
 */

import { DocSorter, sortRefusal } from '../../external-sort.js';
import { bsonTypeOf, compareValues, isPlainObject, MISSING, type Doc } from '../../values.js';
import { compileExpression } from '../expression/operator-table.js';
import { Scope } from '../expression/expression.js';
import { needsOf } from '../dependencies.js';
import { pushAll, stageError, type DocStream, type Stage } from '../stage.js';
import { granularityRounder, type GranularityRounder } from './granularity.js';
import { groupStage } from './group.js';

/** A bucket being built: its bounds so far and how many documents it took. */
interface Building {
  readonly index: number;
  min: unknown;
  max: unknown;
  count: number;
  /** With a granularity: the rounded-up boundary, fixed once the bucket has its share (see joins). */
  boundary: unknown;
}

/**
 * MongoDB's populateNextBucket, one document at a time over the input in key order: each bucket
 * takes `size` documents (the last one all that are left), then every following one with the same
 * key; with a granularity, every following one below its max rounded up (the boundary) too.
 */
class BucketCutter {
  readonly #count: number;
  readonly #size: number;
  readonly #rounder: GranularityRounder | undefined;
  #current: Building | undefined;
  /** The key that did not join the current bucket: the next one's first. */
  #next: { key: unknown } | undefined;

  /** `total`: how many documents come (the sort counted them), cut into at most `count` buckets. */
  constructor(total: number, count: number, rounder: GranularityRounder | undefined) {
    this.#count = count;
    this.#size = Math.max(1, Math.round(total / count));
    this.#rounder = rounder;
  }

  get current(): Building | undefined {
    return this.#current;
  }

  /** True once a key did not join the current bucket. */
  get full(): boolean {
    return this.#next !== undefined;
  }

  /** Starts the first bucket at `key`. */
  start(key: unknown): Building {
    const min = this.#rounder === undefined ? key : this.#rounder.roundDown(key as number);
    this.#current = { index: 0, min, max: key, count: 1, boundary: undefined };
    return this.#current;
  }

  /** True when the document of `key` goes into the current bucket (then counted there); false: it starts the next one. */
  joins(key: unknown): boolean {
    const b = this.#current!;
    let joins = b.index === this.#count - 1 || b.count < this.#size;
    if (!joins && this.#rounder !== undefined) {
      b.boundary ??= this.#rounder.roundUp(b.max as number);
      joins = compareValues(b.boundary, key) > 0 || compareValues(b.max, key) === 0;
    } else if (!joins) {
      joins = compareValues(b.max, key) === 0;
    }
    if (joins) {
      b.max = key;
      b.count++;
    } else {
      this.#next = { key };
    }
    return joins;
  }

  /**
   * Closes the current bucket, whose max becomes the next one's min (the key that did not join; at
   * the end of the input, its own largest key, included), and starts the next one at that key.
   * Returns the closed bucket's bounds.
   */
  close(): { min: unknown; max: unknown } {
    const b = this.#current!;
    const next = this.#next?.key;
    const more = this.#next !== undefined;
    this.#next = undefined;
    const rounder = this.#rounder;
    let max = b.max;
    if (rounder !== undefined) {
      const boundary = b.boundary ?? rounder.roundUp(b.max as number);
      // A bucket that ends at 0: its max is the next one's key rounded down.
      max = boundary === 0 && more ? rounder.roundDown(next as number) : boundary;
    } else if (more) {
      max = next;
    }
    this.#current = !more ? undefined : { index: b.index + 1, min: rounder === undefined ? next : max, max: next, count: 1, boundary: undefined };
    return { min: b.min, max };
  }
}

export function bucketAutoStage(spec: unknown, names: ReadonlySet<string>): Stage {
  const stage = '$bucketAuto';
  if (!isPlainObject(spec)) stageError(stage, `The argument to $bucketAuto must be an object, but found type: ${bsonTypeOf(spec)}`);
  let count: number | undefined;
  let rounder: GranularityRounder | undefined;
  let output: Doc = { count: { $sum: 1 } };
  for (const [k, v] of Object.entries(spec)) {
    switch (k) {
      case 'groupBy':
        if (!(typeof v === 'string' && v.startsWith('$')) && !(isPlainObject(v) && Object.keys(v)[0]?.startsWith('$'))) {
          stageError(stage, `The $bucketAuto 'groupBy' field must be defined as a $-prefixed path or an expression object, but found: ${JSON.stringify(v)}`);
        }
        break;
      case 'buckets':
        if (typeof v !== 'number') stageError(stage, `The $bucketAuto 'buckets' field must be a numeric value, but found type: ${bsonTypeOf(v)}`);
        if (!Number.isInteger(v) || v < -2147483648 || v > 2147483647) stageError(stage, `The $bucketAuto 'buckets' field must be representable as a 32-bit integer, but found ${v}`);
        if (v <= 0) stageError(stage, `The $bucketAuto 'buckets' field must be greater than 0, but found: ${v}`);
        count = v;
        break;
      case 'output':
        if (!isPlainObject(v)) stageError(stage, `The $bucketAuto 'output' field must be an object, but found type: ${bsonTypeOf(v)}`);
        output = v;
        break;
      case 'granularity':
        if (typeof v !== 'string') stageError(stage, `The $bucketAuto 'granularity' field must be a string, but found type: ${bsonTypeOf(v)}`);
        rounder = granularityRounder(v);
        break;
      default:
        stageError(stage, `Unrecognized option to $bucketAuto: ${k}`);
    }
  }
  if (!Object.hasOwn(spec, 'groupBy') || count === undefined) stageError(stage, "$bucketAuto requires 'groupBy' and 'buckets' to be specified");
  const groupBy = compileExpression(spec['groupBy'], names);
  // A bucket's accumulators are a $group's over the bucket's documents (one group, `_id` null).
  const group = groupStage({ _id: null, ...output }, names);
  const buckets = count;
  return {
    name: stage,
    reads: [],
    needs: needsOf([spec['groupBy'], ...Object.values(output).map((acc) => (isPlainObject(acc) ? Object.values(acc)[0] : acc))], [], true),
    async *run(input, ctx) {
      const keyOf = (doc: Doc): unknown => {
        const v = groupBy(Scope.of(doc, ctx.vars));
        const key = v === MISSING ? null : v;
        if (rounder !== undefined) {
          if (typeof key !== 'number') stageError(stage, `$bucketAuto can specify a 'granularity' with numeric boundaries only, but found a value with type: ${bsonTypeOf(key)}`);
          if (Number.isNaN(key)) stageError(stage, "$bucketAuto can specify a 'granularity' with numeric boundaries only, but found a NaN");
          if (key < 0) stageError(stage, "$bucketAuto can specify a 'granularity' with non-negative numbers only, but found a negative number");
        }
        return key;
      };
      // Sorted by key, equal keys in input order; past the bound through spill files (allowDiskUse).
      const sorter = new DocSorter<unknown>({ keyOf, compareKeyed: compareValues }, { memory: ctx.memory, refuse: sortRefusal(stage) });
      let total = 0;
      for await (const chunk of input) {
        for (const doc of chunk) {
          total++;
          const spilled = sorter.add(doc);
          if (spilled !== undefined) await spilled;
        }
      }
      if (total === 0) return;
      const cursor = new ChunkCursor(sorter.sorted());
      try {
        const cutter = new BucketCutter(total, buckets, rounder);
        // The documents of the current bucket, as the sort gives them; stops before the next bucket's first.
        async function* bucketDocs(): DocStream {
          let first = true;
          for (let head = await cursor.head(); head !== undefined; head = await cursor.head()) {
            const { chunk, at } = head;
            let end = at;
            // A bucket's first document was counted when the bucket started.
            if (first) {
              first = false;
              end++;
            }
            for (; end < chunk.length; end++) {
              const key = keyOf(chunk[end]!);
              if (!cutter.joins(key)) break;
            }
            cursor.take(end - at);
            if (end > at) yield at === 0 && end === chunk.length ? chunk : chunk.slice(at, end);
            if (cutter.full) return;
          }
        }
        const head = (await cursor.head())!;
        cutter.start(keyOf(head.chunk[head.at]!));
        let out: Doc[] = [];
        while (cutter.current !== undefined) {
          const grouped: Doc[] = [];
          for await (const c of group.run(bucketDocs(), ctx)) pushAll(grouped, c);
          const bounds = cutter.close();
          out.push({ ...grouped[0]!, _id: bounds });
          if (out.length >= OUT_CHUNK) {
            yield out;
            out = [];
          }
        }
        if (out.length > 0) yield out;
      } finally {
        await cursor.close();
      }
    },
  };
}

/** Output documents per chunk. */
const OUT_CHUNK = 256;

/** Chunks read as a queue of documents: where the first not yet taken is. */
class ChunkCursor {
  readonly #chunks: AsyncIterator<Doc[]>;
  #chunk: Doc[] = [];
  #at = 0;

  constructor(chunks: AsyncIterable<Doc[]>) {
    this.#chunks = chunks[Symbol.asyncIterator]();
  }

  /** The chunk holding the next document and its index there; undefined at the end. */
  async head(): Promise<{ chunk: Doc[]; at: number } | undefined> {
    while (this.#at >= this.#chunk.length) {
      const r = await this.#chunks.next();
      if (r.done === true) return undefined;
      this.#chunk = r.value;
      this.#at = 0;
    }
    return { chunk: this.#chunk, at: this.#at };
  }

  /** Takes `n` documents of the head chunk. */
  take(n: number): void {
    this.#at += n;
  }

  /** Ends the reading (the sorter's spill file is removed). */
  async close(): Promise<void> {
    await this.#chunks.return?.(undefined);
  }
}
