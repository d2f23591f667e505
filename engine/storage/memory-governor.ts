import { constants, PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import type { PageCache } from './page-cache.js';

/**
 * Keeps what the process holds within what the configuration gives it: the RSS growth since the
 * governor started stays within the page cache's bound plus the dirty budget (plus memory other
 * parts account for themselves, such as the vector graphs in memory).
 *
 * The cache and dirty budgets count what the engine keeps alive, and that stays within them. The
 * process's RSS is more: garbage V8 has not collected yet (its policy lets the heap grow to a
 * multiple of what the last full collection left live), the young generation, and what the
 * allocator keeps after Buffers are freed. Loading 1M documents with the default budgets (256 +
 * 128 MiB) the RSS grew by 600 MiB; with a 96 MiB cache, at the same speed, by 407
 * (docs/benchmarks.md, "The memory governor"). The part no budget counts was ~180-200 MiB either
 * way, and the cache was what could give way for it.
 *
 * So the governor reads the RSS every `intervalMs` and, while the growth (less, while writes
 * are few or have stopped, the resident memory not in use, which new allocations reuse first) is
 * past CUT_ABOVE of the bound (a margin for what happens between readings and before a
 * collection), pulls three levers in turn, cheapest first:
 * 1. the cache's limit in force, lowered by the excess (evicting at once), down to a sixteenth of
 *    its configured size: a load ran as fast with the cache at that floor;
 * 2. the dirty budget's limit in force, down to half of it: checkpoints come sooner and writers
 *    wait for them;
 * 3. with both at their floors, V8's heap growth: collections start once the heap has grown
 *    TIGHT_HEAP_GROWTH percent past what the last one left live, instead of V8's up to 4x (a full
 *    collection every few MiB allocated while on: the dearest lever).
 * What it cut counts as on its way out until V8's next full collection (or PENDING_MS), so a cut
 * is not repeated while the heap still holds what was evicted. It gives back in the reverse order:
 * the heap growth below RAISE_BELOW of the bound or after CALM_MS without a cut; the limits, a
 * step per reading below RAISE_BELOW, and above it (past the cut line too, once writes are few or
 * have stopped) a step every PROBE_EVERY_MS into resident memory not in use (which new pages
 * reuse before the RSS grows), for as long as the RSS does not grow.
 *
 * Tried and not kept (docs/benchmarks.md): cutting only at new highs of the RSS (peaks past the
 * bound in the docs bench), and full collections forced near the bound (the RSS peaked higher:
 * the memory they freed was raised back into the cache).
 */
export interface MemoryGovernorOptions {
  /** How often the RSS is read, in milliseconds. */
  intervalMs: number;
  /** Bytes the bound allows for beyond the cache and the dirty budget, accounted by their owners (vector graphs). */
  extraBytes?: () => number;
  /** The heap growth percent configured (TETRA_HEAP_GROWTH_PERCENT, 0: V8's policy), restored when the pressure ends. */
  heapGrowthPercent?: number;
  /** Reads the process's memory (default process.memoryUsage): tests give the readings they need. */
  memoryUsage?: () => NodeJS.MemoryUsage;
  /** The clock in milliseconds (default performance.now). */
  now?: () => number;
}

/** What the governor sees and has done (tests and diagnostics). */
export interface MemoryGovernorState {
  /** RSS when the governor started: the growth is measured from it. */
  baseRssBytes: number;
  /** RSS growth at the last reading. */
  growthBytes: number;
  /** Of the growth, what was resident but not in use (heap committed, Buffers freed) at the last reading. */
  freeBytes: number;
  /** What cuts have lowered that has not shown in the RSS yet (until the next full collection). */
  pendingBytes: number;
  /** Peak RSS growth seen at a reading. */
  peakGrowthBytes: number;
  /** The bound at the last reading: configured cache + configured dirty budget + extra. */
  boundBytes: number;
  cacheLimitBytes: number;
  dirtyLimitBytes: number;
  /** True while the governor holds V8's heap growth at TIGHT_HEAP_GROWTH. */
  tightHeap: boolean;
  /** Readings that found the growth past the cut line and pulled the levers. */
  cuts: number;
  readings: number;
}

/** The cache's limit is never lowered below this share of its configured size. */
const CACHE_FLOOR = 1 / 16;
/** The dirty budget's limit is never lowered below this share of its configured size. */
const DIRTY_FLOOR = 1 / 2;
/** The levers are pulled once the growth passes this share of the bound (readings are periodic). */
const CUT_ABOVE = 0.7;
/** Limits are raised again once the growth is below this share of the bound. */
const RAISE_BELOW = 0.6;
/** V8's heap growth percent while the governor holds it (measured: 1.23x of the budgets against 1.7x). */
const TIGHT_HEAP_GROWTH = 20;
/** Below this share of the dirty budget in use, writes are few (reads): memory not in use counts as room. */
const QUIET_DIRTY = 1 / 8;
/** Dirty memory that has not grown for this long means writes have stopped: memory not in use counts as room too. */
const WRITES_STOPPED_MS = 1000;
/** A raise gives back at most this share of the configured budgets per reading. */
const RAISE_STEP = 1 / 32;
/** A cut counts as on its way out of the RSS for at most this long without a full collection. */
const PENDING_MS = 2000;
/** A cut smaller than this is reading noise (the RSS moves by a few pages between readings). */
const MIN_CUT = 1024 * 1024;
/** Raises into memory not in use (above the raise line) are at least this far apart. */
const PROBE_EVERY_MS = 250;
/** The heap growth is given back after this long without a cut, even above the raise line. */
const CALM_MS = 3000;

export class MemoryGovernor {
  readonly #cache: PageCache<unknown>;
  readonly #extra: () => number;
  readonly #base: NodeJS.MemoryUsage;
  readonly #timer: NodeJS.Timeout;
  readonly #gcObserver: PerformanceObserver;
  /** Bytes cut since the last full collection: evicted, not necessarily out of the RSS yet. */
  #pending = 0;
  #pendingSince = 0;
  #growth = 0;
  #free = 0;
  #lastCut = 0;
  /** The dirty bytes at the last reading, and when they last grew. */
  #lastDirty = 0;
  #dirtyGrewAt = 0;
  #lastRaiseAt = 0;
  /** The RSS growth when the limits were last raised. */
  #lastRaise = 0;
  #peak = 0;
  #bound = 0;
  #cuts = 0;
  #readings = 0;
  #stopped = false;
  #tightHeap = false;
  readonly #heapGrowth: number;
  readonly #memoryUsage: () => NodeJS.MemoryUsage;
  readonly #now: () => number;

  constructor(cache: PageCache<unknown>, options: MemoryGovernorOptions) {
    this.#cache = cache;
    this.#extra = options.extraBytes ?? (() => 0);
    this.#heapGrowth = options.heapGrowthPercent ?? 0;
    this.#memoryUsage = options.memoryUsage ?? (() => process.memoryUsage());
    this.#now = options.now ?? (() => performance.now());
    this.#base = this.#memoryUsage();
    this.#gcObserver = new PerformanceObserver((list) => {
      // After a full (mark-compact) collection, what was evicted has left the heap: the next
      // reading shows what the cut achieved.
      if (list.getEntries().some((e) => (e as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR)) this.#pending = 0;
    });
    this.#gcObserver.observe({ entryTypes: ['gc'] });
    this.#timer = setInterval(() => this.check(), Math.max(10, options.intervalMs));
    this.#timer.unref();
  }

  /** Reads the RSS and adjusts the limits (also run every intervalMs). */
  check(): void {
    if (this.#stopped) return;
    const cache = this.#cache;
    const dirty = cache.dirty;
    const m = this.#memoryUsage();
    const base = this.#base;
    const growth = m.rss - base.rss;
    const bound = cache.maxBytes + dirty.configured + this.#extra();
    const cutLine = bound * CUT_ABOVE;
    const step = Math.ceil((cache.maxBytes + dirty.configured) * RAISE_STEP);
    // In use: the heap (garbage not yet collected included) and Buffers; the rest of the growth
    // is resident memory that new pages can reuse.
    const inUse = m.heapUsed - base.heapUsed + (m.external - base.external);
    this.#growth = growth;
    this.#free = Math.max(0, growth - inUse);
    this.#bound = bound;
    this.#readings++;
    if (growth > this.#peak) this.#peak = growth;
    const now = this.#now();
    if (this.#pending > 0 && now - this.#pendingSince > PENDING_MS) this.#pending = 0;
    if (dirty.bytes > this.#lastDirty) this.#dirtyGrewAt = now;
    this.#lastDirty = dirty.bytes;

    // Cut while the RSS is past the cut line, by how far, less what earlier cuts have not had time
    // to free yet and, while writes are few, less the resident memory not in use (the allocator
    // keeps what evicted pages free, so a cut only adds to it). Cutting through it emptied the
    // cache during reads whose RSS growth was V8's heap, for no lower RSS (docs/benchmarks.md,
    // session 26: the 100k read rows 1.5-2.4x slower, peak RSS 425 against 413 ungoverned). During
    // a load it is not subtracted: the 1M load's RSS then reached 0.99x of the bound, not 0.9x.
    // While writes are few (the dirty budget nearly empty: reads), the memory not in use counts as
    // room: new pages and Buffers reuse it before the RSS grows, and a cut only adds to it. So it
    // does once writes have stopped, while what they left waits for the next checkpoint (up to a
    // minute): after a burst of random updates the cache stayed at its floor with the RSS past
    // the cut line in memory not in use (250 of 290 MiB), and the scans that followed read every
    // page from the file, 2-3x slower (docs/benchmarks.md, session 28).
    const quiet = dirty.bytes < dirty.configured * QUIET_DIRTY || now - this.#dirtyGrewAt >= WRITES_STOPPED_MS;
    let cut = growth - cutLine - this.#pending - (quiet ? this.#free : 0);
    if (cut > MIN_CUT) {
      let done = 0;
      // a. The cache: a lower limit frees memory at once (evicted pages are garbage).
      const cached = Math.min(cache.limit, cache.bytes);
      const fromCache = Math.max(0, Math.min(cut, cached - Math.floor(cache.maxBytes * CACHE_FLOOR)));
      if (fromCache > 0) {
        cache.setLimit(cached - fromCache);
        done += fromCache;
        cut -= fromCache;
      }
      if (cut > 0) {
        // b. The dirty budget, once the cache is at its floor: checkpoints come sooner, writers
        // wait for them.
        const before = dirty.limit;
        dirty.setLimit(Math.max(Math.floor(dirty.configured * DIRTY_FLOOR), before - cut));
        done += before - dirty.limit;
        cut -= before - dirty.limit;
      }
      // c. V8's heap growth, only once both budgets are at their floors: in a bulk load the RSS
      // peaked with the heap at 2-2.5x what was in use (V8 lets it grow that far past what the
      // last full collection left live), but holding it costs a full collection every few MiB
      // allocated. Pulled before the dirty budget, it cost a 1M-document load 22-37% of its
      // speed for the same peak RSS (docs/benchmarks.md, "The heap lever last").
      if (cut > 0 && !this.#tightHeap && (this.#heapGrowth === 0 || this.#heapGrowth > TIGHT_HEAP_GROWTH)) {
        holdHeapGrowth(true, this.#heapGrowth);
        this.#tightHeap = true;
        done += cut;
        cut = 0;
      }
      this.#cuts++;
      this.#lastCut = now;
      // The next raise is a probe: the ones after it need the RSS to have stayed where it was.
      this.#lastRaise = Infinity;
      if (done > 0) {
        this.#pending += done;
        this.#pendingSince = now;
      }
      return;
    }
    // Past the cut line, only memory not in use (once writes are few) leaves room to give back into.
    if (this.#pending > 0 || (growth > cutLine && !quiet)) return;
    // Give back, in the reverse order: the heap growth below the raise line or after CALM_MS
    // without a cut; the limits below the raise line, or when resident memory not in use could
    // take a step and the last step did not raise the RSS.
    const below = growth < bound * RAISE_BELOW;
    if (this.#tightHeap && (below || now - this.#lastCut >= CALM_MS)) {
      holdHeapGrowth(false, this.#heapGrowth);
      this.#tightHeap = false;
    }
    // A probe into memory not in use: at most one every PROBE_EVERY_MS, and only if the RSS has not grown
    // since the last one, or that one is CALM_MS old (after a 1M-document load the RSS stayed
    // ~250 MiB above start-up with ~70 MiB in use: memory the allocator keeps, which new pages reuse).
    const sinceRaise = now - this.#lastRaiseAt;
    const probe = this.#free >= 2 * step && sinceRaise >= PROBE_EVERY_MS && (growth <= this.#lastRaise + step / 4 || sinceRaise >= CALM_MS);
    if (!below && !probe) return;
    this.#lastRaise = growth;
    this.#lastRaiseAt = now;
    let give = step;
    if (dirty.limit < dirty.configured) {
      const before = dirty.limit;
      dirty.setLimit(before + give);
      give -= dirty.limit - before;
    }
    if (give > 0 && cache.limit < cache.maxBytes) cache.setLimit(cache.limit + give);
  }

  get state(): MemoryGovernorState {
    return {
      baseRssBytes: this.#base.rss,
      growthBytes: this.#growth,
      freeBytes: this.#free,
      pendingBytes: this.#pending,
      peakGrowthBytes: this.#peak,
      boundBytes: this.#bound,
      cacheLimitBytes: this.#cache.limit,
      dirtyLimitBytes: this.#cache.dirty.limit,
      tightHeap: this.#tightHeap,
      cuts: this.#cuts,
      readings: this.#readings,
    };
  }

  /** Stops reading and gives the limits back in full. */
  stop(): void {
    if (this.#stopped) return;
    this.#stopped = true;
    clearInterval(this.#timer);
    this.#gcObserver.disconnect();
    if (this.#tightHeap) holdHeapGrowth(false, this.#heapGrowth);
    this.#tightHeap = false;
    this.#cache.setLimit(this.#cache.maxBytes);
    this.#cache.dirty.setLimit(this.#cache.dirty.configured);
  }
}

/** Governors holding V8's heap growth tight: the flag is the process's, shared by every governor. */
let tightHolders = 0;

function holdHeapGrowth(hold: boolean, configured: number): void {
  tightHolders += hold ? 1 : -1;
  // V8 reads the flag each time it sets the next collection's limit (server/config.ts applies the
  // configured value the same way); 0 is V8's own policy.
  if (hold && tightHolders === 1) setFlagsFromString(`--heap-growing-percent=${TIGHT_HEAP_GROWTH}`);
  if (!hold && tightHolders === 0) setFlagsFromString(`--heap-growing-percent=${configured}`);
}
