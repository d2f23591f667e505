import { pageStatsOf, type Entry, type ScanRange, type TreePageStats, type TreeReader } from './btree.js';
import { ValueRun } from './btree-node.js';

/**
 * Write buffering for randomly keyed trees (the documents model's secondary indexes).
 *
 * A random key lands on a random leaf: at 1M documents an index on a random field has ~14k
 * leaves, and every checkpoint rewrote nearly all of them for the ~20k documents inserted since
 * the one before (8 KiB written per ~80-byte entry). A buffered tree `name` of 200k entries or
 * more (TreeSetOptions.bufferFrom; a smaller one takes its writes directly) keeps its changes in
 * a second tree, its delta (`name` + DELTA_SUFFIX): a put is a delta entry [DELTA_PUT][value], a
 * delete a tombstone [DELTA_DELETE]. The delta is small, so its leaves are few and dense, and a
 * checkpoint writes those instead of the main tree's. Once the delta holds an eighth of the main
 * tree's entries (TreeSet.mergeDue), the tenant store merges it into the main tree in key order,
 * a chunk per event-loop turn: each main leaf is then rewritten once for all the entries the
 * delta gathered for it.
 *
 * Reads see the two as one tree (MergedReader): a delta entry overrides the main tree's, a
 * tombstone hides it. Both trees are in the same tree set, so a snapshot takes both roots at
 * once, and a merge chunk runs within one turn: no reader sees half of one.
 *
 * Merges are not logged: they change how the state is laid out, never what it holds. A
 * checkpoint captures the two trees together at its lsn, merged or not, and replaying the log
 * after it puts the later changes into the delta again, which overrides whatever the merges did
 * with the older ones, and wherever a replayed write goes (TreeSet.put/delete route it), the
 * state it leaves reads the same. Reads merge a tree's delta whenever it has one, and a write
 * that goes to the main tree directly (a small tree, or a store opened without buffering)
 * removes the delta's entry for its key, so any store reads and writes a buffered tree right,
 * whatever its options.
 */

/** Suffix of a buffered tree's delta tree (no name the engine makes contains NUL). */
export const DELTA_SUFFIX = '\u0000delta';
/** First byte of a delta entry that puts the rest of it as the value. */
export const DELTA_PUT = 1;
/** The whole of a delta entry that deletes its key. */
export const DELTA_DELETE = 0;

export function deltaName(name: string): string {
  return name + DELTA_SUFFIX;
}

export function isDeltaName(name: string): boolean {
  return name.endsWith(DELTA_SUFFIX);
}

/** The main tree's name of delta tree `delta`. */
export function mainName(delta: string): string {
  return delta.slice(0, -DELTA_SUFFIX.length);
}

/**
 * The names among `names` (trees, with `count` their entries) that hold a key, a delta read as
 * part of its tree: a tree with a delta holds one when its first merged key exists (`read` gives
 * a tree as readers see it; a step or two, unless tombstones hide the main tree's first keys).
 */
export function treeNames(names: Iterable<string>, count: (name: string) => number, read: (name: string) => TreeView | undefined): string[] {
  const out: string[] = [];
  for (const name of names) {
    if (count(name) === 0) continue;
    if (isDeltaName(name)) {
      const main = mainName(name);
      if (read(main)?.keys({ limit: 1 }).next().done === false) out.push(main);
    } else if (count(deltaName(name)) === 0) {
      out.push(name);
    }
  }
  return out.sort();
}

/** Values of a merged run handed out together by MergedReader.valueRuns. */
const RUN_VALUES = 128;

/** The read side of a tree: a TreeReader, or a buffered tree's main tree and delta read as one. */
export interface TreeView {
  get(bytes: Uint8Array): Buffer | undefined;
  getInto(bytes: Uint8Array, run: ValueRun): boolean;
  has(bytes: Uint8Array): boolean;
  scan(range?: ScanRange): Generator<Entry>;
  values(range?: ScanRange): IterableIterator<Buffer>;
  valueRuns(range?: ScanRange): Generator<ValueRun>;
  keys(range?: ScanRange): Generator<Buffer>;
  collectValues(range: ScanRange, max: number, out: Buffer[]): boolean;
  countRange(range?: ScanRange): number;
  pageStats(): TreePageStats;
  /** pageStats a step at a time (TreeReader.pageStatsSteps). */
  pageStatsSteps(stats: TreePageStats, every: number): Generator<void>;
}

const EMPTY = Buffer.alloc(0);

function bounds(range: ScanRange): ScanRange {
  return { gt: range.gt, gte: range.gte, lt: range.lt, lte: range.lte, reverse: range.reverse };
}

function* asEntries(keys: Generator<Buffer>): Generator<Entry> {
  for (const key of keys) yield [key, EMPTY];
}

/**
 * A buffered tree read as one: `main` (absent while it holds nothing) with `delta`'s entries
 * over it. Ranges the delta has no entry in are read from the main tree alone, as fast as an
 * unbuffered tree; the others merge the two in key order.
 */
export class MergedReader implements TreeView {
  readonly #main: TreeReader | undefined;
  readonly #delta: TreeReader;

  constructor(main: TreeReader | undefined, delta: TreeReader) {
    this.#main = main;
    this.#delta = delta;
  }

  get(bytes: Uint8Array): Buffer | undefined {
    const d = this.#delta.get(bytes);
    if (d !== undefined) return d[0] === DELTA_PUT ? d.subarray(1) : undefined;
    return this.#main?.get(bytes);
  }

