/**
 * External merge sort of documents, for $sort, $setWindowFields and a find's in-memory sort past
 * the query's memory bound (MongoDB's allowDiskUse, on by default since 6.0): the sorter holds
 * documents up to the bound, then sorts them and writes them as a run to the query's spill file,
 * and so on; at the end it merges the runs with a heap, reading each through a bounded buffer.
 * Ties keep their input order, as sortDocuments does: within a run by input position, across
 * runs by run (the runs are consecutive stretches of the input), so an answer is the same
 * whether the sort spilled or not. A run record is a document (spilled-doc format below).
 */

import { fail } from '../errors.js';
import type { SpillFile, SpillRun, SpillRunReader, SpillSpace } from '../storage/index.js';
import { approxBytes, BlockingBudget, type QueryMemory } from './aggregate/stage.js';
import { decodeDocument, encodeDocument } from './doc-codec.js';
import { setNoTextScore, setTextScore, textScoreIfAny } from './text/index.js';
import type { Doc } from './values.js';
import { BinaryHeap } from './binary-heap.js';

/** An order over documents: each one's key computed once, then keys compared (CompiledSort is one). */
export interface KeyedOrder<K> {
  keyOf(doc: Doc): K;
  compareKeyed(a: K, b: K): number;
}

// A spilled document: [u8 flag][f64 text score, when the flag says][stored document bytes]. A
// document's text score is kept beside it (text-score.ts), not in it: the record carries it.
const SPILLED_PLAIN = 0;
const SPILLED_WITH_SCORE = 1;
/** A match of a `$text` query that another `$or` clause found: it has no score (text-score.ts, setNoTextScore). */
const SPILLED_NO_SCORE = 2;
const SCORE_BYTES = 8;

/**
 * A document as a spill record: `stored`, when given, is its bytes as the collection stores them
 * (not encoded again); `doc` may then be undefined (not decoded: it has no text score yet).
 */
export function encodeSpilledDoc(doc: Doc | undefined, stored?: Buffer): Buffer {
  const body = stored ?? encodeDocument(doc!);
  const score = doc === undefined ? undefined : textScoreIfAny(doc);
  const head = typeof score === 'number' ? 1 + SCORE_BYTES : 1;
  const out = Buffer.allocUnsafe(head + body.length);
  out[0] = score === undefined ? SPILLED_PLAIN : score === null ? SPILLED_NO_SCORE : SPILLED_WITH_SCORE;
  if (typeof score === 'number') out.writeDoubleLE(score, 1);
  body.copy(out, head);
  return out;
}

/** A document from its spill record (encodeSpilledDoc), its text score restored. */
export function decodeSpilledDoc(bytes: Buffer): Doc {
  if (bytes[0] === SPILLED_PLAIN) return decodeDocument(bytes.subarray(1));
  if (bytes[0] === SPILLED_NO_SCORE) {
    const doc = decodeDocument(bytes.subarray(1));
    setNoTextScore(doc);
    return doc;
  }
  const doc = decodeDocument(bytes.subarray(1 + SCORE_BYTES));
  setTextScore(doc, bytes.readDoubleLE(1));
  return doc;
}

/** Appends records to the current run of `file`, awaiting only the writes that went to disk. */
export async function writeRun(file: SpillFile, records: Iterable<Buffer>): Promise<SpillRun> {
  for (const r of records) {
    const p = file.append(r);
    if (p !== undefined) await p;
  }
  return file.endRun();
}

/** The next record of a reader, as a value when it was buffered. */
async function nextRecord(reader: SpillRunReader): Promise<Buffer | undefined> {
  const r = reader.next();
  return r instanceof Promise ? await r : r;
}

/**
 * The records of sorted `runs` of `file`, merged into one order: `decode` turns a record into an
 * item and its key; on equal keys the earlier run's item comes first. Each run is read through
 * about `memoryBytes / runs` of buffer.
 */
export async function* mergeRuns<T, K>(file: SpillFile, runs: readonly SpillRun[], decode: (record: Buffer) => { item: T; key: K }, compare: (a: K, b: K) => number, memoryBytes: number): AsyncGenerator<T> {
  interface Head {
    item: T;
    key: K;
    run: number;
  }
  const readers = runs.map((r) => file.reader(r, memoryBytes / Math.max(1, runs.length)));
  const heap = new BinaryHeap<Head>((x, y) => {
    const c = compare(x.key, y.key);
    return c < 0 || (c === 0 && x.run < y.run);
  });
  for (let i = 0; i < readers.length; i++) {
    const rec = await nextRecord(readers[i]!);
    if (rec !== undefined) heap.push({ ...decode(rec), run: i });
  }
  while (heap.size > 0) {
    const head = heap.root;
    yield head.item;
    const rec = await nextRecord(readers[head.run]!);
    if (rec === undefined) heap.pop();
    else heap.replaceRoot({ ...decode(rec), run: head.run });
  }
}

