import { describe, expect, it } from 'vitest';
import { documentKeys, documentKeysByWalk, entryKey, idComponent, oneFieldEntryKey, type IndexField } from '../../engine/docs/index-key.js';
import type { Doc } from '../../engine/docs/index.js';
import { randomInt, seededRandom } from '../helpers/random.js';

// documentKeys answers documents whose indexed paths all reach one scalar without the general walk
// (documentKeysByWalk); both must give the same entries, flags and errors for every document.

const NAMES = ['a', 'b', 'c', '0', '1'];

function randomValue(rand: () => number, depth: number): unknown {
  const r = rand();
  if (r < 0.12) return null;
  if (r < 0.3) return randomInt(rand, -3, 3) + (rand() < 0.2 ? 0.5 : 0);
  if (r < 0.45) return rand() < 0.1 ? 'x'.repeat(randomInt(rand, 195, 260)) : ['', 'a', 'b', 'é', 'a\u0000b'][randomInt(rand, 0, 4)];
  if (r < 0.52) return rand() < 0.5;
  if (r < 0.58) return new Date(randomInt(rand, -2, 2) * 86_400_000);
  if (depth >= 3) return 1;
  if (r < 0.8) return randomObject(rand, depth + 1);
  return Array.from({ length: randomInt(rand, 0, 3) }, () => randomValue(rand, depth + 1));
}

function randomObject(rand: () => number, depth: number): Doc {
  const out: Doc = {};
  for (const name of NAMES) if (rand() < 0.45) out[name] = randomValue(rand, depth);
  return out;
}

function randomPath(rand: () => number): string {
  return Array.from({ length: randomInt(rand, 1, 3) }, () => NAMES[randomInt(rand, 0, NAMES.length - 1)]!).join('.');
}

function outcome(f: () => unknown): unknown {
  try {
    return { ok: f() };
  } catch (err) {
    return { error: (err as Error).message };
  }
}

describe('documentKeys', () => {
  it('gives what the general walk gives, for scalar and non-scalar paths alike', () => {
    const rand = seededRandom(7);
    let scalar = 0;
    let multikey = 0;
    for (let i = 0; i < 5000; i++) {
      const doc = { _id: i, ...randomObject(rand, 0) };
      const fields: IndexField[] = Array.from({ length: randomInt(rand, 1, 3) }, () => ({ path: randomPath(rand), direction: rand() < 0.5 ? 1 : -1 }));
      const fast = outcome(() => documentKeys(doc, fields));
      const walked = outcome(() => documentKeysByWalk(doc, fields));
      expect(fast, JSON.stringify({ doc, fields })).toStrictEqual(walked);
      const keys = (walked as { ok?: { entries: unknown[]; multikey: boolean } }).ok;
      if (keys?.multikey === false && keys.entries.length === 1) scalar++;
      if (keys?.multikey === true) multikey++;
    }
    // Both kinds of documents were compared, not only one.
    expect(scalar).toBeGreaterThan(1000);
    expect(multikey).toBeGreaterThan(500);
  });

  it('takes a path through a scalar or a date as missing, and shortens long strings (lossy)', () => {
    const fields: IndexField[] = [{ path: 'a.b', direction: 1 }];
    for (const doc of [{ a: 5 }, { a: new Date(0) }, { a: 'text' }, {}, { a: { b: null } }]) {
      expect(documentKeys(doc, fields)).toStrictEqual(documentKeysByWalk(doc, fields));
    }
    const long = documentKeys({ a: { b: 'y'.repeat(300) } }, fields);
    expect(long.lossy).toBe(true);
    expect(long).toStrictEqual(documentKeysByWalk({ a: { b: 'y'.repeat(300) } }, fields));
  });
});

/** True when `path` leads through documents only to a document (an object value: the general way indexes it). */
function reachesObject(doc: Doc, path: string): boolean {
  let cur: unknown = doc;
  for (const name of path.split('.')) {
    if (cur === null || typeof cur !== 'object' || Array.isArray(cur) || cur instanceof Date || !Object.hasOwn(cur, name)) return false;
    cur = (cur as Doc)[name];
  }
  return cur !== null && typeof cur === 'object' && !Array.isArray(cur) && !(cur instanceof Date);
}

// An insert into a one-field plain index takes oneFieldEntryKey's key when it gives one: it must
// be exactly the key of documentKeys' one entry, and it must give none where documentKeys would
// make several entries or a lossy one (the general way sets the index's flags then).
describe('oneFieldEntryKey', () => {
  it('gives the key of documentKeys\' single exact entry, and nothing where there is no such entry', () => {
    const rand = seededRandom(8807);
    let taken = 0;
    let declined = 0;
    for (let i = 0; i < 20_000; i++) {
      const doc: Doc = { _id: rand() < 0.5 ? i : `id-${i}`, ...randomObject(rand, 0) };
      const field: IndexField = { path: randomPath(rand), direction: rand() < 0.5 ? 1 : -1 };
      const idPart = idComponent(doc['_id']).part;
      const fast = oneFieldEntryKey(doc, field, idPart);
      const keys = documentKeys(doc, [field]);
      const context = JSON.stringify({ doc, field });
      if (keys.entries.length === 1 && !keys.multikey && !keys.lossy && !reachesObject(doc, field.path)) {
        expect(fast, context).toBeDefined();
        expect(fast!.equals(entryKey(keys.entries[0]!, idPart)), context).toBe(true);
        taken++;
      } else {
        expect(fast, context).toBeUndefined();
        declined++;
      }
      // The shared tuple keeps nothing between calls: a second call gives the same key.
      if (fast !== undefined) expect(oneFieldEntryKey(doc, field, idPart)!.equals(fast)).toBe(true);
    }
    expect(taken).toBeGreaterThan(5000);
    expect(declined).toBeGreaterThan(1000);
  });

  it('covers every scalar kind, both directions, and a NUL inside a string', () => {
    const values = [null, undefined, 0, -0, 1.5, -7, Number.MAX_VALUE, NaN, '', 'a', 'a\u0000b', 'é', 'x'.repeat(200), true, false, new Date(0), new Date(-86_400_000)];
    for (const value of values) {
      for (const direction of [1, -1] as const) {
        const doc: Doc = value === undefined ? { _id: 1 } : { _id: 1, v: value };
        const field: IndexField = { path: 'v', direction };
        const idPart = idComponent(1).part;
        const keys = documentKeys(doc, [field]);
        expect(oneFieldEntryKey(doc, field, idPart)!.equals(entryKey(keys.entries[0]!, idPart)), String(value)).toBe(true);
      }
    }
    // A string past the kept prefix is lossy: declined.
    expect(oneFieldEntryKey({ _id: 1, v: 'x'.repeat(201) }, { path: 'v', direction: 1 }, idComponent(1).part)).toBeUndefined();
  });
});
