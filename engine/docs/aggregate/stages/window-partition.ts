/**
 * The partition $setWindowFields works on, as its window functions read it: MongoDB's
 * PartitionIterator over its SpillableCache (partition_iterator.h, spillable_cache.h), rebuilt
 * for a single thread that must not wait on the disk.
 *
 * The sorted input (external-sort.ts) is read one partition at a time (SortedPartitions). A
 * partition's documents are read from it only as far as a window needs them (a window that looks
 * ahead reads ahead; one that ends at the current document does not), and are held in memory, in
 * position order, from the earliest position a reader may still read: what every reader has
 * passed is dropped. When what the stage holds passes the bound (WindowMemory: these documents,
 * the sort's documents not yet handed over, the window functions' state, the values not yet
 * passed on), the held documents go to a spill file of the query as a run (then what the sort
 * still holds), and are read back from there by position. Every reader
 * (PartitionCursor) moves forward only, so it reads a spilled document at most once, through a
 * bounded buffer: each spilled document is written once and read back at most once per reader,
 * and a stage has a fixed number of readers (the output, and a few per output field). If the
 * state alone stays past the bound once the documents are on disk, the stage fails with MongoDB's
 * 5414201 message. The file is removed when the partition is done (or the query ends, fails or is
 * abandoned: the query's spill space removes what is left).
 *
 * Nothing here blocks: a reader that needs a document it does not have returns undefined, and the
 * caller awaits fetch() before asking again (the window functions are resumable: see Wait).
 */

import { performance } from 'node:perf_hooks';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { SpillFile, SpillRun, SpillRunReader, SpillSpace } from '../../../storage/index.js';
import type { Interrupt } from '../../../interrupt.js';
import { decodeSpilledDoc, encodeSpilledDoc, writeRun, type SortedDoc } from '../../external-sort.js';
import type { CompiledSort } from '../../sort.js';
import { compareValues, type Doc } from '../../values.js';
import { Scope, type Expr } from '../expression/expression.js';
import { approxBytes, stageError } from '../stage.js';

const STAGE = '$setWindowFields';

/**
 * What a step of resumable work returns: undefined when it is done, else a promise to await
 * before calling it again (it goes on where it stopped).
 */
export type Wait = Promise<void> | undefined;

const UNREAD: unique symbol = Symbol('unread');

/** A document of the partition with what the window functions read of it. */
export class WindowEntry {
  readonly doc: Doc;
  readonly scope: Scope;
  /** Its estimated size (approxBytes), counted against the stage's bound while held. */
  readonly bytes: number;
  /** The value of the sortBy field, once read (WindowPartition.sortValue). */
  sortValue: unknown = UNREAD;

  constructor(doc: Doc, scope: Scope, bytes: number) {
    this.doc = doc;
    this.scope = scope;
    this.bytes = bytes;
  }
}

/** A partition's documents in sortBy order, as its window functions read them. */
export interface WindowPartition {
  /** A new reader at the partition's first document. */
  cursor(): PartitionCursor;
  /** True when position `j` exists, false past the partition's end; undefined until fetch(j) is awaited. */
  has(j: number): boolean | undefined;
  /** Reads the partition from its input up to position `j` (Infinity: to its end). */
  fetch(j: number): Promise<void>;
  /** The number of documents, once the partition was read to its end (has() was false once). */
  readonly size: number | undefined;
  /** The value of the (single) sortBy field of `e`. */
  sortValue(e: WindowEntry): unknown;
  /** The sortBy key of `e` (for ties). */
  sortKey(e: WindowEntry): unknown[];
  /** Whether two sortBy keys tie. */
  ties(a: unknown[], b: unknown[]): boolean;
  /** What the partition's functions share under `key` (a window tracker of the same bounds), made once. */
  shared<T>(key: string, make: () => T): T;
  /**
   * Called at each step of a long loop (a document entering a window, a scan): undefined, or a
   * promise to await first, at regular steps (the bound checked, spilling the held documents past
   * it; a turn of the event loop given up, and the query's interrupt checked).
   */
  tick(): Wait;
}

/** What holds memory, by estimated bytes (an output field's state, the sort's documents). */
export interface HoldsBytes {
  readonly bytes: number;
}

