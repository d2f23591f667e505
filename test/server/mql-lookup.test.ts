// $lookup by equality over HTTP, against mingo (an oracle only): input documents that share their
// local values (the run remembers what each filter brought in), later stages that change the
// joined documents (each input document must get its own), and random local values of every kind
// (arrays, null, missing, numbers of both kinds, dates).
import { aggregate } from 'mingo';
import { describe, expect, it } from 'vitest';
import { seededRandom } from '../helpers/random.js';
import { serverForFile } from '../helpers/server.js';

const file = serverForFile();

/** The pipeline's answer from tetradb, and from mingo over the same documents. */
async function both(collections: Record<string, unknown[]>, from: string, pipeline: Record<string, unknown>[]): Promise<[unknown[], unknown[]]> {
  const names = new Map<string, string>();
  for (const [name, docs] of Object.entries(collections)) names.set(name, await file.seed(docs, name));
  const rename = (p: unknown): unknown => JSON.parse(JSON.stringify(p).replace(/"from":"(\w+)"/g, (_m, n: string) => `"from":"${names.get(n) ?? n}"`));
  const ours = await file.aggregate(names.get(from)!, pipeline.map(rename) as unknown[]);
  const theirs = aggregate(collections[from]!, pipeline, { collectionResolver: (n: string) => collections[n]! as never[] } as never) as unknown[];
  return [ours, theirs];
}

const CUSTOMERS = [
  { _id: 'c1', name: 'Ada', tier: 1 },
  { _id: 'c2', name: 'Grace', tier: 2 },
  { _id: 'c3', name: 'Edsger', tier: 3 },
];

describe('$lookup by equality', () => {
  it('gives each input document its own copy of the joined documents, however many share a local value', async () => {
    const orders = Array.from({ length: 60 }, (_, i) => ({ _id: i, customer: `c${1 + (i % 3)}`, total: i }));
    const pipeline = [
      { $lookup: { from: 'customers', localField: 'customer', foreignField: '_id', as: 'who' } },
      { $unwind: '$who' },
      // Changes the joined document: a later order of the same customer must not see it.
      { $set: { 'who.tier': { $add: ['$who.tier', '$total'] }, 'who.orders': ['$_id'] } },
      { $sort: { _id: 1 } },
    ];
    const [ours, theirs] = await both({ orders, customers: CUSTOMERS }, 'orders', pipeline);
    // Worked out from the data: each order's customer tier plus its own total, itself as the only order.
    expect((ours as Array<{ _id: number; who: { tier: number; orders: number[] } }>).map((d) => [d._id, d.who.tier, d.who.orders])).toEqual(orders.map((o) => [o._id, 1 + (o._id % 3) + o.total, [o._id]]));
    // mingo shares the joined objects between the documents, so its $set changes every one of a
    // customer's orders (docs/mql.md, "Where the mingo oracle differs"): it differs here.
    expect(ours).not.toEqual(theirs);
  });

  it('matches mingo over random local values of every kind (40 rounds)', async () => {
    const rand = seededRandom(31);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
    // The date and its ISO string: equal as JSON, not as values.
    const values = [1, 2, 2.5, '1', 'a', 'b', null, true, [1, 'a'], [], [2, [1]], { x: 1 }, { $date: '2026-01-01T00:00:00Z' }, '2026-01-01T00:00:00.000Z'];
    for (let round = 0; round < 40; round++) {
      const foreign = Array.from({ length: 12 }, (_, i) => {
        const d: Record<string, unknown> = { _id: `f${i}` };
        if (rand() < 0.9) d['k'] = pick(values);
        return d;
      });
      const local = Array.from({ length: 30 }, (_, i) => {
        const d: Record<string, unknown> = { _id: i };
        if (rand() < 0.85) d['v'] = pick(values);
        return d;
      });
      const pipeline = [{ $lookup: { from: 'foreign', localField: 'v', foreignField: 'k', as: 'hits' } }, { $project: { ids: '$hits._id' } }, { $sort: { _id: 1 } }];
      // Dates as mingo takes them: Date objects.
      const revive = (docs: Array<Record<string, unknown>>) => docs.map((d) => JSON.parse(JSON.stringify(d), (_k, v) => (v !== null && typeof v === 'object' && '$date' in v ? new Date(v.$date) : v)));
      const names = { local: await file.seed(local, 'local'), foreign: await file.seed(foreign, 'foreign') };
      const ours = await file.aggregate(names.local, [{ $lookup: { from: names.foreign, localField: 'v', foreignField: 'k', as: 'hits' } }, ...pipeline.slice(1)]);
      const theirs = aggregate(revive(local), pipeline, { collectionResolver: () => revive(foreign) } as never) as Array<{ _id: number; ids: string[] }>;
      expect(
        ours.map((d: { _id: number; ids: string[] }) => [d._id, [...d.ids].sort()]),
        `round ${round}: ${JSON.stringify({ local, foreign })}`,
      ).toEqual(theirs.map((d) => [d._id, [...d.ids].sort()]));
    }
  });
});
