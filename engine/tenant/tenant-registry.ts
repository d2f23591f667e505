import { join } from 'node:path';
import { fail } from '../errors.js';
import { PageCache, type TreeNode } from '../storage/index.js';
import { TenantStore, type TenantStoreOptions } from './tenant-store.js';

export interface TenantRegistryOptions extends Omit<TenantStoreOptions, 'cache'> {
  /** Tenant directories live in `<dataDir>/tenants/<tenantId>/`. */
  dataDir: string;
  /** Most tenant stores open at once; the least recently used idle one is closed beyond it. */
  maxOpen?: number;
  /** Close a store nobody used for this long (0 keeps them until maxOpen pushes them out). */
  idleCloseMs?: number;
  /** Page cache shared by every tenant (bytes). */
  cacheBytes?: number;
  /** Or an existing cache to share with other registries. */
  cache?: PageCache<TreeNode>;
  /**
   * Run on every store as it opens, before any use gets it (upgrades of stored data). When it
   * fails, the store is closed and the open fails with its error.
   */
  prepare?: (store: TenantStore, tenantId: string) => Promise<void>;
}

interface Slot {
  id: string;
  opening: Promise<TenantStore>;
  store: TenantStore | undefined;
  users: number;
  lastUsed: number;
  closing: Promise<void> | undefined;
}

const TENANT_ID = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * Opens tenant stores on demand and keeps at most `maxOpen` of them open (LRU), closing idle ones
 * cleanly (checkpoint first). Every use goes through use(), which pins the store meanwhile.
 */
