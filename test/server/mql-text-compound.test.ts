// Compound and partial text indexes, and $text inside $or, over HTTP on a real server: the
// manual's examples ("Limit the Number of Entries Scanned", compound text index restrictions),
// MongoDB's jstests (fts_partition1, fts_projection, fts6), prefix-equality enforcement, entries
// kept through writes and a restart, partial membership, and a randomized check against a
// brute-force model (the engine's tokenizer for the words, plain JavaScript for the rest).
import { describe, expect, it } from 'vitest';
import { findTextLanguage, INDEX_TOKENS, tokenize } from '../../engine/docs/text/index.js';
import { http, serverForFile, signup, startServer } from '../helpers/server.js';

const file = serverForFile();
const mql = file.mql.bind(file);

// MongoDB's planner messages (query_planner.cpp).
const UNUSABLE = 'failed to use text index to satisfy $text query (if text index is compound, are equality predicates given for all prefix fields?)';
const TEXT_UNDER_OR = 'Failed to produce a solution for TEXT under OR - other non-TEXT clauses under OR have to be indexed as well.';

// The manual's "Limit the Number of Entries Scanned": an inventory with a department prefix.
const INVENTORY = [
  { _id: 1, dept: 'tech', description: 'lime green computer' },
  { _id: 2, dept: 'tech', description: 'wireless red mouse' },
  { _id: 3, dept: 'kitchen', description: 'green placemat' },
  { _id: 4, dept: 'kitchen', description: 'red peeler' },
  { _id: 5, dept: 'food', description: 'green apple' },
  { _id: 6, dept: 'food', description: 'red potato' },
];

async function inventory(): Promise<string> {
  const c = await file.seed(INVENTORY, 'inventory');
  const res = await mql('createIndex', { collection: c, keys: { dept: 1, description: 'text' } });
  expect(res.status, res.text).toBe(200);
  expect(res.body).toEqual({ name: 'dept_1_description_text', created: true });
  return c;
}

async function find(collection: string, filter: unknown, extra: Record<string, unknown> = {}): Promise<any> {
  const res = await mql('find', { collection, filter, ...extra });
  expect(res.status, res.text).toBe(200);
  return res.body;
}

async function ids(collection: string, filter: unknown, extra: Record<string, unknown> = {}): Promise<unknown[]> {
  return (await find(collection, filter, extra)).documents.map((d: { _id: unknown }) => d._id);
}

const sorted = (xs: unknown[]): unknown[] => [...xs].sort((a, b) => Number(a) - Number(b));

