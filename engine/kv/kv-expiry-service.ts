import { fail } from '../errors.js';
import type { TenantRegistry, TenantStore } from '../tenant/index.js';
import { kvExpireDue, kvNextExpiry } from './kv-model.js';
import { TimingWheel } from './timing-wheel.js';

/** Options of KvExpiryService. */
export interface KvExpiryServiceOptions {
  /** How often due tenants are swept (ms); also the wheel's resolution. Default 100. */
  tickMs?: number;
  /** Most keys one sweep of one tenant deletes in one batch. Default 500. */
  batchSize?: number;
  /** Most tenants swept at once (each sweep pins an open store). Default 4. */
  concurrency?: number;
  /** Called when a sweep fails; the tenant is retried later with backoff. Default: a process warning. */
  onError?: (err: unknown, tenantId: string) => void;
  /**
   * Other models' expiry (documents' TTL indexes), swept with the key-value expiry of each due
   * tenant; the server wires them in, so this model imports none.
   */
  sweepers?: readonly ExpirySweeper[];
}

/** Expiry of one more model: delete what is due, say when the next is due. */
export interface ExpirySweeper {
  /** Deletes up to `budget` expired items; `nextExpiryMs` is the earliest one left (null: none). */
  sweep(store: TenantStore, now: number, budget: number): { durable: Promise<void>; nextExpiryMs: number | null };
  /** The earliest pending expiry (null: none), for the start-up schedule. */
  next(store: TenantStore): number | null;
}

const kvSweeper: ExpirySweeper = {
  sweep: (store, now, budget) => kvExpireDue(store, now, budget),
  next: (store) => kvNextExpiry(store),
};

/** One tenant's wake-up in the wheel; superseded by an earlier one, it is skipped when it comes out. */
interface WakeUp {
  tenantId: string;
  atMs: number;
}

const DEFAULTS = { tickMs: 100, batchSize: 500, concurrency: 4 };
const RETRY_FIRST_MS = 1_000;
const RETRY_MAX_MS = 60_000;

function positiveInteger(field: string, value: number): number {
  if (!Number.isInteger(value) || value < 1) fail('VALIDATION_FAILED', `${field} must be a positive integer`, { field });
  return value;
}

function warn(err: unknown, tenantId: string): void {
  const reason = err instanceof Error ? err.message : String(err);
  process.emitWarning(`key-value expiry of tenant ${tenantId} failed: ${reason}`, 'TetraKvExpiryWarning');
}

/**
 * Active expiry across tenants. The wheel holds one wake-up per tenant (at its earliest pending
 * expiry), not one entry per key, so memory grows with tenants, not keys; each tenant's kv-expiry
 * tree knows the rest. A due tenant is swept in bounded batches, one sweep per tenant at a time.
 */
export class KvExpiryService {
  readonly #registry: TenantRegistry;
  readonly #tickMs: number;
  readonly #batchSize: number;
  readonly #concurrency: number;
  readonly #onError: (err: unknown, tenantId: string) => void;
  readonly #sweepers: readonly ExpirySweeper[];
  readonly #wheel: TimingWheel<WakeUp>;
  /** The earliest wake-up of each tenant in the wheel; any other of its entries is stale. */
  readonly #pending = new Map<string, WakeUp>();
  /** Tenants due and waiting for a sweep, in the order they came due. */
  readonly #queue = new Set<string>();
  readonly #sweeping = new Map<string, Promise<void>>();
  /** Consecutive failed sweeps per tenant, for backoff. */
  readonly #failures = new Map<string, number>();
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;

  /** @throws VALIDATION_FAILED for a tickMs, batchSize or concurrency that is not a positive integer */
  constructor(registry: TenantRegistry, options: KvExpiryServiceOptions = {}) {
    this.#registry = registry;
    this.#tickMs = positiveInteger('tickMs', options.tickMs ?? DEFAULTS.tickMs);
    this.#batchSize = positiveInteger('batchSize', options.batchSize ?? DEFAULTS.batchSize);
    this.#concurrency = positiveInteger('concurrency', options.concurrency ?? DEFAULTS.concurrency);
    this.#onError = options.onError ?? warn;
    this.#sweepers = [kvSweeper, ...(options.sweepers ?? [])];
    this.#wheel = new TimingWheel<WakeUp>({ tickMs: this.#tickMs });
  }