export class TenantRegistry {
  readonly cache: PageCache<TreeNode>;
  readonly #options: TenantRegistryOptions;
  readonly #slots = new Map<string, Slot>();
  /** The slot last moved to the end of #slots (see #touch). */
  #newest: Slot | undefined;
  readonly #maxOpen: number;
  #timer: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(options: TenantRegistryOptions) {
    this.#options = options;
    this.#maxOpen = Math.max(1, options.maxOpen ?? 256);
    this.cache = options.cache ?? new PageCache<TreeNode>(options.cacheBytes ?? 256 * 1024 * 1024);
    const idle = options.idleCloseMs ?? 5 * 60_000;
    if (idle > 0) {
      this.#timer = setInterval(() => void this.#closeIdle(idle), Math.max(100, Math.min(idle, 30_000)));
      this.#timer.unref();
    }
  }

  /** The directory of a tenant's store. @throws VALIDATION_FAILED for an unsafe id */
  dirOf(tenantId: string): string {
    if (!TENANT_ID.test(tenantId)) fail('VALIDATION_FAILED', 'tenant id must be 1-64 characters of A-Z, a-z, 0-9, _ or -');
    return join(this.#options.dataDir, 'tenants', tenantId);
  }

  /**
   * Runs `fn` with the tenant's store open, opening it if needed; the store stays open until fn
   * settles. What fn returns (or throws) is handed back only once every batch it could have
   * observed is durable: the batches applied when fn's synchronous part returned (its reads and
   * its own writes) and those of any snapshot() taken meanwhile. So no caller is ever shown a
   * write a crash could still take away. Plain reads that fn makes after its first await are not
   * covered: make them on a snapshot.
   * @throws UNAVAILABLE after close(); CORRUPTION when the tenant's files are damaged
   */
  async use<T>(tenantId: string, fn: (store: TenantStore) => T | Promise<T>): Promise<T> {
    if (this.#closed) fail('UNAVAILABLE', 'the database is shutting down');
    let slot = this.#slots.get(tenantId);
    // A store that failed (a write, an fsync or a checkpoint threw) refuses all work: close it,
    // and this use opens it again, recovering from its files, instead of locking the tenant out.
    if (slot?.store?.failed === true && slot.closing === undefined) void this.#closeSlot(slot);
    if (slot?.closing) {
      await slot.closing;
      slot = this.#slots.get(tenantId);
    }
    if (slot === undefined) {
      const dir = this.dirOf(tenantId);
      const created: Slot = { id: tenantId, opening: undefined as unknown as Promise<TenantStore>, store: undefined, users: 0, lastUsed: Date.now(), closing: undefined };
      const prepare = this.#options.prepare;
      created.opening = TenantStore.open(dir, { ...this.#options, cache: this.cache }).then(
        async (store) => {
          if (prepare !== undefined) {
            try {
              await prepare(store, tenantId);
            } catch (err) {
              await store.close().catch(() => undefined);
              throw err;
            }
          }
          created.store = store;
          return store;
        },
        (err: unknown) => {
          this.#slots.delete(tenantId);
          throw err;
        },
      );
      this.#slots.set(tenantId, created);
      this.#newest = created;
      slot = created;
    } else {
      this.#touch(slot);
    }
    slot.users++;
    let store: TenantStore;
    try {
      // An open store needs no wait (a resolved promise still costs a turn of the microtask queue).
      store = slot.store ?? (await slot.opening);
    } catch (err) {
      this.#release(slot);
      throw err;
    }
    const result = this.#run(slot, store, fn);
    return result instanceof Promise ? await result : result;
  }

  /**
   * use(), answering in the calling turn when it can: when the tenant's store is open and `fn`
   * returns a value (not a promise) showing nothing a crash could still take away, that value
   * comes back as it is, without a turn of the microtask queue. Otherwise, as use() does, a
   * promise. A store not open, closing or failed goes through use().
   */
  useNow<T>(tenantId: string, fn: (store: TenantStore) => T | Promise<T>): T | Promise<T> {
    const slot = this.#slots.get(tenantId);
    const store = slot?.store;
    if (this.#closed || slot === undefined || store === undefined || slot.closing !== undefined || store.failed) return this.use(tenantId, fn);
    this.#touch(slot);
    slot.users++;
    return this.#run(slot, store, fn);
  }

  /**
   * Marks `slot` the most recently used: Map order is recency, so it moves to the end, unless it
   * is there already. A delete and a set per request cost 2.7% of the server's CPU in a profile
   * of finds by _id from one tenant (each delete leaves a hole the Map skips until it rehashes).
   */
  #touch(slot: Slot): void {
    if (this.#newest === slot && this.#slots.get(slot.id) === slot) return;
    this.#slots.delete(slot.id);
    this.#slots.set(slot.id, slot);
    this.#newest = slot;
  }

  /** Runs `fn` for a use of `slot` (already counted), which ends once its outcome is handed back. */
  #run<T>(slot: Slot, store: TenantStore, fn: (store: TenantStore) => T | Promise<T>): T | Promise<T> {
    let observed = store.lsn;
    let pending: T | Promise<T>;
    try {
      pending = fn(store);
      observed = store.lsn;
    } catch (error) {
      return this.#settle(slot, store, observed, { error }, undefined);
    }
    if (pending instanceof Promise) return this.#settle(slot, store, observed, { pending }, undefined);
    const fence = store.whenDurable(Math.max(observed, store.newestSnapshotLsn));
    if (fence !== undefined) return this.#settle(slot, store, observed, { value: pending }, fence);
    this.#release(slot);
    return pending;
  }

  /**
   * The outcome of a use, handed back once every batch it could have observed is durable: the
   * batches applied when fn's synchronous part returned, and those of any snapshot() taken
   * meanwhile (`fence`, when already asked for).
   */
  async #settle<T>(slot: Slot, store: TenantStore, observed: number, from: { pending: Promise<T> } | { value: T } | { error: unknown }, fence: Promise<void> | undefined): Promise<T> {
    try {
      let outcome: { value: T } | { error: unknown };
      if ('pending' in from) {
        try {
          outcome = { value: await from.pending };
        } catch (error) {
          outcome = { error };
        }
      } else outcome = from;
      fence ??= store.whenDurable(Math.max(observed, store.newestSnapshotLsn));
      if (fence !== undefined) {
        try {
          await fence;
        } catch (err) {
          // The store failed before what fn saw became durable: show none of it.
          if ('value' in outcome) throw err;
        }
      }
      if ('error' in outcome) throw outcome.error;
      return outcome.value;
    } finally {
      this.#release(slot);
    }
  }

  /** Ends one use of a slot. */
  #release(slot: Slot): void {
    slot.users--;
    slot.lastUsed = Date.now();
    this.#evictOverflow();
  }

  get openCount(): number {
    return this.#slots.size;
  }

  #evictOverflow(): void {
    if (this.#slots.size <= this.#maxOpen) return;
    // A slot leaves #slots once its store has closed, later: count those closing already, so that
    // only as many of the least recently used as are past maxOpen close (the loop closed every
    // idle store when one too many was open, the size not dropping while it ran).
    let excess = -this.#maxOpen;
    for (const slot of this.#slots.values()) if (slot.closing === undefined) excess++;
    for (const slot of this.#slots.values()) {
      if (excess <= 0) break;
      if (slot.users === 0 && slot.store !== undefined && slot.closing === undefined) {
        void this.#closeSlot(slot);
        excess--;
      }
    }
  }

  async #closeIdle(idleMs: number): Promise<void> {
    const now = Date.now();
    for (const slot of [...this.#slots.values()]) {
      if (slot.users === 0 && slot.store !== undefined && slot.closing === undefined && now - slot.lastUsed >= idleMs) {
        await this.#closeSlot(slot);
      }
    }
  }

  #closeSlot(slot: Slot): Promise<void> {
    slot.closing = (async () => {
      try {
        await slot.store?.close();
      } catch {
        // A store that fails to close is reopened (and recovered) on next use.
      } finally {
        if (this.#slots.get(slot.id) === slot) this.#slots.delete(slot.id);
      }
    })();
    return slot.closing;
  }

  /** Closes every store (checkpointing each) and refuses further use. */
  async close(): Promise<void> {
    this.#closed = true;
    if (this.#timer) clearInterval(this.#timer);
    const slots = [...this.#slots.values()];
    await Promise.allSettled(slots.map((s) => s.opening));
    await Promise.all(slots.map((s) => s.closing ?? this.#closeSlot(s)));
  }
}
