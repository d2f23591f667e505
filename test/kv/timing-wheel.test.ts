import { describe, expect, it } from 'vitest';
import { TimingWheel } from '../../engine/kv/index.js';
import { randomInt, seededRandom } from '../helpers/random.js';

const START = Date.UTC(2030, 0, 1);
const YEAR_MS = 365 * 24 * 3600 * 1000;

describe('TimingWheel', () => {
  it('hands out an item at its time, never a tick early', () => {
    const wheel = new TimingWheel<string>({ tickMs: 100, startMs: START });
    wheel.add(START + 250, 'a');
    expect(wheel.size).toBe(1);
    expect(wheel.advance(START + 200)).toEqual([]);
    expect(wheel.advance(START + 299)).toEqual([]);
    expect(wheel.advance(START + 300)).toEqual(['a']);
    expect(wheel.size).toBe(0);
    expect(wheel.advance(START + 10_000)).toEqual([]);
  });

  it('hands out past and present times on the next advance, even without time moving', () => {
    const wheel = new TimingWheel<string>({ tickMs: 100, startMs: START });
    wheel.add(START - YEAR_MS, 'long ago');
    wheel.add(START, 'now');
    wheel.add(-5, 'before the epoch');
    expect(wheel.advance(START).sort()).toEqual(['before the epoch', 'long ago', 'now']);
    // Time never moves back: an earlier now still hands out what is due at the wheel's time.
    wheel.add(START - 1, 'late');
    expect(wheel.advance(START - 50_000)).toEqual(['late']);
  });

  it('jumps idle stretches: an item 100 years out on a 1 ms wheel with 2 levels', () => {
    const wheel = new TimingWheel<number>({ tickMs: 1, levels: 2, startMs: START });
    const at = START + 100 * YEAR_MS;
    wheel.add(at, 1);
    wheel.add(at + 1, 2);
    expect(wheel.advance(at - 1)).toEqual([]);
    expect(wheel.advance(at)).toEqual([1]);
    expect(wheel.size).toBe(1);
    expect(wheel.advance(at + 1)).toEqual([2]);
  });

  it('rejects a non-finite time and bad options', () => {
    const wheel = new TimingWheel<number>({ startMs: START });
    expect(() => wheel.add(NaN, 1)).toThrow(expect.objectContaining({ code: 'VALIDATION_FAILED' }));
    expect(() => wheel.add(Infinity, 1)).toThrow(expect.objectContaining({ code: 'VALIDATION_FAILED' }));
    expect(() => new TimingWheel({ tickMs: 0 })).toThrow(expect.objectContaining({ code: 'VALIDATION_FAILED' }));
    expect(() => new TimingWheel({ levels: 0 })).toThrow(expect.objectContaining({ code: 'VALIDATION_FAILED' }));
    expect(() => new TimingWheel({ levels: 9 })).toThrow(expect.objectContaining({ code: 'VALIDATION_FAILED' }));
    expect(wheel.size).toBe(0);
  });

  // The reference: every pending item with its time; due are those at or before the wheel's
  // time, which is `now` rounded down to a tick and never moves back.
  const configs: Array<{ seed: number; tickMs: number; levels: number }> = [
    { seed: 1, tickMs: 100, levels: 5 },
    { seed: 2, tickMs: 1, levels: 5 },
    { seed: 3, tickMs: 7, levels: 3 },
    { seed: 4, tickMs: 1, levels: 1 },
    { seed: 5, tickMs: 10, levels: 2 },
  ];
  it.each(configs)('matches a brute-force list on random times (seed $seed, tick $tickMs ms, $levels levels)', ({ seed, tickMs, levels }) => {
    const rand = seededRandom(seed);
    const start = START + randomInt(rand, 0, 10_000);
    const wheel = new TimingWheel<number>({ tickMs, levels, startMs: start });
    const span = tickMs * 64 ** levels; // beyond this from now, items go to the overflow list
    const pending = new Map<number, number>(); // id -> atMs
    let wheelTick = Math.floor(start / tickMs);
    let now = start;
    let nextId = 0;
    let handedOut = 0;

    const randomTime = (): number => {
      switch (randomInt(rand, 0, 5)) {
        case 0:
          return now - randomInt(rand, 0, 10 * span); // past: due at once
        case 1:
          return now + randomInt(rand, 0, 64 * tickMs); // within level 0
        case 2:
          return now + randomInt(rand, 0, Math.min(span, 1e9)); // anywhere in the wheel
        case 3:
          return now + randomInt(rand, span, 5 * span); // overflow
        case 4:
          return now + 10 * YEAR_MS * rand(); // far future
        default:
          return wheelTick * tickMs + randomInt(rand, -2, 2) * tickMs; // on and around tick boundaries
      }
    };

    for (let step = 0; step < 3_000; step++) {
      const adds = randomInt(rand, 0, 6);
      for (let i = 0; i < adds; i++) {
        const at = Math.round(randomTime());
        wheel.add(at, nextId);
        pending.set(nextId++, at);
      }
      // Small steps, tick-sized steps, jumps, the occasional step back.
      const move = [randomInt(rand, 0, 3 * tickMs), randomInt(rand, 0, 200 * tickMs), randomInt(rand, 0, span), randomInt(rand, 0, 3 * span), -randomInt(rand, 0, 50 * tickMs)][randomInt(rand, 0, 4)]!;
      now += move;
      wheelTick = Math.max(wheelTick, Math.floor(now / tickMs));
      const expected = [...pending].filter(([, at]) => at <= wheelTick * tickMs).map(([id]) => id).sort((a, b) => a - b);
      const actual = wheel.advance(now).sort((a, b) => a - b);
      expect(actual).toEqual(expected);
      for (const id of actual) pending.delete(id);
      handedOut += actual.length;
      expect(wheel.size).toBe(pending.size);
    }
    // Drain: far enough for every remaining item.
    const last = Math.max(now, ...pending.values());
    const rest = wheel.advance(last + tickMs).sort((a, b) => a - b);
    expect(rest).toEqual([...pending.keys()].sort((a, b) => a - b));
    expect(wheel.size).toBe(0);
    expect(handedOut + rest.length).toBe(nextId);
  });
});