describe('compound text indexes', () => {
  it('answers the manual\'s example, reading only the entries under the prefix value', async () => {
    const c = await inventory();
    expect(await ids(c, { dept: 'kitchen', $text: { $search: 'green' } })).toEqual([3]);
    expect(sorted(await ids(c, { dept: { $eq: 'food' }, $text: { $search: 'green red' } }))).toEqual([5, 6]);
    const explained = await find(c, { dept: 'kitchen', $text: { $search: 'green' } }, { explain: true });
    expect(explained.explain.plan).toEqual({ stage: 'TEXT', indexName: 'dept_1_description_text', keyPattern: { dept: 1, _fts: 'text', _ftsx: 1 }, terms: 1 });
    // Three documents hold "green"; the kitchen's one entry is all the read sees.
    expect(explained.explain.keysExamined).toBe(1);
    expect(explained.explain.docsExamined).toBe(1);
  });

  it('needs an equality on every prefix field, beside the $text (MongoDB\'s error otherwise)', async () => {
    const c = await inventory();
    const refusals: unknown[] = [
      { $text: { $search: 'green' } },
      { dept: { $in: ['kitchen', 'food'] }, $text: { $search: 'green' } },
      { dept: { $gt: 'a' }, $text: { $search: 'green' } },
      // The equality must be AND-ed with the $text itself, not outside the $or holding it (planner_ixselect.cpp).
      { dept: 'kitchen', $or: [{ $text: { $search: 'green' } }, { _id: 6 }] },
    ];
    for (const filter of refusals) await file.refuses('find', { collection: c, filter }, 400, 'QUERY_ERROR', UNUSABLE);
    await file.refuses('countDocuments', { collection: c, filter: { $text: { $search: 'green' } } }, 400, 'QUERY_ERROR', UNUSABLE);
    await file.refuses('deleteMany', { collection: c, filter: { $text: { $search: 'green' } } }, 400, 'QUERY_ERROR', UNUSABLE);
    expect(await file.all(c)).toHaveLength(INVENTORY.length);
    // fts_partition1: with the prefix given, the search and its score work.
    const scored = await find(c, { dept: 'tech', $text: { $search: 'mouse' } }, { projection: { score: { $meta: 'textScore' } } });
    expect(scored.documents).toEqual([{ _id: 2, dept: 'tech', description: 'wireless red mouse', score: expect.any(Number) }]);
    expect(scored.documents[0].score).toBeGreaterThan(0);
  });

  it('lists MongoDB\'s key pattern and default name, with suffix fields; drops by name or key pattern', async () => {
    const c = await file.seed([{ _id: 1, category: 'a', body: 'hello world', views: 3 }], 'suffix');
    await file.createIndex(c, { category: 1, body: 'text', title: 'text', views: -1 } as never);
    const [, text] = await file.indexes(c);
    expect(text).toEqual({
      name: 'category_1_body_text_title_text_views_-1',
      key: { category: 1, _fts: 'text', _ftsx: 1, views: -1 },
      weights: { body: 1, title: 1 },
      default_language: 'english',
      language_override: 'language',
      textIndexVersion: 3,
    });
    // The same index again is a no-op; another text index is MongoDB's error.
    expect((await mql('createIndex', { collection: c, keys: { category: 1, body: 'text', title: 'text', views: -1 } })).body).toEqual({ name: 'category_1_body_text_title_text_views_-1', created: false });
    await file.refuses('createIndex', { collection: c, keys: { body: 'text' } }, 409, 'CONFLICT', 'only one text index per collection allowed');
    // Suffix fields filter like any condition (tested on the document).
    expect(await ids(c, { category: 'a', views: { $gte: 3 }, $text: { $search: 'hello' } })).toEqual([1]);
    expect(await ids(c, { category: 'a', views: { $gt: 3 }, $text: { $search: 'hello' } })).toEqual([]);
    expect((await mql('dropIndex', { collection: c, index: { category: 1, _fts: 'text', _ftsx: 1, views: -1 } })).status).toBe(200);
    expect(await file.indexes(c)).toHaveLength(1);
    await file.createIndex(c, { category: 1, body: 'text' });
    expect((await mql('dropIndex', { collection: c, index: 'category_1_body_text' })).body).toEqual({ dropped: 'category_1_body_text' });
  });

  it('refuses an array in a prefix or suffix field, on writes and at build, changing nothing', async () => {
    const c = await file.seed([{ _id: 1, dept: 'x', description: 'words' }], 'arrays');
    await file.createIndex(c, { dept: 1, description: 'text', rank: 1 });
    await file.refuses('insertOne', { collection: c, document: { _id: 2, dept: ['x', 'y'], description: 'more words' } }, 400, 'VALIDATION_FAILED', "Field 'dept' of text index contains an array in document");
    await file.refuses('insertOne', { collection: c, document: { _id: 2, dept: 'x', rank: [1, 2], description: 'more words' } }, 400, 'VALIDATION_FAILED', "Field 'rank' of text index contains an array in document");
    // An array along the path counts too, even in a document without text (MongoDB checks it first).
    await file.refuses('insertOne', { collection: c, document: { _id: 2, dept: 'x', rank: [{ a: 1 }] } }, 400, 'VALIDATION_FAILED', "Field 'rank' of text index contains an array");
    await file.refuses('updateOne', { collection: c, filter: { _id: 1 }, update: { $set: { dept: ['z'] } } }, 400, 'VALIDATION_FAILED', "Field 'dept' of text index contains an array");
    expect(await file.all(c)).toEqual([{ _id: 1, dept: 'x', description: 'words' }]);
    // At build: the index is not made.
    const d = await file.seed([{ _id: 1, dept: ['x'], description: 'words' }], 'arrays');
    await file.refuses('createIndex', { collection: d, keys: { dept: 1, description: 'text' } }, 400, 'VALIDATION_FAILED', "Field 'dept' of text index contains an array in document");
    expect(await file.indexes(d)).toHaveLength(1);
  });

  it('keeps its entries through inserts, updates (of the prefix too) and deletes', async () => {
    const c = await inventory();
    await mql('insertOne', { collection: c, document: { _id: 7, dept: 'kitchen', description: 'green kettle' } });
    expect(sorted(await ids(c, { dept: 'kitchen', $text: { $search: 'green' } }))).toEqual([3, 7]);
    // Moving a document to another department moves its entries.
    await mql('updateOne', { collection: c, filter: { _id: 3 }, update: { $set: { dept: 'food' } } });
    expect(await ids(c, { dept: 'kitchen', $text: { $search: 'green' } })).toEqual([7]);
    expect(sorted(await ids(c, { dept: 'food', $text: { $search: 'green' } }))).toEqual([3, 5]);
    await mql('updateOne', { collection: c, filter: { _id: 7 }, update: { $set: { description: 'blue kettle' } } });
    expect(await ids(c, { dept: 'kitchen', $text: { $search: 'green' } })).toEqual([]);
    await mql('deleteOne', { collection: c, filter: { _id: 5 } });
    expect(await ids(c, { dept: 'food', $text: { $search: 'green' } })).toEqual([3]);
    // A document without the prefix field is under null.
    await mql('insertOne', { collection: c, document: { _id: 8, description: 'green tea' } });
    expect(await ids(c, { dept: null, $text: { $search: 'green' } })).toEqual([8]);
    const explained = await find(c, { dept: null, $text: { $search: 'green' } }, { explain: true });
    expect(explained.explain.keysExamined).toBe(1);
  });

  it('keeps a compound partial text index across a restart', async () => {
    const first = await startServer();
    const { apiKey } = await signup(first.url);
    const call = (base: string, op: string, json: unknown) => http(base, 'POST', `/api/mql/${op}`, { json, apiKey });
    await call(first.url, 'insertMany', { collection: 'notes', documents: [{ _id: 1, k: 'a', t: 'durable words', live: true }, { _id: 2, k: 'b', t: 'durable words', live: true }] });
    expect((await call(first.url, 'createIndex', { collection: 'notes', keys: { k: 1, t: 'text' }, partialFilterExpression: { live: true } })).status).toBe(200);
    await call(first.url, 'insertOne', { collection: 'notes', document: { _id: 3, k: 'a', t: 'more words', live: true } });
    await call(first.url, 'insertOne', { collection: 'notes', document: { _id: 4, k: 'a', t: 'hidden words', live: false } });
    await first.stop({ keepData: true });
    const second = await startServer({ dataDir: first.dataDir });
    try {
      const res = await call(second.url, 'find', { collection: 'notes', filter: { k: 'a', live: true, $text: { $search: 'word' } }, sort: { _id: 1 }, explain: true });
      expect(res.body.documents.map((d: { _id: number }) => d._id)).toEqual([1, 3]);
      expect(res.body.explain.plan).toEqual({ stage: 'TEXT', indexName: 'k_1_t_text', keyPattern: { k: 1, _fts: 'text', _ftsx: 1 }, isPartial: true, terms: 1 });
      expect(res.body.explain.keysExamined).toBe(2);
    } finally {
      await second.stop();
    }
  });
});

