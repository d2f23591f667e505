/**
 * Cursors: a find or an aggregation answered in batches, as MongoDB's find and aggregate commands
 * answer a first batch and a cursor id, and getMore the batches after it.
 *
 * A cursor is the query itself, suspended between batches: its read runs on the one snapshot it
 * took when it began (docs-model.ts, docsFindCursor and docsAggregateCursor), so every batch shows
 * the collection as it was then, writes made since included in none (MongoDB's cursors read the
 * current data at each batch; a "snapshot" read concern gives this). A cursor ends when its last
 * batch is handed out, when it is killed (killCursors), when it has been left idle for the
 * registry's idle time, when its snapshot outlives the store's snapshot age limit (its next batch
 * fails), and when its tenant's store closes. Its id names it to its tenant alone: another
 * tenant's request with the same id finds nothing.
 *
 * What an idle cursor holds: its snapshot (old pages, under the memory governor as every snapshot
 * is), the documents of its last read chunk not handed out yet, and a spilled sort's merge buffers.
 * The registry bounds how many are open, per tenant and in all.
 */

import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { fail } from '../errors.js';
import { interruptOf, type ClientWatch, type Interrupt } from '../interrupt.js';
import { approxBytes, chunksOf } from './aggregate/stage.js';
import type { Doc } from './values.js';

/** A batch is cut once it holds this many bytes of documents (MongoDB's 16 MiB batch bound). */
export const CURSOR_BATCH_BYTES = 16 * 1024 * 1024;
/** Most documents a batch may ask for (find's own limit bound). */
export const MAX_BATCH_SIZE = 10_000;

/** A suspended query: its output a chunk at a time, and what to release when it ends. */
export interface CursorSource {
  readonly batches: AsyncIterator<Doc[]>;
  /** Releases the snapshot and the spill files; called once, however the cursor ends. */
  close(): Promise<void>;
  /** What a failure of the read becomes (an aggregation's value too large to hold, say). */
  mapError?(err: unknown): unknown;
}

/** A find or an aggregation opened as a cursor: its source and the interrupt its batches set. */
export interface OpenedCursor {
  readonly source: CursorSource;
  readonly interrupt: CursorInterrupt;
  /** The collection it reads; null for a collection-less aggregation. */
  readonly collection: string | null;
}

/** A cursor over documents already at hand (an aggregation the external MongoDB answered), a chunk at a time. */
export function cursorOfDocuments(collection: string | null, docs: readonly Doc[], interrupt: CursorInterrupt): OpenedCursor {
  return { collection, interrupt, source: { batches: chunksOf(docs)[Symbol.asyncIterator](), close: () => Promise.resolve() } };
}

/**
 * A request's batchSize: an integer from 0 to MAX_BATCH_SIZE (0: a find or aggregate that only
 * opens its cursor, as MongoDB's batchSize 0); `fallback` when absent.
 * @throws VALIDATION_FAILED otherwise
 */
export function batchSizeOf(value: unknown, fallback: number, field = 'batchSize'): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > MAX_BATCH_SIZE) {
    fail('VALIDATION_FAILED', `${field} must be an integer between 0 and ${MAX_BATCH_SIZE}`, { field });
  }
  return value;
}

/** MongoDB's first batch when none is asked for (find's and aggregate's default of 101 documents). */
export const DEFAULT_FIRST_BATCH = 101;

/** The time limits and client of one batch's request. */
export interface BatchGuard {
  /** The server's limit for one request (TETRA_MQL_TIME_LIMIT_MS), 0 or absent: none. */
  readonly timeLimitMs?: number;
  readonly client?: ClientWatch;
}

/**
 * The Interrupt a cursor's query consults: each batch's own request (its server time limit and its
 * client), and the query's maxTimeMS counted over the time its batches spend, not the time between
 * them (MongoDB counts a cursor's maxTimeMS over its processing time).
 */
