// A pipeline that starts with $sort and a $limit (after an optional $match; a $skip between them
// or not) sorts documents read in part, only their sort keys and _id, and reads the winners (past
// the skip) whole afterwards (pipeline.ts, topK).
// Over HTTP against mingo (an oracle only): random documents with ties, missing and mixed-type
// keys, random sorts and limits, with and without a leading $match, and stages after the limit
// that read every field.
import { aggregate } from 'mingo';
import { describe, expect, it } from 'vitest';
import { randomInt, seededRandom } from '../helpers/random.js';
import { serverForFile } from '../helpers/server.js';

const file = serverForFile();

describe('$sort + $limit over documents read in part', () => {
  it('answers as mingo does, whole documents included (60 rounds)', async () => {
    const rand = seededRandom(2611);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
    for (let round = 0; round < 60; round++) {
      const arrays = round % 2 === 1;
      const docs = Array.from({ length: 80 }, (_, i) => {
        const d: Record<string, unknown> = { _id: i, body: `text ${i}`, nested: { deep: [i, { x: i % 3 }] } };
        if (rand() < 0.9) d['a'] = pick(arrays ? [1, 2, 3, 2.5, 'x', null, [1, 3]] : [1, 2, 3, 2.5, 'x', null]);
        if (rand() < 0.9) d['b'] = randomInt(rand, 0, 5);
        d['g'] = pick(['p', 'q']);
        return d;
      });
      const c = await file.seed(docs, 'topk');
      const sort = pick([{ a: 1 }, { a: -1, b: 1 }, { b: -1 }, { b: 1, a: -1, _id: -1 }, { 'nested.deep': 1 }]);
      const pipeline: Record<string, unknown>[] = [];
      if (rand() < 0.5) pipeline.push({ $match: { g: pick(['p', 'q']) } });
      // Sometimes a $skip between them (folded into the sort's limit; only the documents past it are read whole).
      pipeline.push({ $sort: sort });
      if (rand() < 0.4) pipeline.push({ $skip: randomInt(rand, 0, 60) });
      pipeline.push({ $limit: randomInt(rand, 1, 30) });
      if (rand() < 0.5) pipeline.push({ $addFields: { label: { $concat: ['$body', '!'] } } });
      const ours = await file.aggregate(c, pipeline);
      // The same sort over whole documents: a stage first that changes nothing takes the top-k path away.
      const plain = await file.aggregate(c, [{ $unset: 'not_a_field' }, ...pipeline]);
      expect(ours, `round ${round}: ${JSON.stringify(pipeline)}`).toEqual(plain);
      // mingo sorts an array by its first element, MongoDB by its least (ascending) or greatest
      // (descending) element (docs/mql.md, "Where the mingo oracle differs"): compared without arrays.
      if (!docs.some((d) => Array.isArray(d['a']))) {
        // Ties keep the input order in both (tetradb's sort is stable over _id order, mingo's over insertion order, the same here).
        expect(ours, `round ${round}: ${JSON.stringify(pipeline)}`).toEqual(aggregate(docs, pipeline) as unknown[]);
      }
      // Every field of every document came back, not only the sort keys.
      for (const d of ours) expect(Object.keys(d)).toEqual(expect.arrayContaining(['_id', 'body', 'nested', 'g']));
    }
  });
});

describe('find with a sort no index gives, over stored documents read in part', () => {
  it('answers as mingo does past the point where the scan stops prefiltering (most documents pass)', async () => {
    const rand = seededRandom(77);
    // 1,500 documents, 70% of them matching: the scan's prefilter turns itself off after 512
    // (it rejects too few), so the find itself must test the filter on the fields it reads.
    const docs = Array.from({ length: 1500 }, (_, i) => ({ _id: i, g: rand() < 0.7 ? 'p' : 'q', b: randomInt(rand, 0, 40), body: `text ${i}`, nested: { x: i % 5 } }));
    const c = await file.seed(docs, 'findtop');
    for (const [filter, sort, limit, skip] of [
      [{ g: 'p' }, { b: -1 }, 15, 0],
      [{ g: 'p', b: { $lt: 30 } }, { b: 1, _id: -1 }, 40, 5],
      [{}, { 'nested.x': -1, b: 1 }, 25, 0],
      [{ g: { $ne: 'q' } }, { body: 1 }, 10, 3],
    ] as const) {
      const res = await file.mql('find', { collection: c, filter, sort, limit, skip });
      expect(res.status, res.text).toBe(200);
      const expected = aggregate(docs, [{ $match: filter }, { $sort: sort }, { $skip: skip }, { $limit: limit }]) as unknown[];
      expect(res.body.documents, JSON.stringify({ filter, sort, limit, skip })).toEqual(expected);
    }
  });
});

describe('find with a sort no index gives, over an index read', () => {
  it('ranks the entries an index names on the fields it reads, and answers as mingo does', async () => {
    const rand = seededRandom(4242);
    // The index on g bounds the read (g = 'p': ~700 entries, past a chunk); the rest of the filter
    // and the sort read fields the index does not hold, so the find tests and ranks each entry's
    // document on those fields, then reads the winners whole.
    const docs = Array.from({ length: 1000 }, (_, i) => ({ _id: i, g: rand() < 0.7 ? 'p' : 'q', b: randomInt(rand, 0, 40), body: `text ${i}`, nested: { x: i % 5, y: [i % 3, 'z'] } }));
    const c = await file.seed(docs, 'indextop');
    await file.createIndex(c, { g: 1 });
    for (const [filter, sort, limit, skip, projection] of [
      [{ g: 'p' }, { b: -1 }, 15, 0, undefined],
      [{ g: 'p', b: { $lt: 30 } }, { b: 1, _id: -1 }, 40, 5, undefined],
      // Ties keep the plan's order (index order, then _id), mingo's the input's: with two index
      // ranges those differ, so this sort ends on _id.
      [{ g: { $in: ['p', 'q'] }, 'nested.x': { $ne: 2 } }, { 'nested.x': -1, b: 1, _id: 1 }, 25, 0, { body: 1, b: 1 }],
      [{ g: 'q', body: { $regex: '1$' } }, { body: 1 }, 10, 3, { nested: 0 }],
    ] as const) {
      const res = await file.mql('find', { collection: c, filter, sort, limit, skip, ...(projection === undefined ? {} : { projection }), explain: true });
      expect(res.status, res.text).toBe(200);
      expect(res.body.explain.plan.indexName, JSON.stringify(res.body.explain.plan)).toBe('g_1');
      const stages: Record<string, unknown>[] = [{ $match: filter }, { $sort: sort }, { $skip: skip }, { $limit: limit }];
      if (projection !== undefined) stages.push({ $project: projection });
      expect(res.body.documents, JSON.stringify({ filter, sort, limit, skip })).toEqual(aggregate(docs, stages) as unknown[]);
    }
  });
});