describe('partial text indexes', () => {
  const POSTS = [
    { _id: 1, status: 'live', body: 'coffee beans' },
    { _id: 2, status: 'draft', body: 'coffee cups' },
    { _id: 3, status: 'live', body: 'tea leaves' },
    { _id: 4, body: 'coffee grinder' },
  ];

  it('holds only the documents its filter matches, and serves only queries implying it', async () => {
    const c = await file.seed(POSTS, 'posts');
    await file.createIndex(c, { body: 'text' }, { partialFilterExpression: { status: 'live' } });
    const [, text] = await file.indexes(c);
    expect(text).toMatchObject({ name: 'body_text', key: { _fts: 'text', _ftsx: 1 }, partialFilterExpression: { status: 'live' } });
    const explained = await find(c, { status: 'live', $text: { $search: 'coffee' } }, { explain: true });
    expect(explained.documents.map((d: { _id: number }) => d._id)).toEqual([1]);
    // Only the member holding "coffee" has an entry under it.
    expect(explained.explain.keysExamined).toBe(1);
    await file.refuses('find', { collection: c, filter: { $text: { $search: 'coffee' } } }, 400, 'QUERY_ERROR', UNUSABLE);
    await file.refuses('find', { collection: c, filter: { status: 'draft', $text: { $search: 'coffee' } } }, 400, 'QUERY_ERROR', UNUSABLE);
    // Writes move documents in and out.
    await mql('updateOne', { collection: c, filter: { _id: 2 }, update: { $set: { status: 'live' } } });
    await mql('updateOne', { collection: c, filter: { _id: 1 }, update: { $set: { status: 'gone' } } });
    await mql('insertOne', { collection: c, document: { _id: 5, status: 'live', body: 'coffee maker' } });
    expect(sorted(await ids(c, { status: 'live', $text: { $search: 'coffee' } }))).toEqual([2, 5]);
    expect((await find(c, { status: 'live', $text: { $search: 'coffee' } }, { explain: true })).explain.keysExamined).toBe(2);
  });

  it('refuses a filter MongoDB refuses, and sparse beside it', async () => {
    const c = await file.seed(POSTS, 'posts');
    await file.refuses('createIndex', { collection: c, keys: { body: 'text' }, partialFilterExpression: { status: { $ne: 'x' } } }, 400, 'VALIDATION_FAILED', 'Expression not supported in partial index');
    await file.refuses('createIndex', { collection: c, keys: { body: 'text' }, partialFilterExpression: { status: 'live' }, sparse: true }, 400, 'VALIDATION_FAILED', 'cannot mix "partialFilterExpression" and "sparse" options');
    expect(await file.indexes(c)).toHaveLength(1);
  });
});

