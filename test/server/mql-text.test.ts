// Native text indexes and $text over HTTP on a real server: the MongoDB manual's examples ($text,
// "Assign Weights to Text Search Results"), the tokenizer's rules, index maintenance, textScore
// in projections, sorts and aggregations, MongoDB's messages, a restart, and a randomized check
// against a brute-force model written here (independently of the engine's tokenizer).
import { describe, expect, it } from 'vitest';
import { serverForFile } from '../helpers/server.js';

const file = serverForFile();
const mql = file.mql.bind(file);

// The manual's $text page: the articles collection.
const ARTICLES = [
  { _id: 1, subject: 'coffee', author: 'xyz', views: 50 },
  { _id: 2, subject: 'Coffee Shopping', author: 'efg', views: 5 },
  { _id: 3, subject: 'Baking a cake', author: 'abc', views: 90 },
  { _id: 4, subject: 'baking', author: 'xyz', views: 100 },
  { _id: 5, subject: 'Café Con Leche', author: 'abc', views: 200 },
  { _id: 6, subject: 'Сырники', author: 'jkl', views: 80 },
  { _id: 7, subject: 'coffee and cream', author: 'efg', views: 10 },
  { _id: 8, subject: 'Cafe con Leche', author: 'xyz', views: 10 },
];

async function articles(): Promise<string> {
  const c = await file.seed(ARTICLES, 'articles');
  const res = await mql('createIndex', { collection: c, keys: { subject: 'text' } });
  expect(res.status, res.text).toBe(200);
  expect(res.body).toEqual({ name: 'subject_text', created: true });
  return c;
}

async function ids(collection: string, filter: unknown, extra: Record<string, unknown> = {}): Promise<unknown[]> {
  const res = await mql('find', { collection, filter, ...extra });
  expect(res.status, res.text).toBe(200);
  return res.body.documents.map((d: { _id: unknown }) => d._id);
}

const sorted = (xs: unknown[]): unknown[] => [...xs].sort((a, b) => Number(a) - Number(b));

describe('$text: the manual\'s examples (articles)', () => {
  it('searches for a single word ("coffee")', async () => {
    const c = await articles();
    expect(sorted(await ids(c, { $text: { $search: 'coffee' } }))).toEqual([1, 2, 7]);
  });

  it('matches any of the search terms ("bake coffee cake")', async () => {
    const c = await articles();
    expect(sorted(await ids(c, { $text: { $search: 'bake coffee cake' } }))).toEqual([1, 2, 3, 4, 7]);
  });

  it('searches for a phrase ("\\"coffee shop\\"")', async () => {
    const c = await articles();
    expect(await ids(c, { $text: { $search: '"coffee shop"' } })).toEqual([2]);
  });

  it('excludes documents with a negated term ("coffee -shop")', async () => {
    const c = await articles();
    expect(sorted(await ids(c, { $text: { $search: 'coffee -shop' } }))).toEqual([1, 7]);
  });

  it('searches in another language ($language "es": "leche")', async () => {
    const c = await articles();
    expect(sorted(await ids(c, { $text: { $search: 'leche', $language: 'es' } }))).toEqual([5, 8]);
  });

  it('is case-insensitive and diacritic-insensitive by default ("сы́рники CAFÉS")', async () => {
    const c = await articles();
    expect(sorted(await ids(c, { $text: { $search: 'сы́рники CAFÉS' } }))).toEqual([5, 6, 8]);
  });

  it('$caseSensitive: "Coffee" matches only the capitalised word', async () => {
    const c = await articles();
    expect(await ids(c, { $text: { $search: 'Coffee', $caseSensitive: true } })).toEqual([2]);
  });

  it('$caseSensitive with a phrase ("\\"Café Con Leche\\"")', async () => {
    const c = await articles();
    expect(await ids(c, { $text: { $search: '"Café Con Leche"', $caseSensitive: true } })).toEqual([5]);
  });

  it('$caseSensitive with a negated term ("Coffee -shop")', async () => {
    const c = await articles();
    expect(await ids(c, { $text: { $search: 'Coffee -shop', $caseSensitive: true } })).toEqual([2]);
  });

  it('$diacriticSensitive: "CAFÉ" matches only the accented word', async () => {
    const c = await articles();
    expect(await ids(c, { $text: { $search: 'CAFÉ', $diacriticSensitive: true } })).toEqual([5]);
  });

  it('$diacriticSensitive with a negated term ("leches -cafés")', async () => {
    const c = await articles();
    expect(await ids(c, { $text: { $search: 'leches -cafés', $diacriticSensitive: true } })).toEqual([8]);
  });
});

