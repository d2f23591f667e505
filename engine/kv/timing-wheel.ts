import { fail } from '../errors.js';

/** Construction options of a TimingWheel. */
export interface TimingWheelOptions {
  /** Width of one level-0 slot (ms); due items come out at most this late. Default 100. */
  tickMs?: number;
  /** Levels of 64 slots; level i spans 64^(i+1) ticks. Default 5 (about 3.4 years at 100 ms). */
  levels?: number;
  /** The wheel's "now" at creation (ms). Default Date.now(). */
  startMs?: number;
}

interface Timer<T> {
  /** First tick at which the item is due: ceil(atMs / tickMs), so it never comes out early. */
  tick: number;
  item: T;
}

const SLOT_BITS = 6;
const SLOTS = 1 << SLOT_BITS;
const DEFAULT_TICK_MS = 100;
const DEFAULT_LEVELS = 5;
// 64^8 ticks still fit a double exactly; more levels would only lose precision.
const MAX_LEVELS = 8;

/**
 * A hierarchical timing wheel (Varghese & Lauck): `levels` rings of 64 slots, level i slots
 * 64^i ticks wide. An item lives at the level of the highest base-64 digit in which its tick
 * differs from the current tick, in the slot of that digit; when time reaches the start of that
 * slot the item moves down (cascades), and from level 0 it comes out. So add is O(levels) = O(1)
 * and each item moves at most `levels` times. Items beyond the top ring wait in an overflow list
 * that is re-placed when time reaches the top-level rotation of its earliest item.
 * advance() jumps straight to the next non-empty slot, so idle stretches cost nothing.
 * Ticks are plain numbers (not 32-bit ints): slot arithmetic uses division, not shifts.
 */
export class TimingWheel<T> {
  readonly tickMs: number;
  readonly #levels: number;
  /** #spans[i] = 64^i ticks: the width of a level-i slot; #spans[levels] is a top rotation. */
  readonly #spans: number[];
  readonly #slots: Array<Array<Array<Timer<T>> | undefined>>;
  readonly #levelCounts: number[];
  #overflow: Array<Timer<T>> = [];
  #overflowMin = Infinity;
  /** Items due at or before the current tick, handed out by the next advance(). */
  #ready: T[] = [];
  /** The last tick processed: every item with tick <= #current is in #ready or handed out. */
  #current: number;
  #size = 0;

  /** @throws VALIDATION_FAILED for a tickMs that is not a positive number or a bad level count */
  constructor(options: TimingWheelOptions = {}) {
    const tickMs = options.tickMs ?? DEFAULT_TICK_MS;
    const levels = options.levels ?? DEFAULT_LEVELS;
    if (!(tickMs > 0) || !Number.isFinite(tickMs)) fail('VALIDATION_FAILED', 'tickMs must be a positive number', { field: 'tickMs' });
    if (!Number.isInteger(levels) || levels < 1 || levels > MAX_LEVELS) {
      fail('VALIDATION_FAILED', `levels must be an integer between 1 and ${MAX_LEVELS}`, { field: 'levels' });
    }
    this.tickMs = tickMs;
    this.#levels = levels;
    this.#spans = Array.from({ length: levels + 1 }, (_, i) => SLOTS ** i);
    this.#slots = Array.from({ length: levels }, () => new Array<Array<Timer<T>> | undefined>(SLOTS).fill(undefined));
    this.#levelCounts = new Array<number>(levels).fill(0);
    this.#current = Math.floor((options.startMs ?? Date.now()) / tickMs);
  }

  /** Items added and not yet handed out by advance(). */
  get size(): number {
    return this.#size;
  }

  /** Schedules `item` for `atMs`; a time already past comes out on the next advance(). @throws VALIDATION_FAILED for a non-finite time */
  add(atMs: number, item: T): void {
    if (typeof atMs !== 'number' || !Number.isFinite(atMs)) fail('VALIDATION_FAILED', 'atMs must be a finite number', { field: 'atMs' });
    this.#size++;
    this.#place({ tick: Math.ceil(atMs / this.tickMs), item });
  }

