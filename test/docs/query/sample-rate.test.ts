// $sampleRate in the matcher: the bounds, MongoDB's parse errors, and the two ways it draws
// (query/miscellaneous/sample-rate.ts): by `_id` with one seed per compiled filter, so repeated
// tests of one document agree, or afresh per test.
import { describe, expect, it } from 'vitest';
import { compileFilter } from '../../../engine/docs/index.js';

const docs = Array.from({ length: 2000 }, (_, i) => ({ _id: i % 2 === 0 ? i : `id-${i}`, a: i }));

describe('$sampleRate', () => {
  it('0 matches nothing and 1 everything', () => {
    expect(docs.filter((d) => compileFilter({ $sampleRate: 0 }).test(d))).toHaveLength(0);
    expect(docs.filter((d) => compileFilter({ $sampleRate: 1 }).test(d))).toHaveLength(2000);
  });

  it('draws once per _id and compiled filter: a document tested again, or only its _id, gets the same answer', () => {
    const { test } = compileFilter({ $sampleRate: 0.5, a: { $gte: 0 } });
    const first = docs.map((d) => test(d));
    expect(docs.map((d) => test(d))).toEqual(first);
    const onlyIds = compileFilter({ $sampleRate: 0.5 });
    const byId = docs.map((d) => onlyIds.test({ _id: d._id }));
    expect(docs.map((d) => onlyIds.test(d))).toEqual(byId);
    // About half, numbers and strings alike (six standard deviations: 1000 ± 134).
    const n = first.filter(Boolean).length;
    expect(n).toBeGreaterThan(866);
    expect(n).toBeLessThan(1134);
    expect(docs.filter((d, i) => first[i] && typeof d._id === 'string').length).toBeGreaterThan(400);
  });

  it('another compiled filter draws another sample', () => {
    const a = docs.map((d) => compileFilter({ $sampleRate: 0.5 }).test(d));
    const one = compileFilter({ $sampleRate: 0.5 });
    const b = docs.map((d) => one.test(d));
    expect(a.filter((x, i) => x !== b[i]).length).toBeGreaterThan(0);
  });

  it('draws afresh per test when compiled for documents tested once', () => {
    const { test } = compileFilter({ $sampleRate: 0.5 }, undefined, { sampling: 'independent' });
    const same = { _id: 1 };
    const hits = Array.from({ length: 2000 }, () => test(same)).filter(Boolean).length;
    expect(hits).toBeGreaterThan(866);
    expect(hits).toBeLessThan(1134);
  });

  const errors: Array<[string, unknown, RegExp]> = [
    ['a rate past 1', { $sampleRate: 2 }, /^numeric argument to \$sampleRate must be in \[0, 1\]$/],
    ['a string', { $sampleRate: '0.1' }, /^argument to \$sampleRate must be a numeric type$/],
    ['inside $elemMatch', { a: { $elemMatch: { $sampleRate: 0.5 } } }, /^\$sampleRate can only be applied to the top-level document$/],
    ['inside $and inside $elemMatch', { a: { $elemMatch: { $and: [{ b: 1 }, { $sampleRate: 0.5 }] } } }, /top-level document/],
    ['as a field operator', { a: { $sampleRate: 0.5 } }, /^unknown operator: \$sampleRate$/],
  ];
  for (const [name, filter, message] of errors) {
    it(`refuses ${name}`, () => expect(() => compileFilter(filter)).toThrow(expect.objectContaining({ code: 'QUERY_ERROR', message: expect.stringMatching(message) })));
  }
});