describe('text indexes', () => {
  it('lists a text index as MongoDB shows it', async () => {
    const c = await file.seed([{ _id: 1, title: 'a', body: 'b' }], 'ti');
    const created = await mql('createIndex', { collection: c, keys: { title: 'text', body: 'text' }, weights: { title: 10 }, default_language: 'spanish', language_override: 'idioma' });
    expect(created.body).toEqual({ name: 'title_text_body_text', created: true });
    const listed = await mql('listIndexes', { collection: c });
    expect(listed.body.indexes[1]).toEqual({
      name: 'title_text_body_text',
      key: { _fts: 'text', _ftsx: 1 },
      weights: { body: 1, title: 10 },
      default_language: 'spanish',
      language_override: 'idioma',
      textIndexVersion: 3,
    });
    // The same index again is a no-op; a second text index is refused with MongoDB's message.
    expect((await mql('createIndex', { collection: c, keys: { title: 'text', body: 'text' }, weights: { title: 10 }, default_language: 'spanish', language_override: 'idioma' })).body).toEqual({ name: 'title_text_body_text', created: false });
    const second = await mql('createIndex', { collection: c, keys: { other: 'text' } });
    expect(second.status).toBe(409);
    expect(second.body.error.message).toBe('only one text index per collection allowed, found existing text index "title_text_body_text"');
  });

  it('is built from the documents already there, and kept by inserts, updates and deletes', async () => {
    const c = await file.seed([{ _id: 1, body: 'red apples' }, { _id: 2, body: 'green pears' }], 'tm');
    await mql('createIndex', { collection: c, keys: { body: 'text' } });
    expect(await ids(c, { $text: { $search: 'apple' } })).toEqual([1]);
    await mql('insertOne', { collection: c, document: { _id: 3, body: 'an apple a day' } });
    expect(sorted(await ids(c, { $text: { $search: 'apple' } }))).toEqual([1, 3]);
    // An update that changes the text moves the document from one term to another.
    await mql('updateOne', { collection: c, filter: { _id: 1 }, update: { $set: { body: 'red cherries' } } });
    expect(await ids(c, { $text: { $search: 'apple' } })).toEqual([3]);
    expect(await ids(c, { $text: { $search: 'cherry' } })).toEqual([1]);
    await mql('deleteOne', { collection: c, filter: { _id: 3 } });
    expect(await ids(c, { $text: { $search: 'apple' } })).toEqual([]);
    await mql('replaceOne', { collection: c, filter: { _id: 2 }, replacement: { body: 'apple pie' } });
    expect(await ids(c, { $text: { $search: 'apple pears' } })).toEqual([2]);
    // Dropped, the index answers nothing: $text needs it.
    expect((await mql('dropIndex', { collection: c, index: 'body_text' })).body).toEqual({ dropped: 'body_text' });
    const res = await mql('find', { collection: c, filter: { $text: { $search: 'apple' } } });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toBe('text index required for $text query');
  });

  it('drops by key pattern, as created or as listed', async () => {
    for (const pattern of [{ body: 'text' }, { _fts: 'text', _ftsx: 1 }]) {
      const c = await file.seed([{ _id: 1, body: 'x' }], 'td');
      await mql('createIndex', { collection: c, keys: { body: 'text' } });
      expect((await mql('dropIndex', { collection: c, index: pattern })).body).toEqual({ dropped: 'body_text' });
    }
  });

  it('keeps its entries across a restart', async () => {
    const { startServer, signup, http } = await import('../helpers/server.js');
    const first = await startServer();
    const { apiKey } = await signup(first.url);
    const call = (base: string, op: string, json: unknown) => http(base, 'POST', `/api/mql/${op}`, { json, apiKey });
    await call(first.url, 'insertMany', { collection: 'notes', documents: [{ _id: 1, t: 'durable words' }, { _id: 2, t: 'other things' }] });
    await call(first.url, 'createIndex', { collection: 'notes', keys: { t: 'text' } });
    await call(first.url, 'insertOne', { collection: 'notes', document: { _id: 3, t: 'more words' } });
    await first.stop({ keepData: true });
    const second = await startServer({ dataDir: first.dataDir });
    try {
      const res = await call(second.url, 'find', { collection: 'notes', filter: { $text: { $search: 'word' } }, sort: { _id: 1 } });
      expect(res.body.documents.map((d: { _id: number }) => d._id)).toEqual([1, 3]);
      const explained = await call(second.url, 'find', { collection: 'notes', filter: { $text: { $search: 'word' } }, explain: true });
      expect(explained.body.explain.plan).toEqual({ stage: 'TEXT', indexName: 't_text', keyPattern: { _fts: 'text', _ftsx: 1 }, terms: 1 });
    } finally {
      await second.stop();
    }
  });

  it('indexes every string field with a wildcard index, arrays and embedded documents included', async () => {
    const c = await file.seed([{ _id: 1, a: 'alpha', n: { deep: ['beta gamma'] } }, { _id: 2, b: 'delta', n: 5 }], 'tw');
    expect((await mql('createIndex', { collection: c, keys: { '$**': 'text' } })).body).toEqual({ name: '$**_text', created: true });
    expect(await ids(c, { $text: { $search: 'gamma' } })).toEqual([1]);
    expect(await ids(c, { $text: { $search: 'delta' } })).toEqual([2]);
    expect((await mql('listIndexes', { collection: c })).body.indexes[1].weights).toEqual({ '$**': 1 });
  });

  it('indexes each document in its own language (the language field, or language_override)', async () => {
    const c = await file.seed([
      { _id: 1, quote: 'A man is not old as long as he is seeking something', language: 'english' },
      { _id: 2, quote: 'Un hombre no es viejo mientras está buscando algo', language: 'spanish' },
      { _id: 3, quote: 'Ein Mann ist nicht alt, solange er etwas sucht', idioma: 'german' },
    ], 'tl');
    await mql('createIndex', { collection: c, keys: { quote: 'text' }, language_override: 'idioma' });
    // "language" is now an ordinary field: document 2 is English to this index, so "es" stays a word.
    expect(await ids(c, { $text: { $search: 'es' } })).toEqual([2]);
    expect(await ids(c, { $text: { $search: 'nicht', $language: 'german' } })).toEqual([]);
    expect(await ids(c, { $text: { $search: 'Mann', $language: 'german' } })).toEqual([3]);
  });

  it('refuses a document whose language it does not know, changing nothing', async () => {
    const c = await file.seed([{ _id: 1, t: 'x' }], 'tr');
    await mql('createIndex', { collection: c, keys: { t: 'text' } });
    const bad = await mql('insertOne', { collection: c, document: { _id: 2, t: 'y', language: 'klingon' } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toBe('language override unsupported: klingon');
    const typed = await mql('insertOne', { collection: c, document: { _id: 3, t: 'y', language: 5 } });
    expect(typed.body.error.message).toBe('found language override field in document with non-string type');
    expect(await file.all(c)).toEqual([{ _id: 1, t: 'x' }]);
  });

  const badSpecs: ReadonlyArray<readonly [string, Record<string, unknown>, string]> = [
    ['a weight of 0', { keys: { t: 'text' }, weights: { t: 0 } }, 'text index weight must be in the exclusive interval (0,100000) but found: 0'],
    ['a weight that is not a number', { keys: { t: 'text' }, weights: { t: 'x' } }, 'weight for text index needs numeric type'],
    ['weights that are not an object', { keys: { t: 'text' }, weights: 5 }, "text index option 'weights' must be an object"],
    ['an unknown default language', { keys: { t: 'text' }, default_language: 'klingon' }, 'default_language is not valid'],
    ['a language_override with a dot', { keys: { t: 'text' }, language_override: 'a.b' }, 'language_override is not valid'],
    ['a reserved field', { keys: { _fts: 'text' } }, 'text index with reserved fields _fts/_ftsx not allowed'],
    ['text fields that are not adjacent', { keys: { t: 'text', a: 1, u: 'text' } }, "'text' fields in index must all be adjacent"],
    ['a compound text index with a field neither 1 nor -1', { keys: { a: 2, t: 'text' } }, 'expected value 1 or -1 for non-text key in compound index'],
    ['a unique text index', { keys: { t: 'text' }, unique: true }, 'unsupported: a unique text index'],
    ['text index version 2', { keys: { t: 'text' }, textIndexVersion: 2 }, 'unsupported: textIndexVersion 2'],
  ];
  for (const [name, spec, message] of badSpecs) {
    it(`refuses ${name}`, async () => {
      const c = await file.seed([{ _id: 1, t: 'x' }], 'tb');
      const res = await mql('createIndex', { collection: c, ...spec });
      expect(res.status, res.text).toBe(400);
      expect(res.body.error.code).toBe('VALIDATION_FAILED');
      expect(res.body.error.message.startsWith(message)).toBe(true);
      expect((await mql('listIndexes', { collection: c })).body.indexes).toHaveLength(1);
    });
  }
});

describe('$text in counts and writes', () => {
  it('counts, updates and deletes the documents a search matches', async () => {
    const c = await articles();
    expect((await mql('countDocuments', { collection: c, filter: { $text: { $search: 'coffee' } } })).body).toEqual({ count: 3 });
    expect((await mql('countDocuments', { collection: c, filter: { $text: { $search: 'coffee' }, views: { $gt: 8 } } })).body).toEqual({ count: 2 });
    expect((await mql('updateMany', { collection: c, filter: { $text: { $search: 'coffee' } }, update: { $set: { hot: true } } })).body).toEqual({ matchedCount: 3, modifiedCount: 3 });
    expect(sorted(await ids(c, { hot: true }))).toEqual([1, 2, 7]);
    expect((await mql('deleteMany', { collection: c, filter: { $and: [{ $text: { $search: 'baking' } }, { views: { $lt: 95 } }] } })).body).toEqual({ deletedCount: 1 });
    expect(await ids(c, { $text: { $search: 'baking' } })).toEqual([4]);
  });
});

describe('$text errors', () => {
  const cases: ReadonlyArray<readonly [string, unknown, string]> = [
    ['an operand that is not an object', { $text: 'coffee' }, '$text expects an object'],
    ['no $search', { $text: {} }, 'Missing expected field "$search"'],
    ['a $search that is not a string', { $text: { $search: 5 } }, '"$search" had the wrong type. Expected string, found int'],
    ['a $caseSensitive that is not a boolean', { $text: { $search: 'a', $caseSensitive: 1 } }, '"$caseSensitive" had the wrong type. Expected bool, found int'],
    ['an unknown field', { $text: { $search: 'a', $foo: 1 } }, 'extra fields in $text'],
    ['an unknown language', { $text: { $search: 'a', $language: 'klingon' } }, 'unsupported language: "klingon" for text index version 3'],
    ['two $text', { $and: [{ $text: { $search: 'a' } }, { $text: { $search: 'b' } }] }, 'Too many text expressions'],
    ['$text under $nor', { $nor: [{ $text: { $search: 'a' } }] }, 'text expression not allowed in nor'],
    ['$text under $or beside a clause no index answers', { $or: [{ $text: { $search: 'a' } }, { views: 1 }] }, 'Failed to produce a solution for TEXT under OR - other non-TEXT clauses under OR have to be indexed as well.'],
    ['$text inside $elemMatch', { a: { $elemMatch: { $text: { $search: 'a' } } } }, '$text is not allowed in this context'],
  ];
  for (const [name, filter, message] of cases) {
    it(`refuses ${name}`, async () => {
      const c = await articles();
      const res = await mql('find', { collection: c, filter });
      expect(res.status, res.text).toBe(400);
      expect(res.body.error.code).toBe('QUERY_ERROR');
      expect(res.body.error.message.startsWith(message)).toBe(true);
    });
  }

  it('refuses $text where MongoDB does not take it: a validator, a later $match', async () => {
    const v = await mql('createCollection', { collection: 'validated-text', validator: { $text: { $search: 'a' } } });
    expect(v.status).toBe(400);
    expect(v.body.error.message).toBe('$text is not allowed in this context');
    const c = await articles();
    const later = await mql('aggregate', { collection: c, pipeline: [{ $match: { views: 1 } }, { $match: { $text: { $search: 'a' } } }] });
    expect(later.status).toBe(400);
    expect(later.body.error.message).toBe('$match with $text is only allowed as the first pipeline stage');
  });
});

describe('textScore', () => {
  it('projects the score of the manual\'s "cake" search (2/3 here, 0.75 in MongoDB: "a" is no stop word in Orama\'s English list)', async () => {
    const c = await articles();
    const res = await mql('find', { collection: c, filter: { $text: { $search: 'cake' } }, projection: { score: { $meta: 'textScore' } } });
    // "Baking a cake" is three tokens here (bake, a, cake): 0.5 x 1/3 + 0.5. MongoDB's list drops "a": 0.5 x 1/2 + 0.5.
    expect(res.body.documents).toEqual([{ _id: 3, subject: 'Baking a cake', author: 'abc', views: 90, score: 0.5 / 3 + 0.5 }]);
  });

  // Hand-computed from MongoDB's formula (fts_spec.cpp): per string, weight x freq x coeff x
  // adjustment, freq = 1 + 1/2 + 1/4 ... over a term's repeats, coeff = 0.5 x count / tokens + 0.5,
  // adjustment 1.1 when the string is the term itself.
  const scoreCases: ReadonlyArray<readonly [string, Record<string, unknown>, Record<string, unknown>, string, number]> = [
    ['one word, not its own stem ("coffee" -> "coffe")', {}, { t: 'coffee' }, 'coffee', 1],
    ['one word that is its own stem: the exact-match adjustment', {}, { t: 'cake' }, 'cake', 1.1],
    ['a repeated word: frequency 1 + 1/2 + 1/4', {}, { t: 'cake cake cake' }, 'cake', 1.75],
    ['two words, one matching, a stop word left out', {}, { t: 'coffee and cream' }, 'coffee', 0.75],
    ['two search terms add up', {}, { t: 'coffee and cream' }, 'coffee cream', 1.5],
    ['weights (the manual\'s "Assign Weights"): 10 x 1.1 + 1 x 0.75', { weights: { title: 10 } }, { title: 'cake', t: 'cake and tea' }, 'cake', 11.75],
  ];
  for (const [name, options, doc, search, score] of scoreCases) {
    it(`scores ${name}`, async () => {
      const c = await file.seed([{ _id: 1, ...doc }], 'ts');
      const keys = 'title' in doc ? { t: 'text', title: 'text' } : { t: 'text' };
      expect((await mql('createIndex', { collection: c, keys, ...options })).status).toBe(200);
      const res = await mql('find', { collection: c, filter: { $text: { $search: search } }, projection: { _id: 0, s: { $meta: 'textScore' } } });
      expect(res.body.documents).toHaveLength(1);
      expect(res.body.documents[0].s).toBeCloseTo(score, 12);
    });
  }

  it('sorts by score in find, with or without the score projected', async () => {
    const c = await file.seed([
      { _id: 1, t: 'tea' },
      { _id: 2, t: 'tea tea tea' },
      { _id: 3, t: 'green tea with mint' },
      { _id: 4, t: 'coffee' },
    ], 'tss');
    await mql('createIndex', { collection: c, keys: { t: 'text' } });
    expect(await ids(c, { $text: { $search: 'tea' } }, { sort: { score: { $meta: 'textScore' } } })).toEqual([2, 1, 3]);
    const res = await mql('find', { collection: c, filter: { $text: { $search: 'tea' } }, projection: { t: 0, score: { $meta: 'textScore' } }, sort: { score: { $meta: 'textScore' } }, limit: 2 });
    expect(res.body.documents).toEqual([{ _id: 2, score: 1.75 }, { _id: 1, score: 1.1 }]);
  });

  it('is available in an aggregation whose first $match searches: $project, $addFields, $sort, after $unwind', async () => {
    const c = await articles();
    const out = await file.aggregate(c, [
      { $match: { $text: { $search: 'coffee cake' } } },
      { $addFields: { score: { $meta: 'textScore' } } },
      { $sort: { score: { $meta: 'textScore' }, _id: 1 } },
      { $project: { _id: 1, score: 1, again: { $meta: 'textScore' } } },
    ]);
    expect(out).toEqual([
      { _id: 1, score: 1, again: 1 },
      { _id: 2, score: 0.75, again: 0.75 },
      { _id: 7, score: 0.75, again: 0.75 },
      { _id: 3, score: 0.5 / 3 + 0.5, again: 0.5 / 3 + 0.5 },
    ]);
    const unwound = await file.aggregate(c, [{ $match: { $text: { $search: 'coffee' }, _id: 1 } }, { $addFields: { tags: ['x', 'y'] } }, { $unwind: '$tags' }, { $project: { tags: 1, s: { $meta: 'textScore' } } }]);
    expect(unwound).toEqual([{ _id: 1, tags: 'x', s: 1 }, { _id: 1, tags: 'y', s: 1 }]);
  });

  it('is MongoDB\'s error without a $text, or after a $group', async () => {
    const c = await articles();
    for (const body of [
      { collection: c, filter: { views: 50 }, projection: { s: { $meta: 'textScore' } } },
      { collection: c, filter: { views: 50 }, sort: { s: { $meta: 'textScore' } } },
    ]) {
      const res = await mql('find', body);
      expect(res.status, res.text).toBe(400);
      expect(res.body.error.message).toBe('query requires text score metadata, but it is not available');
    }
    for (const pipeline of [
      [{ $match: { views: 50 } }, { $project: { s: { $meta: 'textScore' } } }],
      [{ $match: { $text: { $search: 'coffee' } } }, { $group: { _id: '$author' } }, { $sort: { s: { $meta: 'textScore' } } }],
    ]) {
      const res = await mql('aggregate', { collection: c, pipeline });
      expect(res.status, res.text).toBe(400);
      expect(res.body.error.message).toBe('query requires text score metadata, but it is not available');
    }
  });

  it('refuses the other $meta names by name, and unknown ones with MongoDB\'s message', async () => {
    const c = await articles();
    const search = { $text: { $search: 'coffee' } };
    const projected = await mql('find', { collection: c, filter: search, projection: { s: { $meta: 'searchScore' } } });
    expect(projected.status).toBe(400);
    expect(projected.body.error.message).toMatch(/^unsupported: \{\$meta: "searchScore"\}/);
    const sortedBy = await mql('find', { collection: c, filter: search, sort: { s: { $meta: 'indexKey' } } });
    expect(sortedBy.body.error.message).toMatch(/^unsupported: \{\$meta: "indexKey"\}/);
    const unknown = await mql('aggregate', { collection: c, pipeline: [{ $match: search }, { $project: { s: { $meta: 'nonsense' } } }] });
    expect(unknown.body.error.message).toBe('Unsupported argument to $meta: nonsense');
  });
});

describe('randomized: single-term searches equal a brute-force model', () => {
  // The model, written here: words are runs of ASCII letters (the vocabulary has no other word
  // characters), lower-cased, Orama's English stop words dropped, Orama's English stemmer applied.
  const VOCABULARY = ['Coffee', 'coffee', 'shops', 'shop', 'running', 'runs', 'the', 'and', 'Cake', 'cakes', 'baking', 'tea', 'a', 'quick', 'brown', 'foxes', 'fox', 'Jumped', 'jumps', 'lazy', 'dogs'];
  const SEPARATORS = [' ', ', ', '. ', ' - ', '! ', '  '];

  function random(seed: number): () => number {
    let s = seed >>> 0;
    return () => {
      s = (Math.imul(s ^ (s >>> 15), 0x2c1b3c6d) + 0x9e3779b9) >>> 0;
      s ^= s >>> 12;
      return (s >>> 0) / 2 ** 32;
    };
  }

  it('over random documents, inserts, updates and deletes', async () => {
    const { stemmer } = await import('@orama/stemmers/english');
    const { stopwords } = await import('@orama/stopwords/english');
    const stop = new Set(stopwords);
    const modelTerms = (text: string): string[] => (text.match(/[A-Za-z]+/g) ?? []).map((w) => w.toLowerCase()).filter((w) => !stop.has(w)).map((w) => stemmer(w));
    const rand = random(20240611);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
    const sentence = (): string => Array.from({ length: 1 + Math.floor(rand() * 4) }, () => pick(VOCABULARY)).reduce((s, w) => (s === '' ? w : s + pick(SEPARATORS) + w), '');
    const randomDoc = (id: number): Record<string, unknown> => {
      const doc: Record<string, unknown> = { _id: id };
      if (rand() < 0.8) doc['title'] = sentence();
      if (rand() < 0.6) doc['body'] = rand() < 0.3 ? [sentence(), sentence()] : sentence();
      if (rand() < 0.2) doc['other'] = sentence(); // not indexed
      return doc;
    };
    const model = new Map<number, Record<string, unknown>>();
    const docs = Array.from({ length: 40 }, (_, i) => randomDoc(i));
    for (const d of docs) model.set(d['_id'] as number, d);
    const c = await file.seed(docs, 'trand');
    await mql('createIndex', { collection: c, keys: { title: 'text', body: 'text' } });
    for (let i = 0; i < 30; i++) {
      const id = Math.floor(rand() * 50);
      const r = rand();
      if (r < 0.4) {
        const d = randomDoc(id);
        await mql('replaceOne', { collection: c, filter: { _id: id }, replacement: d, upsert: true });
        model.set(id, d);
      } else if (r < 0.7) {
        const title = sentence();
        await mql('updateOne', { collection: c, filter: { _id: id }, update: { $set: { title } } });
        if (model.has(id)) model.set(id, { ...model.get(id), title });
      } else {
        await mql('deleteOne', { collection: c, filter: { _id: id } });
        model.delete(id);
      }
    }
    let nonEmpty = 0;
    const strings = (d: Record<string, unknown>): string[] => [d['title'], d['body']].flat().filter((v): v is string => typeof v === 'string');
    for (const word of VOCABULARY) {
      const term = modelTerms(word)[0];
      const expected = term === undefined ? [] : [...model.values()].filter((d) => strings(d).some((s) => modelTerms(s).includes(term))).map((d) => d['_id'] as number).sort((a, b) => a - b);
      const res = await mql('find', { collection: c, filter: { $text: { $search: word } }, sort: { _id: 1 }, limit: 1000 });
      expect(res.body.documents.map((d: { _id: number }) => d._id), word).toEqual(expected);
      if (expected.length > 0) nonEmpty++;
    }
    // The searches found something: the model is not trivially empty.
    expect(nonEmpty).toBeGreaterThan(VOCABULARY.length / 2);
  });
});