describe('$text inside $or', () => {
  // MongoDB's jstests/core/fts_projection.js.
  const DOCS = [
    { _id: 0, a: 'textual content' },
    { _id: 1, a: 'additional content', b: -1 },
    { _id: 2, a: 'irrelevant content' },
  ];
  const SEARCH = { $search: 'textual content -irrelevant' };

  async function collection(): Promise<string> {
    const c = await file.seed(DOCS, 'or');
    await file.createIndex(c, { a: 'text' });
    return c;
  }

  it('reads the text index and the _id index, each document once, with the text scores (fts_projection)', async () => {
    const c = await collection();
    const alone = await find(c, { $text: SEARCH }, { projection: { score: { $meta: 'textScore' } } });
    const scores = new Map(alone.documents.map((d: { _id: number; score: number }) => [d._id, d.score]));
    const res = await find(c, { $or: [{ $text: SEARCH }, { _id: 1 }] }, { projection: { score: { $meta: 'textScore' } }, explain: true });
    expect(res.documents.map((d: { _id: number }) => d._id).sort()).toEqual([0, 1]);
    for (const d of res.documents) expect(d.score).toBe(scores.get(d._id));
    expect(res.explain.plan).toEqual({
      stage: 'OR',
      inputStages: [
        { stage: 'TEXT', indexName: 'a_text', keyPattern: { _fts: 'text', _ftsx: 1 }, terms: 2 },
        { stage: 'IDHACK', keys: 1 },
      ],
    });
  });

  it('is MongoDB\'s error when another clause has no index, and answers once it has one', async () => {
    const c = await collection();
    await file.refuses('find', { collection: c, filter: { $or: [{ $text: SEARCH }, { b: 1 }] } }, 400, 'QUERY_ERROR', TEXT_UNDER_OR);
    // In other shapes MongoDB's planner finds no plan at all.
    await file.refuses('find', { collection: c, filter: { $or: [{ $and: [{ $text: SEARCH }, { b: -1 }] }, { b: 1 }] } }, 400, 'QUERY_ERROR', 'No query solutions');
    await file.createIndex(c, { b: 1 });
    const res = await find(c, { $or: [{ $text: SEARCH }, { b: -1 }, { b: { $gt: 5 } }] }, { explain: true });
    expect(sorted(res.documents.map((d: { _id: number }) => d._id))).toEqual([0, 1]);
    expect(res.explain.plan.stage).toBe('OR');
    expect(res.explain.plan.inputStages.map((s: { stage: string }) => s.stage)).toEqual(['TEXT', 'IXSCAN', 'IXSCAN']);
  });

  it('gives no score to a document only another clause matched: left out of projections, ranked 0 in sorts', async () => {
    const c = await collection();
    await file.createIndex(c, { b: 1 });
    await mql('insertOne', { collection: c, document: { _id: 3, a: 'nothing here', b: 7 } });
    const res = await find(c, { $or: [{ $text: { $search: 'content' } }, { b: 7 }] }, { projection: { _id: 1, score: { $meta: 'textScore' } }, sort: { score: { $meta: 'textScore' } } });
    expect(res.documents).toHaveLength(4);
    expect(res.documents[3]).toEqual({ _id: 3 });
    for (const d of res.documents.slice(0, 3)) expect(d.score).toBeGreaterThan(0);
    // In an aggregation, $meta is missing for it.
    const out = await file.aggregate(c, [{ $match: { $or: [{ $text: { $search: 'content' } }, { b: 7 }] } }, { $project: { s: { $meta: 'textScore' } } }, { $sort: { _id: 1 } }]);
    expect(out[3]).toEqual({ _id: 3 });
    expect(out[0].s).toBeGreaterThan(0);
  });

  it('filters with the rest of the query (fts6), nests in $and and $or, and counts, updates and deletes', async () => {
    const c = await file.seed([{ _id: 1, a: 0 }, { _id: 2, a: 0, b: 'foo' }, { _id: 3, a: 1, b: 'foo' }], 'fts6');
    await file.createIndex(c, { a: 1 });
    await file.createIndex(c, { b: 'text' });
    expect(await ids(c, { a: 0, $or: [{ _id: 2 }, { $text: { $search: 'foo' } }] })).toEqual([2]);
    expect(sorted(await ids(c, { $or: [{ $and: [{ $text: { $search: 'foo' } }, { a: 1 }] }, { a: 0 }] }))).toEqual([1, 2, 3]);
    expect(sorted(await ids(c, { $or: [{ $or: [{ $text: { $search: 'foo' } }, { _id: 1 }] }, { a: 5 }] }))).toEqual([1, 2, 3]);
    expect(sorted(await ids(c, { $and: [{ a: { $lt: 5 } }, { $or: [{ $text: { $search: 'foo' } }, { _id: { $in: [1, 9] } }] }] }))).toEqual([1, 2, 3]);
    expect((await mql('countDocuments', { collection: c, filter: { $or: [{ $text: { $search: 'foo' } }, { a: 0 }] } })).body).toEqual({ count: 3 });
    expect((await mql('updateMany', { collection: c, filter: { $or: [{ $text: { $search: 'foo' } }, { _id: 1 }] }, update: { $set: { seen: true } } })).body).toEqual({ matchedCount: 3, modifiedCount: 3 });
    expect((await mql('deleteMany', { collection: c, filter: { $or: [{ $text: { $search: 'nothing' } }, { _id: 1 }] } })).body).toEqual({ deletedCount: 1 });
    expect(sorted((await file.all(c)).map((d) => d._id))).toEqual([2, 3]);
    // $nor stays refused.
    await file.refuses('find', { collection: c, filter: { $nor: [{ $text: { $search: 'foo' } }, { a: 0 }] } }, 400, 'QUERY_ERROR', 'text expression not allowed in nor');
  });

  it('reads a compound text index in an $or clause that gives its prefix', async () => {
    const c = await inventory();
    expect(sorted(await ids(c, { $or: [{ dept: 'kitchen', $text: { $search: 'green' } }, { _id: 6 }] }))).toEqual([3, 6]);
    await file.refuses('find', { collection: c, filter: { $or: [{ $text: { $search: 'green' } }, { _id: 6 }] } }, 400, 'QUERY_ERROR', UNUSABLE);
  });
});