export class CursorInterrupt implements Interrupt {
  readonly #budgetMs: number;
  readonly #timedOut: (limitMs: number) => never;
  readonly #clientGone: () => never;
  #usedMs = 0;
  #batchStart = 0;
  #batch: Interrupt = { check() {} };

  /** `maxTimeMS`: the query's own limit over all its batches (0: none). */
  constructor(maxTimeMS: number, timedOut: (limitMs: number) => never, clientGone: () => never) {
    this.#budgetMs = maxTimeMS;
    this.#timedOut = timedOut;
    this.#clientGone = clientGone;
  }

  /** A batch begins for a request with these limits. */
  begin(guard: BatchGuard): void {
    this.#batchStart = performance.now();
    this.#batch = interruptOf({ timeLimitMs: guard.timeLimitMs, timedOut: this.#timedOut, client: guard.client, clientGone: this.#clientGone });
  }

  /** The batch is over: its time counts against the query's maxTimeMS. */
  end(): void {
    this.#usedMs += performance.now() - this.#batchStart;
    this.#batch = { check() {} };
  }

  check(): void {
    this.#batch.check();
    if (this.#budgetMs > 0 && this.#usedMs + (performance.now() - this.#batchStart) > this.#budgetMs) this.#timedOut(this.#budgetMs);
  }
}

/** One batch handed out: its documents, and the cursor's id while more may follow (null once it is exhausted). */
export interface Batch {
  readonly documents: Doc[];
  readonly cursorId: string | null;
}

interface Cursor {
  readonly id: string;
  readonly tenant: string;
  /** The collection it reads (`null`: a collection-less aggregation), which getMore must name. */
  readonly collection: string | null;
  /** What the tenant's store was when it began: a getMore finding another one (reopened) finds the cursor gone. */
  readonly owner: object;
  readonly source: CursorSource;
  readonly interrupt: CursorInterrupt;
  readonly batchSize: number;
  /** Read from the source and not handed out yet, from `at`. */
  held: Doc[];
  at: number;
  busy: boolean;
  lastUsed: number;
}

export interface CursorLimits {
  /** Cursors open at once in the whole process. */
  readonly maxOpen: number;
  /** Cursors open at once per tenant. */
  readonly maxPerTenant: number;
  /** A cursor left this long without a getMore is closed (0: never). */
  readonly idleMs: number;
}

export const DEFAULT_CURSOR_LIMITS: CursorLimits = { maxOpen: 1000, maxPerTenant: 100, idleMs: 10 * 60_000 };

/** The open cursors of a process, by id; each known to its tenant alone. */
export class CursorRegistry {
  readonly #limits: CursorLimits;
  readonly #cursors = new Map<string, Cursor>();
  readonly #perTenant = new Map<string, number>();
  readonly #timer: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(limits: CursorLimits = DEFAULT_CURSOR_LIMITS) {
    this.#limits = limits;
    if (limits.idleMs > 0) {
      this.#timer = setInterval(() => this.#closeIdle(), Math.max(100, Math.min(limits.idleMs / 4, 30_000)));
      this.#timer.unref();
    }
  }

  /** Open cursors, in all or of one tenant. */
  count(tenant?: string): number {
    return tenant === undefined ? this.#cursors.size : (this.#perTenant.get(tenant) ?? 0);
  }