  /**
   * Moves time to `nowMs` and returns every item with atMs <= nowMs rounded down to a tick, in no
   * particular order: never early, at most one tick late. Time never moves back.
   */
  advance(nowMs: number): T[] {
    const target = Math.floor(nowMs / this.tickMs);
    while (this.#current < target) {
      const next = this.#nextEvent();
      if (next > target) {
        this.#current = target;
        break;
      }
      this.#current = next;
      this.#fire(next);
    }
    const due = this.#ready;
    this.#ready = [];
    this.#size -= due.length;
    return due;
  }

  #place(timer: Timer<T>): void {
    const cur = this.#current;
    if (timer.tick <= cur) {
      this.#ready.push(timer.item);
      return;
    }
    const spans = this.#spans;
    for (let level = 0; level < this.#levels; level++) {
      const above = spans[level + 1]!;
      // Same digits above this level: the item falls within the current slot of level + 1.
      if (Math.floor(timer.tick / above) === Math.floor(cur / above)) {
        const slot = Math.floor(timer.tick / spans[level]!) % SLOTS;
        const ring = this.#slots[level]!;
        (ring[slot] ??= []).push(timer);
        this.#levelCounts[level]!++;
        return;
      }
    }
    this.#overflow.push(timer);
    if (timer.tick < this.#overflowMin) this.#overflowMin = timer.tick;
  }

  /** The next tick at which a slot starts that holds anything (Infinity when the wheel is empty). */
  #nextEvent(): number {
    const cur = this.#current;
    const spans = this.#spans;
    // Everything at level i is due before the next level-(i+1) boundary, everything at level i+1
    // after it: the lowest non-empty level holds the next event.
    for (let level = 0; level < this.#levels; level++) {
      if (this.#levelCounts[level] === 0) continue;
      const span = spans[level]!;
      const digit = Math.floor(cur / span) % SLOTS;
      const base = Math.floor(cur / spans[level + 1]!) * spans[level + 1]!;
      const ring = this.#slots[level]!;
      // Items are only ever placed in slots after the current digit (their digit is higher).
      for (let slot = digit + 1; slot < SLOTS; slot++) {
        if (ring[slot] !== undefined) return base + slot * span;
      }
      fail('INTERNAL', 'timing wheel invariant broken: a level counts items but has none ahead');
    }
    if (this.#overflow.length > 0) {
      const top = spans[this.#levels]!;
      return Math.floor(this.#overflowMin / top) * top;
    }
    return Infinity;
  }

  /**
   * Processes the slots that start at `tick`. The order of levels does not matter: a cascaded
   * item lands in a slot ahead of the current one at a lower level, or straight in #ready.
   */
  #fire(tick: number): void {
    const spans = this.#spans;
    const top = spans[this.#levels]!;
    if (tick % top === 0 && this.#overflow.length > 0) {
      // Each overflow item is re-placed once per top rotation that holds some overflow item; with
      // 64^levels ticks per rotation (years at 100 ms) that is a handful of times in its life.
      const waiting = this.#overflow;
      this.#overflow = [];
      this.#overflowMin = Infinity;
      for (const timer of waiting) this.#place(timer);
    }
    for (let level = this.#levels - 1; level >= 0; level--) {
      const span = spans[level]!;
      if (tick % span !== 0) continue;
      const ring = this.#slots[level]!;
      const slot = Math.floor(tick / span) % SLOTS;
      const timers = ring[slot];
      if (timers === undefined) continue;
      ring[slot] = undefined;
      this.#levelCounts[level]! -= timers.length;
      // At level 0 every item has tick === `tick`, so #place hands it to #ready.
      for (const timer of timers) this.#place(timer);
    }
  }
}
