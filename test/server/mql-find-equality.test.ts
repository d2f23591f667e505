// A find that is a plain equality on one field (`{v: <string|number|boolean>}`) is answered through
// an index on that field alone without compiling the filter or planning (docs-model.ts,
// findByIndexedEquality). Over HTTP on a real server, each such find must give exactly what the
// same query written `{v: {$eq: ...}}` gives (the usual path: compiled, planned, same index), in
// the same order, and the set mingo (an oracle only) gives over the same documents: for ascending,
// descending, unique and sparse indexes; for indexes the path must leave to the planner (compound,
// two indexes on the field, partial); over multikey arrays, nested arrays, -0, long strings whose
// keys are shortened, missing fields and every other type; with limits and projections; after
// updates and deletes.
import { Query } from 'mingo';
import { describe, expect, it } from 'vitest';
import { randomInt, seededRandom } from '../helpers/random.js';
import { serverForFile } from '../helpers/server.js';

// Thousands of finds: no request rate limit.
const file = serverForFile({ rateLimit: 0 });

type Rand = () => number;
const pick = <T>(rand: Rand, xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;

const LONG_A = `${'x'.repeat(200)}a`;
const LONG_B = `${'x'.repeat(200)}b`;
// The scalar values a query may ask for: each is also stored, alone or in arrays.
const SCALARS: readonly (string | number | boolean)[] = ['a', 'b', '', 'é', '日本', 'A', LONG_A, LONG_B, 'x'.repeat(200), 0, -0, 1, 1.5, -2, 1e300, 2 ** 53, true, false];
// One of each for a unique index (0 and -0 are one value).
const UNIQUE = SCALARS.filter((s) => !Object.is(s, -0));
// Asked for but never stored.
const ABSENT: readonly (string | number | boolean)[] = ['zz', 7, LONG_A.slice(0, 150)];

function value(rand: Rand): unknown {
  const r = rand();
  if (r < 0.55) return pick(rand, SCALARS);
  if (r < 0.65) return null;
  if (r < 0.75) return Array.from({ length: randomInt(rand, 0, 3) }, () => (rand() < 0.85 ? pick(rand, SCALARS) : [pick(rand, SCALARS)]));
  if (r < 0.8) return { x: pick(rand, SCALARS) };
  if (r < 0.85) return [{ v: pick(rand, SCALARS) }];
  if (r < 0.9) return { $date: '2021-06-01T12:00:00Z' };
  return undefined; // missing
}

function documents(rand: Rand, n: number, unique: boolean): Record<string, unknown>[] {
  return Array.from({ length: n }, (_, i) => {
    const doc: Record<string, unknown> = { _id: rand() < 0.5 ? `id${randomInt(rand, 0, 1e6)}-${i}` : i * 7 + 3, w: randomInt(rand, 0, 5) };
    const v = unique ? (i < UNIQUE.length ? UNIQUE[i] : `u${i}`) : value(rand);
    if (v !== undefined) doc.v = v;
    return doc;
  });
}

/** The documents of a find, as the server answers it. */
async function find(collection: string, body: Record<string, unknown>): Promise<unknown[]> {
  const res = await file.mql('find', { collection, ...body });
  expect(res.status, res.text).toBe(200);
  return res.body.documents;
}

const sortById = (docs: unknown[]): unknown[] => [...docs].sort((a, b) => JSON.stringify((a as { _id: unknown })._id).localeCompare(JSON.stringify((b as { _id: unknown })._id)));

/**
 * Every query value with several limits and projections: `{v: q}` against `{v: {$eq: q}}` (the
 * same order), and without a limit against mingo over `docs` (the same set; -0 is 0 in JSON).
 */
async function compareAll(collection: string, docs: readonly Record<string, unknown>[]): Promise<number> {
  let matched = 0;
  for (const q of [...SCALARS, ...ABSENT]) {
    for (const limit of [undefined, 1, 2, 10_000]) {
      for (const projection of [undefined, { v: 1 }, { _id: 0, w: 1 }]) {
        const body = { limit, projection };
        const fast = await find(collection, { filter: { v: q }, ...body });
        const usual = await find(collection, { filter: { v: { $eq: q } }, ...body });
        expect(fast, `${collection} ${JSON.stringify({ q, limit, projection })}`).toEqual(usual);
        if (limit === undefined && projection === undefined) {
          const oracle = new Query({ v: q }).find(JSON.parse(JSON.stringify(docs))).all();
          expect(sortById(fast), `${collection} mingo ${JSON.stringify(q)}`).toEqual(sortById(oracle.slice(0, 100)));
          matched += fast.length;
        }
      }
    }
  }
  return matched;
}

async function collectionWith(docs: Record<string, unknown>[], indexes: Array<{ keys: Record<string, 1 | -1>; options?: Record<string, unknown> }>): Promise<string> {
  const collection = await file.seed(docs, 'eq');
  for (const { keys, options } of indexes) await file.createIndex(collection, keys, options);
  return collection;
}

describe('a plain equality answered through a one-field index', () => {
  const cases: Array<[string, Array<{ keys: Record<string, 1 | -1>; options?: Record<string, unknown> }>]> = [
    ['ascending', [{ keys: { v: 1 } }]],
    ['descending', [{ keys: { v: -1 } }]],
    ['sparse', [{ keys: { v: 1 }, options: { sparse: true } }]],
    ['with an index on another field', [{ keys: { w: 1 } }, { keys: { v: -1 } }]],
    // The path leaves these to the planner: same answers all the same.
    ['compound', [{ keys: { v: 1, w: -1 } }]],
    ['two indexes on the field', [{ keys: { v: 1 } }, { keys: { v: -1, w: 1 } }]],
    ['partial', [{ keys: { v: 1 }, options: { partialFilterExpression: { w: { $gte: 2 } } } }]],
    ['no index', []],
  ];
  for (const [name, indexes] of cases) {
    it(`gives the usual path's answer and mingo's: ${name}`, async () => {
      const rand = seededRandom(name.length * 7919);
      const docs = documents(rand, 240, false);
      const collection = await collectionWith(docs, indexes);
      expect(await compareAll(collection, docs)).toBeGreaterThan(100);
    });
  }

  it('over a unique index', async () => {
    const docs = documents(seededRandom(5), 60, true);
    const collection = await collectionWith(docs, [{ keys: { v: 1 }, options: { unique: true } }]);
    expect(await compareAll(collection, docs)).toBe(SCALARS.length); // -0 finds 0
  });

  it('after updates and deletes', async () => {
    const rand = seededRandom(77);
    const docs = documents(rand, 240, false);
    const collection = await collectionWith(docs, [{ keys: { v: 1 } }]);
    for (let i = 0; i < 80; i++) {
      const doc = pick(rand, docs);
      if (rand() < 0.3) {
        const res = await file.mql('deleteOne', { collection, filter: { _id: doc._id } });
        expect(res.status, res.text).toBe(200);
        docs.splice(docs.indexOf(doc), 1);
      } else {
        const v = value(rand);
        const update = v === undefined ? { $unset: { v: '' } } : { $set: { v } };
        const res = await file.mql('updateOne', { collection, filter: { _id: doc._id }, update });
        expect(res.status, res.text).toBe(200);
        if (v === undefined) delete doc.v;
        else doc.v = v;
      }
    }
    expect(await compareAll(collection, docs)).toBeGreaterThan(100);
  });

  it('refuses what the usual path refuses, and takes what it takes', async () => {
    const collection = await collectionWith(documents(seededRandom(9), 20, false), [{ keys: { v: 1 } }]);
    await file.refuses('find', { collection, filter: { v: 'a' }, limit: 0 }, 400, 'VALIDATION_FAILED', 'limit must be an integer');
    await file.refuses('find', { collection, filter: { v: 'a' }, maxTimeMS: -1 }, 400, 'QUERY_ERROR', 'maxTimeMS');
    await file.refuses('find', { collection, filter: { v: 'a' }, explain: 'yes' }, 400, 'VALIDATION_FAILED', 'explain must be');
    await file.refuses('find', { collection, filter: { _id: 'a' }, explain: 'yes' }, 400, 'VALIDATION_FAILED', 'explain must be');
    await file.refuses('find', { collection, filter: { v: 'a' }, projection: { v: 1, w: 0 } }, 400, 'QUERY_ERROR', 'projection');
    await file.refuses('find', { collection, filter: { v: 'a' }, projection: { score: { $meta: 'textScore' } } }, 400, 'QUERY_ERROR', 'text score');
    // A field name the filter reads as an operator is the usual path's business (and its error).
    await file.refuses('find', { collection, filter: { $v: 'a' } }, 400, 'QUERY_ERROR', '$v');
    const explained = await file.mql('find', { collection, filter: { v: 'a' }, explain: true });
    expect(explained.status, explained.text).toBe(200);
    expect(explained.body.explain.plan).toMatchObject({ stage: 'IXSCAN', indexName: 'v_1' });
  });
});