/** How a sorter refuses past its bound when it may not spill. */
export type Refusal = (memory: QueryMemory) => never;

/** MongoDB's message for a sort past its bound without allowDiskUse (its sorter's, code 292). @throws QUERY_ERROR */
export function refuseSort(memory: QueryMemory, stage = '$sort'): never {
  fail('QUERY_ERROR', `Sort exceeded memory limit of ${memory.maxBlockingBytes} bytes, but did not opt in to external sorting. Aborting operation. Pass allowDiskUse:true to opt in.`, {
    stage,
    limit: memory.maxBlockingBytes,
  });
}

/** The refusal of a stage that sorts: with allowDiskUse false, the sorter's message; without a spill area (the engine as a library), the stage's bound. */
export function sortRefusal(stage: string): Refusal {
  return (memory) => (memory.allowDiskUse ? new BlockingBudget(stage, memory).refuse() : refuseSort(memory, stage));
}

/** A document of a sort's output with its estimated size (DocSorter.sortedEntries). */
export interface SortedDoc {
  readonly doc: Doc;
  readonly bytes: number;
}

interface Entry<K> extends SortedDoc {
  readonly key: K;
  readonly seq: number;
  /** The stored bytes of the document, when it came from a collection (spilled as they are). */
  readonly stored: Buffer | undefined;
}

/** Options of a DocSorter. */
export interface SorterOptions {
  readonly memory: QueryMemory;
  /** Only the first `keep` documents in order are wanted (a $limit after the sort, a find's skip + limit). */
  readonly keep?: number;
  /** Fails when the documents pass the bound and it may not spill (allowDiskUse false, or no spill area). */
  readonly refuse: Refusal;
}

/** The fewest documents a sort with a `keep` holds before it drops those past it (see add). */
const TRIM_SLACK = 256;

/**
 * Sorts documents within the query's memory bound, spilling sorted runs past it (file comment).
 * Feed it with add, then read sorted() once.
 */
export class DocSorter<K> {
  readonly #order: KeyedOrder<K>;
  readonly #memory: QueryMemory;
  readonly #keep: number | undefined;
  readonly #refuse: Refusal;
  #entries: Array<Entry<K>> = [];
  #bytes = 0;
  #seq = 0;
  /** With a keep, after a trim that kept that many: the key of the last one kept (see #trim). */
  #worst: K | undefined;
  #file: SpillFile | undefined;
  readonly #runs: SpillRun[] = [];
  /** sortedEntries in memory: the sorted entries, those handed out already dropped. */
  #out: Array<Entry<K> | undefined> | undefined;
  #given = 0;

  constructor(order: KeyedOrder<K>, options: SorterOptions) {
    this.#order = order;
    this.#memory = options.memory;
    this.#keep = options.keep;
    this.#refuse = options.refuse;
  }

  /** True once a run went to disk. */
  get spilled(): boolean {
    return this.#runs.length > 0;
  }

  /** Documents held in memory now, by estimated bytes (sortedEntries: those not yet handed out). */
  get bytes(): number {
    return this.#bytes;
  }

  /**
   * Takes a document (`bytes`: its estimated size; `stored`: its bytes as stored, when known); a
   * promise only when it spilled a run. @throws QUERY_ERROR past the bound when it may not spill,
   * or past the query's spill bound
   */
  add(doc: Doc, bytes?: number, stored?: Buffer): void | Promise<void> {
    const key = this.#order.keyOf(doc);
    const seq = this.#seq++;
    // After a trim that kept `keep`, a document that does not sort before the last one kept can
    // never be kept (a tie comes later, so it ranks after): dropped before it is sized or held.
    if (this.#worst !== undefined && this.#order.compareKeyed(key, this.#worst) >= 0) return undefined;
    const size = bytes ?? approxBytes(doc);
    this.#entries.push({ doc, key, bytes: size, seq, stored });
    this.#bytes += size;
    const keep = this.#keep;
    // With a keep, at most twice it is held between trims; only what is held counts.
    if (keep !== undefined && this.#entries.length > 2 * keep + TRIM_SLACK) this.#trim(keep);
    if (this.#bytes <= this.#memory.maxBlockingBytes) return undefined;
    // Past the bound with a keep: what is past it goes first; only `keep` documents that do not fit spill.
    if (keep !== undefined && this.#entries.length > keep) {
      this.#trim(keep);
      if (this.#bytes <= this.#memory.maxBlockingBytes) return undefined;
    }
    if (this.#memory.spill === undefined) this.#refuse(this.#memory);
    return this.#spill(this.#memory.spill);
  }

  #sortEntries(): void {
    const order = this.#order;
    this.#entries.sort((a, b) => order.compareKeyed(a.key, b.key) || a.seq - b.seq);
  }

  #trim(keep: number): void {
    this.#sortEntries();
    for (const e of this.#entries.splice(keep)) this.#bytes -= e.bytes;
    // `keep` documents sort before this one (held, and after a spill on disk too): nothing that
    // does not sort before it can make the cut any more.
    if (keep > 0 && this.#entries.length === keep) this.#worst = this.#entries[keep - 1]!.key;
  }

  async #spill(space: SpillSpace): Promise<void> {
    this.#sortEntries();
    const entries = this.#keep === undefined ? this.#entries : this.#entries.slice(0, this.#keep);
    this.#entries = [];
    this.#bytes = 0;
    this.#file ??= await space.create();
    this.#runs.push(await writeRun(this.#file, (function* () {
      for (const e of entries) yield encodeSpilledDoc(e.doc, e.stored);
    })()));
  }