  getInto(bytes: Uint8Array, run: ValueRun): boolean {
    if (this.#delta.getInto(bytes, run)) {
      if (run.bufs[0]![run.starts[0]!] !== DELTA_PUT) {
        run.count = 0;
        return false;
      }
      run.starts[0]!++;
      run.lengths[0]!--;
      return true;
    }
    return this.#main?.getInto(bytes, run) ?? false;
  }

  has(bytes: Uint8Array): boolean {
    const d = this.#delta.get(bytes);
    if (d !== undefined) return d[0] === DELTA_PUT;
    return this.#main?.has(bytes) ?? false;
  }

  /** True when the delta holds an entry within `range` (its bounds; the limit aside). */
  #deltaIn(range: ScanRange): boolean {
    return this.#delta.countRange({ ...bounds(range), limit: 1 }) > 0;
  }

  /**
   * The merged entries within `range`, in its order, up to its limit; values are read only with
   * `values` (else every entry's value is empty, and the main tree's overflow pages are not read).
   */
  *#merged(range: ScanRange, values: boolean): Generator<Entry> {
    const reverse = range.reverse === true;
    const limit = range.limit ?? Infinity;
    if (limit <= 0) return;
    const b = bounds(range);
    const main = this.#main === undefined ? undefined : values ? this.#main.scan(b) : asEntries(this.#main.keys(b));
    const delta = this.#delta.scan(b);
    try {
      let m = main?.next();
      let d = delta.next();
      let n = 0;
      while (n < limit) {
        const mDone = m === undefined || m.done === true;
        if (mDone && d.done === true) return;
        let c: number;
        if (mDone) c = 1;
        else if (d.done === true) c = -1;
        else c = reverse ? Buffer.compare(d.value[0], m!.value![0]) : Buffer.compare(m!.value![0], d.value[0]);
        if (c < 0) {
          const entry = m!.value as Entry;
          m = main!.next();
          n++;
          yield entry;
          continue;
        }
        const [key, v] = d.value as Entry;
        if (c === 0) m = main!.next();
        d = delta.next();
        if (v[0] === DELTA_PUT) {
          n++;
          yield [key, values ? v.subarray(1) : EMPTY];
        }
      }
    } finally {
      main?.return(undefined);
      delta.return(undefined);
    }
  }

  *scan(range: ScanRange = {}): Generator<Entry> {
    if (!this.#deltaIn(range)) {
      if (this.#main !== undefined) yield* this.#main.scan(range);
      return;
    }
    yield* this.#merged(range, true);
  }

  *values(range: ScanRange = {}): Generator<Buffer> {
    if (!this.#deltaIn(range)) {
      if (this.#main !== undefined) yield* this.#main.values(range);
      return;
    }
    for (const [, value] of this.#merged(range, true)) yield value;
  }

  *valueRuns(range: ScanRange = {}): Generator<ValueRun> {
    if (!this.#deltaIn(range)) {
      if (this.#main !== undefined) yield* this.#main.valueRuns(range);
      return;
    }
    const run = new ValueRun();
    for (const [, value] of this.#merged(range, true)) {
      run.push(value, 0, value.length);
      if (run.count >= RUN_VALUES) {
        yield run;
        run.count = 0;
      }
    }
    if (run.count > 0) yield run;
  }

  *keys(range: ScanRange = {}): Generator<Buffer> {
    if (!this.#deltaIn(range)) {
      if (this.#main !== undefined) yield* this.#main.keys(range);
      return;
    }
    for (const [key] of this.#merged(range, false)) yield key;
  }

  collectValues(range: ScanRange, max: number, out: Buffer[]): boolean {
    if (!this.#deltaIn(range)) return this.#main?.collectValues(range, max, out) ?? false;
    let taken = 0;
    for (const [, value] of this.#merged(range, true)) {
      if (taken >= max) return true;
      out.push(value);
      taken++;
    }
    return false;
  }

  /**
   * The main tree's count within the range's bounds, corrected by each delta entry in them (a
   * put of a key the main tree lacks adds one, a tombstone of a key it has takes one away): as
   * many probes of the main tree as the delta has entries in the range.
   */
  countRange(range: ScanRange = {}): number {
    const b = bounds(range);
    let n = this.#main?.countRange(b) ?? 0;
    for (const [key, v] of this.#delta.scan(b)) {
      const inMain = this.#main?.has(key) ?? false;
      if (v[0] === DELTA_PUT) {
        if (!inMain) n++;
      } else if (inMain) {
        n--;
      }
    }
    return range.limit === undefined ? n : Math.max(0, Math.min(n, range.limit));
  }

  /** Both trees' pages together. */
  pageStats(): TreePageStats {
    return pageStatsOf(this);
  }

  /** Both trees' pages: the main tree's, then the delta's. */
  *pageStatsSteps(stats: TreePageStats, every: number): Generator<void> {
    if (this.#main !== undefined) yield* this.#main.pageStatsSteps(stats, every);
    yield* this.#delta.pageStatsSteps(stats, every);
  }
}

/** A reusable buffer for delta entries: BTree.put copies the value it is given. */
let scratch = Buffer.allocUnsafe(256);

/** The delta entry that puts `value`: valid until the next call (put copies it). */
export function deltaPutEntry(value: Uint8Array): Buffer {
  if (scratch.length < value.length + 1) scratch = Buffer.allocUnsafe(Math.max(value.length + 1, scratch.length * 2));
  scratch[0] = DELTA_PUT;
  scratch.set(value, 1);
  return scratch.subarray(0, value.length + 1);
}

export const DELTA_TOMBSTONE = Buffer.from([DELTA_DELETE]);
