import { describe, expect, it } from 'vitest';
import { isValidId, newObjectId } from '../../engine/docs/index.js';

describe('newObjectId', () => {
  it('is 24 lowercase hex characters', () => {
    for (let i = 0; i < 100; i++) expect(newObjectId()).toMatch(/^[0-9a-f]{24}$/);
  });

  it('starts with the seconds since the epoch', () => {
    const ms = Date.UTC(2024, 0, 1, 0, 0, 0);
    expect(newObjectId(ms).slice(0, 8)).toBe((ms / 1000).toString(16).padStart(8, '0'));
  });

  it('shares the 5 process bytes and sorts by creation', () => {
    const ids = Array.from({ length: 1000 }, (_, i) => newObjectId(Date.UTC(2024, 0, 1) + i * 10));
    expect(new Set(ids.map((id) => id.slice(8, 18))).size).toBe(1);
    expect(new Set(ids).size).toBe(ids.length);
    // The 3-byte counter may wrap once in a run; apart from that, ids ascend.
    let descents = 0;
    for (let i = 1; i < ids.length; i++) if (ids[i]! < ids[i - 1]!) descents++;
    expect(descents).toBeLessThanOrEqual(1);
    const later = newObjectId(Date.UTC(2024, 0, 1) + 60_000);
    expect(later > ids[ids.length - 1]!).toBe(true);
  });
});

describe('isValidId', () => {
  const cases: Array<[unknown, boolean]> = [
    ['abc', true],
    ['', true],
    [42, true],
    [1.5, true],
    [false, true],
    [Number.NaN, false],
    [Infinity, false],
    [null, false],
    [undefined, false],
    [{ a: 1 }, false],
    [[1], false],
    [new Date(0), false],
  ];
  for (const [v, expected] of cases) it(`${String(v)} -> ${expected}`, () => expect(isValidId(v)).toBe(expected));
});