  /** The documents in order (the first `keep` of them), in chunks of `size`; the spill file is removed once read (or abandoned). */
  async *sorted(size = 256): AsyncGenerator<Doc[]> {
    if (this.#file === undefined) {
      this.#sortEntries();
      const docs = this.#entries.map((e) => e.doc);
      this.#entries = [];
      const n = this.#keep === undefined ? docs.length : Math.min(docs.length, this.#keep);
      for (let i = 0; i < n; i += size) yield docs.slice(i, Math.min(i + size, n));
      return;
    }
    let out: Doc[] = [];
    let left = this.#keep ?? Infinity;
    for await (const doc of this.#merged()) {
      if (left-- <= 0) break;
      out.push(doc);
      if (out.length >= size) {
        yield out;
        out = [];
      }
    }
    if (out.length > 0) yield out;
  }

  /** The spilled runs merged into one order, what is still held written first as the last run; the spill file is removed once read (or abandoned). */
  async *#merged(): AsyncGenerator<Doc> {
    const file = this.#file!;
    try {
      if (this.#entries.length > 0) await this.#spill(this.#memory.spill!);
      const order = this.#order;
      yield* mergeRuns(file, this.#runs, (rec) => {
        const doc = decodeSpilledDoc(rec);
        return { item: doc, key: order.keyOf(doc) };
      }, (a, b) => order.compareKeyed(a, b), this.#memory.maxBlockingBytes);
    } finally {
      await file.remove();
    }
  }

  /**
   * The documents in order with their estimated sizes, in chunks of `size`, for a reader that
   * counts what it holds (no keep): in memory, the sorter lets go of each chunk it hands out
   * (`bytes` goes down), and spillRest() writes what it still holds to disk, from where the rest
   * is read. The spill file is removed once read (or abandoned).
   */
  async *sortedEntries(size = 256): AsyncGenerator<readonly SortedDoc[]> {
    if (this.#keep !== undefined) throw new Error('sortedEntries takes every document (no keep)');
    if (this.#file === undefined) {
      this.#sortEntries();
      const out: Array<Entry<K> | undefined> = this.#entries;
      this.#out = out;
      this.#entries = [];
      this.#given = 0;
      while (this.#out !== undefined && this.#given < out.length) {
        const from = this.#given;
        const chunk = out.slice(from, from + size) as Array<Entry<K>>;
        out.fill(undefined, from, from + chunk.length);
        this.#given = from + chunk.length;
        for (const e of chunk) this.#bytes -= e.bytes;
        yield chunk;
      }
      if (this.#out !== undefined) {
        this.#out = undefined;
        return;
      }
    }
    // Spilled, from the start or by spillRest.
    let out: SortedDoc[] = [];
    for await (const doc of this.#merged()) {
      out.push({ doc, bytes: approxBytes(doc) });
      if (out.length >= size) {
        yield out;
        out = [];
      }
    }
    if (out.length > 0) yield out;
  }

  /**
   * While sortedEntries hands out documents from memory: writes those it has not handed out yet to
   * a spill file (a sorted run), from where it reads on. Resolves at once when there are none, or
   * no spill area. @throws QUERY_ERROR past the query's spill bound
   */
  async spillRest(): Promise<void> {
    const out = this.#out;
    const space = this.#memory.spill;
    if (out === undefined || this.#given >= out.length || space === undefined) return;
    const rest = out.slice(this.#given) as Array<Entry<K>>;
    this.#out = undefined;
    this.#file ??= await space.create();
    this.#runs.push(await writeRun(this.#file, (function* () {
      for (const e of rest) yield encodeSpilledDoc(e.doc, e.stored);
    })()));
    this.#bytes = 0;
  }
}