// ---- Randomized: answers against a brute-force model ---------------------------------------------

const WORDS = ['apple', 'banana', 'cherry', 'grape', 'lemon', 'mango', 'melon', 'olive', 'peach', 'plum'];
const CATEGORIES = ['x', 'y', 'z'];
const ENGLISH = findTextLanguage('english')!;

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

interface Item {
  _id: number;
  category?: string;
  body?: string;
  views: number;
  live: boolean;
}

/** The model's $text: a document holds one of the search's terms (no phrases nor negations here). */
function modelMatches(doc: Item, search: string): boolean {
  if (doc.body === undefined) return false;
  const terms = new Set(tokenize(doc.body, ENGLISH, INDEX_TOKENS));
  return tokenize(search, ENGLISH, INDEX_TOKENS).some((t) => terms.has(t));
}

describe('randomized against a brute-force model', () => {
  it('answers compound, partial and $or queries over random documents, inserts, updates and deletes', async () => {
    const random = rng(20261212);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
    const text = (): string => Array.from({ length: 1 + Math.floor(random() * 4) }, () => pick(WORDS)).join(' ');
    const item = (id: number): Item => {
      const doc: Item = { _id: id, views: Math.floor(random() * 100), live: random() < 0.7 };
      if (random() < 0.9) doc.category = pick(CATEGORIES);
      if (random() < 0.9) doc.body = text();
      return doc;
    };
    const model = new Map<number, Item>();
    for (let i = 0; i < 60; i++) model.set(i, item(i));
    const c = await file.seed([...model.values()], 'random');
    await file.createIndex(c, { category: 1, body: 'text', views: -1 }, { partialFilterExpression: { live: true } });
    await file.createIndex(c, { views: 1 });
    let next = 60;
    for (let round = 0; round < 8; round++) {
      // Some writes: inserts, updates of every kind of field, deletes.
      for (let w = 0; w < 6; w++) {
        const roll = random();
        if (roll < 0.4) {
          const doc = item(next++);
          model.set(doc._id, doc);
          expect((await mql('insertOne', { collection: c, document: doc })).status).toBe(201);
        } else if (roll < 0.8 && model.size > 0) {
          const id = pick([...model.keys()]);
          const fresh = { ...item(id) };
          model.set(id, fresh);
          expect((await mql('replaceOne', { collection: c, filter: { _id: id }, replacement: fresh })).status).toBe(200);
        } else if (model.size > 0) {
          const id = pick([...model.keys()]);
          model.delete(id);
          expect((await mql('deleteOne', { collection: c, filter: { _id: id } })).body).toEqual({ deletedCount: 1 });
        }
      }
      for (let q = 0; q < 6; q++) {
        const category = random() < 0.15 ? null : pick(CATEGORIES);
        const search = text();
        const min = Math.floor(random() * 100);
        const inCategory = (d: Item): boolean => (category === null ? d.category === undefined : d.category === category);
        const textClause = { category, live: true, $text: { $search: search } };
        const cases: Array<[unknown, (d: Item) => boolean]> = [
          [textClause, (d) => inCategory(d) && d.live && modelMatches(d, search)],
          [{ ...textClause, views: { $gte: min } }, (d) => inCategory(d) && d.live && modelMatches(d, search) && d.views >= min],
          [{ $or: [textClause, { views: { $gte: min } }] }, (d) => (inCategory(d) && d.live && modelMatches(d, search)) || d.views >= min],
        ];
        for (const [filter, expected] of cases) {
          const want = [...model.values()].filter(expected).map((d) => d._id).sort((a, b) => a - b);
          expect(sorted(await ids(c, filter, { limit: 1000 })), JSON.stringify(filter)).toEqual(want);
        }
      }
    }
  });
});
