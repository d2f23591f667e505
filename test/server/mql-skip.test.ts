// skip over HTTP: documents a find skips are tested on the filter's fields alone, never decoded
// whole (docs-model.ts, FindCollector), so every page of skip/limit paging must still be mingo's
// (an oracle only) page: filters on nested paths, arrays, null and missing fields, $elemMatch,
// $expr on fields (read in part) and on $$ROOT (read whole), the empty filter, through a
// collection scan and an index, in _id order.
import { Query } from 'mingo';
import { describe, expect, it } from 'vitest';
import { serverForFile } from '../helpers/server.js';
import { randomInt, seededRandom } from '../helpers/random.js';

const file = serverForFile();

function makeDocs(n: number): Record<string, unknown>[] {
  const rand = seededRandom(44);
  return Array.from({ length: n }, (_, i) => {
    const d: Record<string, unknown> = { _id: i, k: randomInt(rand, 0, 9), pad: 'p'.repeat(randomInt(rand, 0, 300)) };
    const r = rand();
    if (r < 0.3) d['a'] = { b: randomInt(rand, 0, 5), c: [randomInt(rand, 0, 3), 'x'] };
    else if (r < 0.5) d['a'] = [{ b: randomInt(rand, 0, 5) }, { b: 'y' }];
    else if (r < 0.6) d['a'] = null;
    if (rand() < 0.7) d['tags'] = Array.from({ length: randomInt(rand, 0, 4) }, () => `t${randomInt(rand, 0, 5)}`);
    return d;
  });
}

const DOCS = makeDocs(1500);

describe('skip', () => {
  it("gives mingo's pages for every filter shape, scanned or through an index", async () => {
    const plain = await file.seed(DOCS, 'skip');
    const indexed = await file.seed(DOCS, 'skipix');
    await file.createIndex(indexed, { k: 1 });
    const filters: Record<string, unknown>[] = [
      {},
      { k: { $gte: 3 } },
      { 'a.b': 2 },
      { 'a.b': { $in: [1, 'y'] } },
      { a: null },
      { 'a.c': 'x' },
      { a: { $elemMatch: { b: { $gt: 2 } } } },
      { tags: 't3', k: { $lt: 7 } },
      { tags: { $size: 0 } },
      { 'a.b': { $exists: false } },
      { $expr: { $gt: ['$k', 4] } },
      { $expr: { $gt: [{ $size: { $objectToArray: '$$ROOT' } }, 4] } },
      { $or: [{ k: 1 }, { 'a.b': 0 }] },
    ];
    for (const filter of filters) {
      const all = new Query(filter).find(DOCS).sort({ _id: 1 }).all() as any[];
      for (const c of [plain, indexed]) {
        for (const [skip, limit] of [[1, 5], [17, 40], [Math.floor(all.length / 2), 25], [all.length - 3, 10], [all.length + 5, 10]] as const) {
          const res = await file.mql('find', { collection: c, filter, sort: { _id: 1 }, skip, limit });
          expect(res.status, res.text).toBe(200);
          expect(res.body.documents.map((d: any) => d._id), `${c} ${JSON.stringify(filter)} skip ${skip}`).toEqual(all.slice(skip, skip + limit).map((d) => d._id));
        }
      }
      // Without a sort the index read's order is the index's: compare with the same find whole.
      const whole = await file.mql('find', { collection: indexed, filter: { ...filter, k: { $gte: 0 } }, limit: 10_000 });
      const paged = await file.mql('find', { collection: indexed, filter: { ...filter, k: { $gte: 0 } }, skip: 10, limit: 30 });
      expect(paged.body.documents, JSON.stringify(filter)).toEqual(whole.body.documents.slice(10, 40));
    }
  });
});