/**
 * What the stage holds against its bound: the sorted input the sort still holds in memory (it
 * lets go of what it hands out), the partition's documents held, the documents readers decoded
 * from the spill file, the output fields' state, and what is not yet passed on.
 */
export class WindowMemory {
  readonly limit: number;
  /** The sort's documents in memory not yet handed out. */
  readonly input: HoldsBytes;
  /** The partition's documents held in memory. */
  cached = 0;
  /** Documents readers decoded from the spill file and hold. */
  held = 0;
  /** The values and documents not yet passed on. */
  pending = 0;
  /** The output fields' running state. */
  states: readonly HoldsBytes[] = [];
  /** Steps of the stage's loops so far (PartitionCache.tick): the whole stage's, so many small partitions pause too. */
  ticks = 0;
  /** When the stage last took the event loop back (performance.now()). */
  sliceStart = performance.now();

  constructor(limit: number, input: HoldsBytes) {
    this.limit = limit;
    this.input = input;
  }

  get used(): number {
    let n = this.input.bytes + this.cached + this.held + this.pending;
    for (const s of this.states) n += s.bytes;
    return n;
  }

  /** MongoDB's error for window state past the bound (code 5414201). @throws QUERY_ERROR */
  exceeded(): never {
    stageError(STAGE, `Exceeded memory limit in DocumentSourceSetWindowFields, used ${this.used} bytes but max allowed is ${this.limit}`);
  }
}

/** What SortedPartitions reads: a sort's output (external-sort.ts's DocSorter). */
export interface SortedInput extends HoldsBytes {
  sortedEntries(size: number): AsyncIterable<readonly SortedDoc[]>;
  /** Writes what it still holds in memory to disk. */
  spillRest(): Promise<void>;
}

/** The sorted input read one partition at a time: a partition is a run of equal keys. */
export class SortedPartitions {
  readonly #sorter: SortedInput;
  readonly #chunks: AsyncIterator<readonly SortedDoc[]>;
  readonly #partitionOf: (doc: Doc) => unknown;
  #chunk: readonly SortedDoc[] = [];
  #at = 0;
  #key: unknown = null;
  #ended = false;
  /** The current partition's last document was read (the next one's first is at #at). */
  #partitionDone = true;

  constructor(sorter: SortedInput, chunkSize: number, partitionOf: (doc: Doc) => unknown) {
    this.#sorter = sorter;
    this.#chunks = sorter.sortedEntries(chunkSize)[Symbol.asyncIterator]();
    this.#partitionOf = partitionOf;
  }

