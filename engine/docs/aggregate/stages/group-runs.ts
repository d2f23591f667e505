/**
 * A $group's spilled runs (group.ts): each run holds the partial groups of one stretch of the
 * input, ordered by group key (value-key.ts groupKey, compared as strings), and the merge meets
 * each group's partial states in input order (equal keys: the earlier run first).
 *
 * A run is a sequence of spill records (spill-file.ts), each a block of about GROUP_BLOCK_BYTES of
 * group records one after another, so that a file append, a read and a heap step are not paid per
 * group. A group record (spill-value-codec.ts for strings and values): the key, a string; an
 * id flag, ID_FROM_KEY when the `_id` is a string (the key is `s` and the `_id`: not written
 * twice), else ID_VALUE and the `_id` as a value; then what the stage writes (each accumulator's
 * state). Keys are read as strings and compared as the in-memory sort compared them; the rest of a
 * record is read by the stage only when its group is at hand.
 */

import type { SpillFile, SpillRun, SpillRunReader, SpillSpace } from '../../../storage/index.js';
import { BinaryHeap } from '../../binary-heap.js';
import { ValueReader, ValueWriter } from '../../spill-value-codec.js';

/** Bytes of group records gathered before they go to the file as one spill record. */
const GROUP_BLOCK_BYTES = 8 * 1024;

const ID_FROM_KEY = 1;
const ID_VALUE = 0;

/** One run being merged: its reader, the block of records it reads, the key of its next record. */
interface RunCursor {
  readonly run: number;
  readonly source: SpillRunReader;
  readonly records: ValueReader;
  key: string;
}

/** The runs of one $group's spilled groups, in one spill file. */
export class GroupRuns {
  readonly #space: SpillSpace;
  #file: SpillFile | undefined;
  readonly #runs: SpillRun[] = [];
  readonly #block = new ValueWriter(2 * GROUP_BLOCK_BYTES);

  constructor(space: SpillSpace) {
    this.#space = space;
  }

  /**
   * Writes `groups` as a run, in key order: `put` writes one group's states after its key and id.
   * @throws QUERY_ERROR past the query's spill bound
   */
  async write<G extends { readonly id: unknown }>(groups: ReadonlyMap<string, G>, put: (w: ValueWriter, group: G) => void): Promise<void> {
    if (groups.size === 0) return;
    // Strings in UTF-16 code unit order, which the merge keeps (sort()'s own comparison of strings
    // took a third of the time a comparator did, and a lookup per key costs less than pairs).
    const keys = [...groups.keys()].sort();
    const file = (this.#file ??= await this.#space.create());
    const w = this.#block;
    w.reset();
    for (const key of keys) {
      const g = groups.get(key)!;
      w.string(key);
      if (typeof g.id === 'string') w.u8(ID_FROM_KEY);
      else {
        w.u8(ID_VALUE);
        w.value(g.id);
      }
      put(w, g);
      if (w.length >= GROUP_BLOCK_BYTES) {
        const p = file.append(w.bytes());
        w.reset();
        if (p !== undefined) await p;
      }
    }
    if (w.length > 0) {
      const p = file.append(w.bytes());
      w.reset();
      if (p !== undefined) await p;
    }
    this.#runs.push(await file.endRun());
  }

  /** The merge of the runs written so far, each read through about `memoryBytes / runs` of buffer. */
  merge(memoryBytes: number): GroupMerge {
    return new GroupMerge(this.#file, this.#runs, memoryBytes);
  }

  remove(): Promise<void> {
    return this.#file?.remove() ?? Promise.resolve();
  }
}

/**
 * The records of every run in key order. next() moves to the next record (true) or past the last
 * (false); then `key` is its key, id() reads its `_id` and `reader` the rest, all of which the
 * stage must read before it calls next() again.
 */
export class GroupMerge {
  readonly #heap = new BinaryHeap<RunCursor>((a, b) => a.key < b.key || (a.key === b.key && a.run < b.run));
  #pending: RunCursor[] | undefined;
  #head: RunCursor | undefined;

  constructor(file: SpillFile | undefined, runs: readonly SpillRun[], memoryBytes: number) {
    const share = memoryBytes / Math.max(1, runs.length);
    this.#pending = file === undefined ? [] : runs.map((r, run) => ({ run, source: file.reader(r, share), records: new ValueReader(), key: '' }));
  }

  /** The key of the record at hand. */
  get key(): string {
    return this.#head!.key;
  }

  /** Reads the rest of the record at hand, after id(). */
  get reader(): ValueReader {
    return this.#head!.records;
  }

  /** The `_id` of the record at hand (read first). */
  id(): unknown {
    const r = this.#head!.records;
    return r.u8() === ID_FROM_KEY ? this.#head!.key.slice(1) : r.value();
  }

  /** Moves to the next record: a promise only when a run's next block had to be read from disk. */
  next(): boolean | Promise<boolean> {
    if (this.#pending !== undefined) return this.#start();
    const head = this.#head;
    if (head !== undefined) {
      if (!head.records.done) {
        head.key = head.records.string();
        this.#heap.replaceRoot(head);
      } else {
        const block = head.source.next();
        if (block instanceof Promise) return block.then((b) => this.#refilled(head, b));
        this.#refilled(head, block);
      }
    }
    return this.#settle();
  }

  async #start(): Promise<boolean> {
    const cursors = this.#pending!;
    this.#pending = undefined;
    for (const c of cursors) {
      const block = await c.source.next();
      if (block === undefined) continue;
      c.records.reset(block);
      c.key = c.records.string();
      this.#heap.push(c);
    }
    return this.#settle();
  }

  // The head's run went on with `block` (undefined: it ended): its next key takes its place in the heap.
  #refilled(head: RunCursor, block: Buffer | undefined): boolean {
    if (block === undefined) this.#heap.pop();
    else {
      head.records.reset(block);
      head.key = head.records.string();
      this.#heap.replaceRoot(head);
    }
    return this.#settle();
  }

  #settle(): boolean {
    this.#head = this.#heap.size > 0 ? this.#heap.root : undefined;
    return this.#head !== undefined;
  }
}