  /** Starts the tick timer (unref'd: it never keeps the process alive). */
  start(): void {
    this.#stopped = false;
    if (this.#timer !== undefined) return;
    this.#timer = setInterval(() => this.#tick(), this.#tickMs);
    this.#timer.unref();
  }

  /**
   * Wakes `tenantId` at `atMs` (call after a put with a ttl). Only the earliest pending wake-up of
   * a tenant counts: a later one is ignored, an earlier one replaces it.
   * @throws VALIDATION_FAILED for a bad tenant id or a non-finite time
   */
  schedule(tenantId: string, atMs: number): void {
    // Refuse an unusable id here, where the caller hears of it, not in a sweep retried forever.
    this.#registry.dirOf(tenantId);
    if (typeof atMs !== 'number' || !Number.isFinite(atMs)) fail('VALIDATION_FAILED', 'atMs must be a finite number', { field: 'atMs' });
    const current = this.#pending.get(tenantId);
    if (current !== undefined && current.atMs <= atMs) return;
    const wakeUp = { tenantId, atMs };
    this.#pending.set(tenantId, wakeUp);
    this.#wheel.add(atMs, wakeUp);
  }

  /** The earliest pending expiry of any model in `store` (null: none). */
  nextExpiry(store: TenantStore): number | null {
    let next: number | null = null;
    for (const sweeper of this.#sweepers) {
      const n = sweeper.next(store);
      if (n !== null) next = next === null ? n : Math.min(next, n);
    }
    return next;
  }

  /** Forgets a tenant's pending wake-up (e.g. when the tenant is deleted); a running sweep finishes. */
  cancel(tenantId: string): void {
    this.#pending.delete(tenantId);
    this.#queue.delete(tenantId);
    this.#failures.delete(tenantId);
  }

  /** Stops the timer and resolves when the sweeps in flight have finished. */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
    // Sweeps catch their own errors, and #stopped keeps new ones from starting meanwhile.
    await Promise.all([...this.#sweeping.values()]);
  }

  #tick(): void {
    for (const wakeUp of this.#wheel.advance(Date.now())) {
      if (this.#pending.get(wakeUp.tenantId) !== wakeUp) continue;
      this.#pending.delete(wakeUp.tenantId);
      this.#queue.add(wakeUp.tenantId);
    }
    this.#pump();
  }

  #pump(): void {
    if (this.#stopped) return;
    for (const tenantId of this.#queue) {
      if (this.#sweeping.size >= this.#concurrency) return;
      // Never two sweeps of one tenant: it stays queued and goes when the running one ends.
      if (this.#sweeping.has(tenantId)) continue;
      this.#queue.delete(tenantId);
      const sweep = this.#sweep(tenantId).finally(() => {
        this.#sweeping.delete(tenantId);
        this.#pump();
      });
      this.#sweeping.set(tenantId, sweep);
    }
  }

  async #sweep(tenantId: string): Promise<void> {
    try {
      const nextExpiryMs = await this.#registry.use(tenantId, async (store) => {
        let next: number | null = null;
        for (const sweeper of this.#sweepers) {
          const swept = sweeper.sweep(store, Date.now(), this.#batchSize);
          await swept.durable;
          if (swept.nextExpiryMs !== null) next = next === null ? swept.nextExpiryMs : Math.min(next, swept.nextExpiryMs);
        }
        return next;
      });
      this.#failures.delete(tenantId);
      // When more are due this time is already past, so the wheel hands the tenant back on the
      // next tick: bounded batches, with other tenants and requests served in between.
      if (nextExpiryMs !== null) this.schedule(tenantId, nextExpiryMs);
    } catch (err) {
      const failures = (this.#failures.get(tenantId) ?? 0) + 1;
      this.#failures.set(tenantId, failures);
      try {
        this.#onError(err, tenantId);
      } catch {
        // A failing error handler must not stop the retry below.
      }
      this.schedule(tenantId, Date.now() + Math.min(RETRY_MAX_MS, RETRY_FIRST_MS * 2 ** (failures - 1)));
    }
  }
}

/**
 * At startup: opens each tenant in turn and schedules its earliest pending expiry, so keys that
 * expired or will expire while the process was down are swept without waiting for a read. A tenant
 * that fails to open is scheduled at once, so the service retries it and reports through onError.
 */
export async function scheduleAllTenants(service: KvExpiryService, registry: TenantRegistry, tenantIds: string[]): Promise<void> {
  for (const tenantId of tenantIds) {
    let next: number | null;
    try {
      next = await registry.use(tenantId, (store) => service.nextExpiry(store));
    } catch {
      next = Date.now();
    }
    if (next !== null) service.schedule(tenantId, next);
  }
}