  /** Moves to the next partition (the current one must have been read to its end): false at the input's end. */
  async start(): Promise<boolean> {
    if (!this.#partitionDone) throw new Error('a partition was left before its end');
    while (this.#at >= this.#chunk.length) {
      if (this.#ended) return false;
      await this.refill();
    }
    this.#key = this.#partitionOf(this.#chunk[this.#at]!.doc);
    this.#partitionDone = false;
    return true;
  }

  /** The current partition's next document; null at its end; undefined when refill() must be awaited first. */
  take(): SortedDoc | null | undefined {
    if (this.#partitionDone) return null;
    if (this.#at >= this.#chunk.length) {
      if (!this.#ended) return undefined;
      this.#partitionDone = true;
      return null;
    }
    const next = this.#chunk[this.#at]!;
    if (compareValues(this.#partitionOf(next.doc), this.#key) !== 0) {
      this.#partitionDone = true;
      return null;
    }
    this.#at++;
    return next;
  }

  /** Reads the next chunk of the sorted input. */
  async refill(): Promise<void> {
    if (this.#at < this.#chunk.length || this.#ended) return;
    const r = await this.#chunks.next();
    this.#chunk = r.done === true ? [] : r.value;
    this.#at = 0;
    if (r.done === true) this.#ended = true;
  }

  /** Writes what the sort still holds in memory to disk (DocSorter.spillRest). */
  spillRest(): Promise<void> {
    return this.#sorter.spillRest();
  }

  /** The sort's documents in memory not yet handed out. */
  get bytes(): number {
    return this.#sorter.bytes;
  }

  /** Ends the reading (the sort's spill file is removed). */
  async close(): Promise<void> {
    await this.#chunks.return?.(undefined);
  }
}

/** Options of a PartitionCache. */
export interface PartitionOptions {
  readonly memory: WindowMemory;
  /** Where the documents go past the bound: undefined when they may not (allowDiskUse false, or no spill area). */
  readonly spill: SpillSpace | undefined;
  readonly interrupt: Interrupt | undefined;
  readonly vars: Scope | undefined;
  /** The sortBy field, when sortBy has exactly one. */
  readonly sortField: Expr | undefined;
  readonly sort: CompiledSort | undefined;
}

/** A run of the spill file: the documents at positions first .. first + records - 1. */
interface PlacedRun {
  readonly run: SpillRun;
  readonly first: number;
}

/** Steps between checks of the bound and the clock (tick), less one: a power of two. */
const CHECK_MASK = 15;
/** The stage runs at most about this long before it gives the event loop a turn (as SQL's slices). */
const SLICE_MS = 8;

/** One partition's documents, in memory from the earliest a reader still reads, spilled past the bound (file comment). */
export class PartitionCache implements WindowPartition {
  readonly #source: SortedPartitions;
  readonly #memory: WindowMemory;
  readonly #space: SpillSpace | undefined;
  readonly #interrupt: Interrupt | undefined;
  readonly #vars: Scope | undefined;
  readonly #sortField: Expr | undefined;
  readonly #sort: CompiledSort | undefined;
  readonly #cursors: PartitionCursor[] = [];
  /** Documents read from the input. */
  #loaded = 0;
  #done = false;
  /** In memory: positions #memStart .. #loaded - 1, at #entries[#head ..]. Below #memStart: on disk or dropped. */
  #memStart = 0;
  #entries: Array<WindowEntry | undefined> = [];
  #head = 0;
  #file: SpillFile | undefined;
  readonly #runs: PlacedRun[] = [];
  readonly #shared = new Map<string, unknown>();

  constructor(source: SortedPartitions, options: PartitionOptions) {
    this.#source = source;
    this.#memory = options.memory;
    this.#space = options.spill;
    this.#interrupt = options.interrupt;
    this.#vars = options.vars;
    this.#sortField = options.sortField;
    this.#sort = options.sort;
  }

  cursor(): PartitionCursor {
    const c = new PartitionCursor(this);
    this.#cursors.push(c);
    return c;
  }

  get size(): number | undefined {
    return this.#done ? this.#loaded : undefined;
  }

  /** The first position held in memory (below it: on disk, or dropped). */
  get memStart(): number {
    return this.#memStart;
  }

  /** Documents read from the input so far. */
  get loaded(): number {
    return this.#loaded;
  }

  /** True once the partition was read to its end. */
  get done(): boolean {
    return this.#done;
  }

  has(j: number): boolean | undefined {
    if (j < this.#loaded) return true;
    if (this.pullTo(j)) return true;
    return this.#done ? false : undefined;
  }

  sortValue(e: WindowEntry): unknown {
    if (e.sortValue === UNREAD) e.sortValue = this.#sortField!(e.scope);
    return e.sortValue;
  }

  sortKey(e: WindowEntry): unknown[] {
    return this.#sort!.keyOf(e.doc);
  }

  ties(a: unknown[], b: unknown[]): boolean {
    return this.#sort!.compareKeyed(a, b) === 0;
  }

  shared<T>(key: string, make: () => T): T {
    let v = this.#shared.get(key) as T | undefined;
    if (v === undefined) {
      v = make();
      this.#shared.set(key, v);
    }
    return v;
  }

  /** The entry at `j` (memStart <= j < loaded). */
  entryAt(j: number): WindowEntry {
    return this.#entries[this.#head + (j - this.#memStart)]!;
  }

  /** Reads documents from the input's buffered chunk until position `j` exists: false when the chunk ran out (or the partition did) first. */
  pullTo(j: number): boolean {
    while (this.#loaded <= j) {
      const next = this.#source.take();
      if (next === undefined) return false;
      if (next === null) {
        this.#done = true;
        return false;
      }
      this.#entries.push(new WindowEntry(next.doc, Scope.of(next.doc, this.#vars), next.bytes));
      this.#memory.cached += next.bytes;
      this.#loaded++;
    }
    return true;
  }

  async fetch(j: number): Promise<void> {
    const memory = this.#memory;
    for (;;) {
      this.pullTo(j);
      // What was read may pass the bound: spilled before more is read. A long read ahead (a
      // window unbounded above) gives up the event loop as the windows' loops do.
      const over = memory.used > memory.limit;
      const due = performance.now() - memory.sliceStart >= SLICE_MS;
      if (over || due) await this.#checkpoint(over, due);
      if (this.#loaded > j || this.#done) return;
      await this.#source.refill();
    }
  }

  tick(): Wait {
    const memory = this.#memory;
    if ((++memory.ticks & CHECK_MASK) !== 0) return undefined;
    this.#drop();
    const over = memory.used > memory.limit;
    const due = performance.now() - memory.sliceStart >= SLICE_MS;
    if (!over && !due) return undefined;
    return this.#checkpoint(over, due);
  }

  async #checkpoint(over: boolean, due: boolean): Promise<void> {
    if (over) await this.relieve();
    if (due) {
      await nextTurn();
      this.#memory.sliceStart = performance.now();
    }
    this.#interrupt?.check();
  }

  /**
   * Brings what the stage holds within the bound: drops what no reader needs, spills the held
   * documents, then what the sort still holds in memory, and fails with MongoDB's message when
   * that is not enough (the window state alone passes the bound). @throws QUERY_ERROR
   */
  async relieve(): Promise<void> {
    this.#drop();
    const memory = this.#memory;
    if (memory.used <= memory.limit) return;
    const space = this.#space;
    if (space !== undefined && this.#loaded > this.#memStart) await this.#spill(space);
    if (space !== undefined && memory.used > memory.limit && memory.input.bytes > 0) await this.#source.spillRest();
    if (memory.used > memory.limit) memory.exceeded();
  }

  /** Drops the documents below every reader's position from memory. */
  #drop(): void {
    let floor = this.#loaded;
    for (const c of this.#cursors) floor = Math.min(floor, c.position);
    if (floor <= this.#memStart) return;
    let freed = 0;
    for (let j = this.#memStart; j < floor; j++) {
      freed += this.#entries[this.#head]!.bytes;
      this.#entries[this.#head++] = undefined;
    }
    this.#memory.cached -= freed;
    this.#memStart = floor;
    if (this.#head > 1024 && this.#head * 2 > this.#entries.length) {
      this.#entries = this.#entries.slice(this.#head);
      this.#head = 0;
    }
  }

  /** Writes the held documents to the spill file as a run; readers then read them from there. */
  async #spill(space: SpillSpace): Promise<void> {
    const first = this.#memStart;
    const entries = this.#entries.slice(this.#head) as WindowEntry[];
    this.#file ??= await space.create();
    const run = await writeRun(this.#file, (function* () {
      for (const e of entries) yield encodeSpilledDoc(e.doc);
    })());
    this.#runs.push({ run, first });
    this.#entries = [];
    this.#head = 0;
    this.#memStart = this.#loaded;
    this.#memory.cached = 0;
    this.#interrupt?.check();
  }

  /** The index of the run holding position `j` (searched from run `from`). */
  runOf(j: number, from: number): number {
    for (let r = Math.max(0, from); r < this.#runs.length; r++) {
      const { first, run } = this.#runs[r]!;
      if (j >= first && j < first + run.records) return r;
    }
    throw new Error(`position ${j} of a window partition is neither held nor spilled`);
  }

  /** A reader of run `r` and the position of its first record. */
  reader(r: number): { reader: SpillRunReader; first: number; records: number } {
    const { run, first } = this.#runs[r]!;
    // The smallest buffer the file gives: there is one per reader.
    return { reader: this.#file!.reader(run, 0), first, records: run.records };
  }

  /** A spilled document read back, counted while a reader holds it. */
  decode(record: Buffer): WindowEntry {
    const doc = decodeSpilledDoc(record);
    const bytes = approxBytes(doc);
    this.#memory.held += bytes;
    return new WindowEntry(doc, Scope.of(doc, this.#vars), bytes);
  }

  /** A reader let go of a document it decoded. */
  release(e: WindowEntry): void {
    this.#memory.held -= e.bytes;
  }

  /** Drops everything and removes the spill file. Never rejects. */
  async close(): Promise<void> {
    this.#memory.cached = 0;
    for (const c of this.#cursors) c.close();
    this.#entries = [];
    await this.#file?.remove();
    this.#file = undefined;
  }
}

/**
 * A reader of a partition that moves forward only: it reads no position below its `position`
 * again, except the document it read last, which it holds. Positions in memory are read at once;
 * a spilled one through its own reader of the spill file, sequentially (at most once each).
 */
export class PartitionCursor {
  readonly #cache: PartitionCache;
  #position = 0;
  #entryAt = -1;
  #entry: WindowEntry | undefined;
  /** The held entry was decoded from the spill file (counted while held). */
  #decoded = false;
  #run = -1;
  #reader: SpillRunReader | undefined;
  /** The position of the record #reader gives next. */
  #next = 0;
  /** The position after #reader's run. */
  #runEnd = 0;
  #inflight: Promise<Buffer | undefined> | undefined;

  constructor(cache: PartitionCache) {
    this.#cache = cache;
  }

  /** Positions below this are not read again (but the document held). */
  get position(): number {
    return this.#position;
  }

  /** Reads nothing below `j` again. */
  advance(j: number): void {
    if (j > this.#position) this.#position = j;
  }

  /**
   * The document at `j` (the one held, or at `position` or after): null past the partition's end;
   * undefined when fetch(j) must be awaited first.
   */
  at(j: number): WindowEntry | null | undefined {
    if (j === this.#entryAt) return this.#entry!;
    if (j < this.#position) throw new Error(`a partition reader went back from ${this.#position} to ${j}`);
    const cache = this.#cache;
    if (j >= cache.memStart) {
      if (j >= cache.loaded && !cache.pullTo(j)) return cache.done ? null : undefined;
      this.#hold(j, cache.entryAt(j), false);
      return this.#entry!;
    }
    if (this.#inflight !== undefined) return undefined;
    return this.#readTo(j) ? this.#entry! : undefined;
  }

  /** Makes at(j) answer. */
  async fetch(j: number): Promise<void> {
    for (;;) {
      if (this.#inflight !== undefined) {
        const record = await this.#inflight;
        this.#inflight = undefined;
        this.#take(record, j);
      }
      if (this.at(j) !== undefined) return;
      if (this.#inflight === undefined) await this.#cache.fetch(j);
    }
  }

  // Reads spilled records up to the one at `j` (decoded and held): false when a read from disk is in flight.
  #readTo(j: number): boolean {
    const cache = this.#cache;
    if (this.#reader === undefined || j >= this.#runEnd) {
      this.#run = cache.runOf(j, this.#run);
      const { reader, first, records } = cache.reader(this.#run);
      this.#reader = reader;
      this.#next = first;
      this.#runEnd = first + records;
    }
    while (this.#next <= j) {
      const record = this.#reader.next();
      if (record instanceof Promise) {
        // Awaited by fetch(); a query that fails meanwhile must not leave it unhandled.
        record.catch(() => undefined);
        this.#inflight = record;
        return false;
      }
      this.#take(record, j);
    }
    return true;
  }

  // The record at #next: decoded and held when it is the one at `j`, else skipped.
  #take(record: Buffer | undefined, j: number): void {
    if (record === undefined) throw new Error(`the spilled partition ends before position ${this.#next}`);
    if (this.#next === j) this.#hold(j, this.#cache.decode(record), true);
    this.#next++;
  }

  #hold(j: number, e: WindowEntry, decoded: boolean): void {
    if (this.#decoded) this.#cache.release(this.#entry!);
    this.#entryAt = j;
    this.#entry = e;
    this.#decoded = decoded;
    if (j > this.#position) this.#position = j;
  }

  /** Lets go of what it holds. */
  close(): void {
    if (this.#decoded) this.#cache.release(this.#entry!);
    this.#entry = undefined;
    this.#entryAt = -1;
    this.#decoded = false;
    this.#reader = undefined;
  }
}