  /**
   * Room for one more cursor of `tenant`, checked when a query outlives its first batch.
   * @throws RATE_LIMITED when the tenant or the process holds its most
   */
  assertRoom(tenant: string): void {
    if (this.#closed) fail('UNAVAILABLE', 'the database is shutting down');
    const own = this.#perTenant.get(tenant) ?? 0;
    if (own >= this.#limits.maxPerTenant) {
      fail('RATE_LIMITED', `too many open cursors: this tenant holds ${own}, the most it may; read them to their end or close some with killCursors`, { retryAfterSeconds: 1, openCursors: own });
    }
    if (this.#cursors.size >= this.#limits.maxOpen) {
      fail('RATE_LIMITED', `too many open cursors in the server (${this.#cursors.size}); retry once some are done`, { retryAfterSeconds: 1 });
    }
  }

  /**
   * The first batch of a query opened as a cursor. When the source is not exhausted by it, the
   * cursor is kept (its id in the answer) if the tenant and the process have room for one more,
   * else the source is closed and the request refused: a query that ends within its first batch
   * never needs room. The source is closed on any failure.
   * @throws RATE_LIMITED when the tenant or the process holds its most cursors (assertRoom)
   */
  async first(tenant: string, owner: object, collection: string | null, source: CursorSource, interrupt: CursorInterrupt, batchSize: number, guard: BatchGuard): Promise<Batch> {
    if (this.#closed) fail('UNAVAILABLE', 'the database is shutting down');
    const cursor: Cursor = { id: randomBytes(12).toString('base64url'), tenant, collection, owner, source, interrupt, batchSize, held: [], at: 0, busy: true, lastUsed: Date.now() };
    const { documents, exhausted } = await this.#read(cursor, batchSize, guard);
    if (!exhausted) {
      try {
        this.assertRoom(tenant);
      } catch (err) {
        await closeOnce(cursor);
        throw err;
      }
      this.#add(cursor);
      return { documents, cursorId: cursor.id };
    }
    await closeOnce(cursor);
    return { documents, cursorId: null };
  }

  /**
   * The next batch of a tenant's cursor.
   * @throws NOT_FOUND when the tenant has no such cursor (never opened, exhausted, killed, timed out, or its store closed)
   * @throws VALIDATION_FAILED when `collection` is not the one it reads
   * @throws CONFLICT while another getMore of it runs
   * @throws NOT_FOUND when it is killed while this batch reads
   */
  async getMore(tenant: string, owner: object, id: string, collection: string | null, batchSize: number | undefined, guard: BatchGuard): Promise<Batch> {
    const cursor = this.#cursors.get(id);
    if (cursor === undefined || cursor.tenant !== tenant) fail('NOT_FOUND', `cursor id ${id} not found`, { cursorId: id });
    if (cursor.owner !== owner) {
      // The tenant's store closed and opened again since: the cursor's snapshot went with it.
      await this.#remove(cursor);
      fail('NOT_FOUND', `cursor id ${id} not found`, { cursorId: id });
    }
    if (cursor.collection !== collection) {
      const asked = collection === null ? 'no collection' : `collection '${collection}'`;
      const own = cursor.collection === null ? 'no collection (a collection-less aggregation)' : `collection '${cursor.collection}'`;
      fail('VALIDATION_FAILED', `getMore named ${asked}, but cursor ${id} belongs to ${own}`, { field: 'collection', cursorId: id });
    }
    if (cursor.busy) fail('CONFLICT', `cursor id ${id} is in use by another getMore`, { cursorId: id });
    cursor.busy = true;
    const { documents, exhausted } = await this.#read(cursor, batchSize ?? (cursor.batchSize > 0 ? cursor.batchSize : DEFAULT_FIRST_BATCH), guard);
    if (!this.#cursors.has(cursor.id)) {
      // Killed while this batch read (killCursors, its store closing): not an end of its documents (MongoDB's CursorKilled).
      await this.#remove(cursor);
      fail('NOT_FOUND', `cursor id ${id} was killed while this getMore ran`, { cursorId: id });
    }
    if (exhausted) {
      await this.#remove(cursor);
      return { documents, cursorId: null };
    }
    return { documents, cursorId: cursor.id };
  }

  /**
   * Kills the tenant's cursors named that read `collection` (MongoDB's killCursors answer; a
   * cursor of another collection is not found, as in MongoDB). One in a getMore ends when that returns.
   */
  async kill(tenant: string, ids: readonly string[], collection: string | null): Promise<{ cursorsKilled: string[]; cursorsNotFound: string[] }> {
    const cursorsKilled: string[] = [];
    const cursorsNotFound: string[] = [];
    for (const id of new Set(ids)) {
      const cursor = this.#cursors.get(id);
      if (cursor === undefined || cursor.tenant !== tenant || cursor.collection !== collection) {
        cursorsNotFound.push(id);
        continue;
      }
      cursorsKilled.push(id);
      await this.#remove(cursor);
    }
    return { cursorsKilled, cursorsNotFound };
  }

  /** Closes every cursor of a tenant (its store is closing). */
  async closeTenant(tenant: string, owner?: object): Promise<void> {
    const doomed = [...this.#cursors.values()].filter((c) => c.tenant === tenant && (owner === undefined || c.owner === owner));
    await Promise.all(doomed.map((c) => this.#remove(c)));
  }

  /** Closes every cursor and refuses new ones. */
  async close(): Promise<void> {
    this.#closed = true;
    if (this.#timer !== undefined) clearInterval(this.#timer);
    await Promise.all([...this.#cursors.values()].map((c) => this.#remove(c)));
  }

  /** Reads one batch of a busy cursor; on a failure the cursor is removed (its source closed) and the error thrown, mapped. */
  async #read(cursor: Cursor, batchSize: number, guard: BatchGuard): Promise<{ documents: Doc[]; exhausted: boolean }> {
    const documents: Doc[] = [];
    let bytes = 0;
    let exhausted = false;
    cursor.interrupt.begin(guard);
    try {
      while (documents.length < batchSize && bytes < CURSOR_BATCH_BYTES) {
        if (cursor.at >= cursor.held.length) {
          cursor.interrupt.check();
          const next = await cursor.source.batches.next();
          if (next.done === true) {
            exhausted = true;
            break;
          }
          cursor.held = next.value;
          cursor.at = 0;
          continue;
        }
        const doc = cursor.held[cursor.at++]!;
        documents.push(doc);
        bytes += approxBytes(doc);
      }
      if (cursor.at >= cursor.held.length) {
        cursor.held = [];
        cursor.at = 0;
      }
    } catch (err) {
      cursor.busy = false;
      await this.#remove(cursor);
      throw cursor.source.mapError?.(err) ?? err;
    } finally {
      cursor.interrupt.end();
      cursor.busy = false;
      cursor.lastUsed = Date.now();
    }
    return { documents, exhausted };
  }

  #add(cursor: Cursor): void {
    this.#cursors.set(cursor.id, cursor);
    this.#perTenant.set(cursor.tenant, (this.#perTenant.get(cursor.tenant) ?? 0) + 1);
  }

  /** Forgets a cursor and releases its source (once). A cursor in a batch releases its source when the batch ends. */
  async #remove(cursor: Cursor): Promise<void> {
    if (this.#cursors.get(cursor.id) === cursor) {
      this.#cursors.delete(cursor.id);
      const left = (this.#perTenant.get(cursor.tenant) ?? 1) - 1;
      if (left > 0) this.#perTenant.set(cursor.tenant, left);
      else this.#perTenant.delete(cursor.tenant);
    }
    if (cursor.busy) return;
    await closeOnce(cursor);
  }

  #closeIdle(): void {
    const before = Date.now() - this.#limits.idleMs;
    for (const cursor of [...this.#cursors.values()]) {
      if (!cursor.busy && cursor.lastUsed < before) void this.#remove(cursor);
    }
  }
}

const closedSources = new WeakSet<CursorSource>();

async function closeOnce(cursor: Cursor): Promise<void> {
  if (closedSources.has(cursor.source)) return;
  closedSources.add(cursor.source);
  cursor.held = [];
  try {
    await cursor.source.batches.return?.();
  } catch {
    // The read's own failure was reported by the batch that met it.
  }
  await cursor.source.close();
}
