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
 * state). Keys are read as strings and compared as JavaScript compares strings (UTF-16 code
 * units), the order of the runs; the rest of a record is read by the stage when it is at hand.
 * What a merge holds: each run's read buffer (the stage's bound shared among them, as a sort's
 * merge has it) and the key of each run's next record.
 */

import type { SpillFile, SpillRun, SpillRunReader, SpillSpace } from '../../../storage/index.js';
import { BinaryHeap } from '../../binary-heap.js';
import { ValueReader, ValueWriter } from '../../spill-value-codec.js';

/** Bytes of group records gathered before they go to the file as one spill record. */
const GROUP_BLOCK_BYTES = 8 * 1024;

/** A run stages its record bodies in at most this share of the stage's bound (GroupRuns.write)... */
const STAGE_SHARE = 8;
/** ...and at most this many bytes, whatever the bound (offsets into them are 32-bit). */
const STAGE_MAX_BYTES = 1024 * 1024 * 1024;
const STAGE_INITIAL_BYTES = 64 * 1024;

const ID_FROM_KEY = 1;
const ID_VALUE = 0;

/** A group record's body: its id flag and id, then what the stage puts (each accumulator's state). */
function writeBody<G extends { readonly id: unknown }>(w: ValueWriter, g: G, put: (w: ValueWriter, group: G) => void): void {
  if (typeof g.id === 'string') w.u8(ID_FROM_KEY);
  else {
    w.u8(ID_VALUE);
    w.value(g.id);
  }
  put(w, g);
}

/** One run being merged: where its blocks come from, the block at hand, the key of its next record. */
interface RunCursor {
  readonly run: number;
  readonly source: SpillRunReader;
  /** Reads the block the source gave last, which stays valid until the source's next call: made only once it is read. */
  readonly records: ValueReader;
  key: string;
}

/** A run's records staged (GroupRuns.write): the keys, in the map's order, the order of their indexes by key, where each record's body starts in `bodies`. */
interface Staged {
  readonly keys: readonly string[];
  readonly order: readonly number[];
  readonly starts: Int32Array;
  readonly bodies: Buffer;
}

/** The runs of one $group's spilled groups, in one spill file. */
export class GroupRuns {
  readonly #space: SpillSpace;
  /** Bytes of record bodies a run may stage (STAGE_SHARE, STAGE_MAX_BYTES). */
  readonly #stageBytes: number;
  #file: SpillFile | undefined;
  readonly #runs: SpillRun[] = [];
  readonly #block = new ValueWriter(2 * GROUP_BLOCK_BYTES);

  /** `boundBytes`: what the stage may hold (QueryMemory.maxBlockingBytes). */
  constructor(space: SpillSpace, boundBytes: number) {
    this.#space = space;
    this.#stageBytes = Math.min(STAGE_MAX_BYTES, Math.floor(boundBytes / STAGE_SHARE));
  }

  /**
   * Writes `groups` as a run, in key order: `put` writes one group's states after its key and id.
   * @throws QUERY_ERROR past the query's spill bound
   */
  async write<G extends { readonly id: unknown }>(groups: ReadonlyMap<string, G>, put: (w: ValueWriter, group: G) => void): Promise<void> {
    if (groups.size === 0) return;
    const file = (this.#file ??= await this.#space.create());
    const w = this.#block;
    w.reset();
    const staged = this.#staged(groups, put);
    if (staged !== undefined) {
      const { keys, order, starts, bodies } = staged;
      for (const i of order) {
        w.string(keys[i]!);
        w.copy(bodies, starts[i]!, starts[i + 1]!);
        if (w.length >= GROUP_BLOCK_BYTES) await this.#append(file);
      }
    } else {
      // Strings in UTF-16 code unit order, as the merge compares them.
      for (const key of [...groups.keys()].sort()) {
        w.string(key);
        writeBody(w, groups.get(key)!, put);
        if (w.length >= GROUP_BLOCK_BYTES) await this.#append(file);
      }
    }
    if (w.length > 0) await this.#append(file);
    this.#runs.push(await file.endRun());
  }

  /**
   * The bodies of the groups' records (what follows the key), written in the map's order (the
   * order the groups were made in, near one another in memory), and the keys' indexes in key
   * order. Taken from the map in key order, each group was a jump in memory: at 160k groups a
   * run, the lookup and the group's fields cost more than the rest of its record. Undefined when
   * the bodies pass the staging bound (long lists and the like): the run is then written straight
   * from the groups.
   */
  #staged<G extends { readonly id: unknown }>(groups: ReadonlyMap<string, G>, put: (w: ValueWriter, group: G) => void): Staged | undefined {
    const n = groups.size;
    // Sized once: pushed one at a time, 160k keys and indexes took as long as the sort.
    const keys = new Array<string>(n);
    const order = new Array<number>(n);
    const starts = new Int32Array(n + 1);
    const w = new ValueWriter(Math.min(STAGE_INITIAL_BYTES, this.#stageBytes + 1));
    let i = 0;
    for (const [key, g] of groups) {
      keys[i] = key;
      order[i] = i;
      starts[i++] = w.length;
      writeBody(w, g, put);
      if (w.length > this.#stageBytes) return undefined;
    }
    starts[n] = w.length;
    // UTF-16 code unit order, as the merge compares them (a run's keys are distinct).
    order.sort((a, b) => (keys[a]! < keys[b]! ? -1 : 1));
    return { keys, order, starts, bodies: w.bytes() };
  }

  async #append(file: SpillFile): Promise<void> {
    const p = file.append(this.#block.bytes());
    this.#block.reset();
    if (p !== undefined) await p;
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
        return block instanceof Promise ? block.then((b) => this.#refilled(head, b)) : this.#refilled(head, block);
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
