// Schema validation over HTTP on a real server: createCollection and collMod with a validator
// (the manual's $jsonSchema and query-operator examples), every write path held to it (inserts,
// updates, replacements, upserts, findOneAnd*, bulkWrite, $merge, $out), validationLevel
// moderate and off, validationAction warn, refusals that change nothing, and a restart.
import { afterAll, describe, expect, it } from 'vitest';
import { http, serverForFile, signup } from '../helpers/server.js';
import { spawnServer } from '../helpers/server-process.js';
import { tempDir } from '../helpers/temp-dir.js';
import { STUDENTS_SCHEMA } from '../helpers/validation-examples.js';

const file = serverForFile();
const mql = file.mql.bind(file);
const all = (collection: string): Promise<any[]> => file.all(collection);
let made = 0;
const fresh = (prefix: string): string => `${prefix}${++made}`;


// The manual's "Specify Validation With Query Operators" example (contacts).
const CONTACTS_RULES = { $or: [{ phone: { $type: 'string' } }, { email: { $regex: '@mongodb\\.com$' } }, { status: { $in: ['Unknown', 'Incomplete'] } }] };

async function create(collection: string, options: Record<string, unknown> = {}): Promise<void> {
  const res = await mql('createCollection', { collection, ...options });
  expect(res.status, res.text).toBe(200);
  expect(res.body).toEqual({ created: true });
}

async function refusedWrite(op: string, body: Record<string, unknown>, id?: unknown): Promise<void> {
  const res = await mql(op, body);
  expect(res.status, `${op}: ${res.text}`).toBe(400);
  expect(res.body.error.code).toBe('VALIDATION_FAILED');
  expect(res.body.error.message).toContain('Document failed validation');
  if (id !== undefined) expect(res.body.error.details.failingDocumentId).toEqual(id);
}

describe('createCollection with a validator: the manual', () => {
  it('$jsonSchema: the valid student is stored, the invalid one is refused and nothing is written', async () => {
    const c = fresh('students');
    await create(c, { validator: STUDENTS_SCHEMA });
    await refusedWrite('insertOne', { collection: c, document: { _id: 1, name: 'Alice', year: 2019, major: 'History', gpa: 3, address: { city: 'NYC', street: '33rd Street' } } }, 1);
    const ok = await mql('insertOne', { collection: c, document: { _id: 2, name: 'Alice', year: 2019, major: 'History', gpa: 3.1, address: { city: 'NYC', street: '33rd Street' } } });
    expect(ok.status, ok.text).toBe(201);
    expect((await all(c)).map((d) => d._id)).toEqual([2]);
    // insertMany is all or nothing.
    await refusedWrite('insertMany', { collection: c, documents: [{ _id: 3, name: 'Bob', year: 2020, major: 'Art', address: {} }, { _id: 4, name: 'Eve', year: 2000, major: 'Art', address: {} }] }, 4);
    expect((await all(c)).map((d) => d._id)).toEqual([2]);
  });

  it('query operators: documents matching the rules are stored, the others refused', async () => {
    const c = fresh('contacts');
    await create(c, { validator: CONTACTS_RULES });
    await refusedWrite('insertOne', { collection: c, document: { _id: 'x', name: 'Amanda', status: 'Updated' } }, 'x');
    expect((await mql('insertOne', { collection: c, document: { name: 'Ada', phone: '555' } })).status).toBe(201);
    expect((await mql('insertOne', { collection: c, document: { name: 'Bo', email: 'bo@mongodb.com' } })).status).toBe(201);
    expect((await mql('insertOne', { collection: c, document: { name: 'Cy', status: 'Unknown' } })).status).toBe(201);
    expect(await all(c)).toHaveLength(3);
  });

  it('listCollections shows the options; a collection that exists is a conflict; no validator makes an empty collection', async () => {
    const c = fresh('listed');
    await create(c, { validator: CONTACTS_RULES, validationLevel: 'moderate', validationAction: 'warn' });
    const listed = (await mql('listCollections', {})).body.collections.find((x: { name: string }) => x.name === c);
    expect(listed).toMatchObject({ name: c, count: 0, options: { validator: CONTACTS_RULES, validationLevel: 'moderate', validationAction: 'warn' } });
    const again = await mql('createCollection', { collection: c });
    expect(again.status, again.text).toBe(409);
    expect(again.body.error.message).toBe(`Collection already exists. NS: ${c}`);
    const plain = fresh('plain');
    await create(plain);
    const shown = (await mql('listCollections', {})).body.collections.find((x: { name: string }) => x.name === plain);
    expect(shown).toMatchObject({ name: plain, count: 0 });
    expect(shown.options).toBeUndefined();
  });
});

describe('every write path is held to the rules', () => {
  const rules = { $jsonSchema: { required: ['qty'], properties: { qty: { bsonType: 'int', minimum: 0 } } } };
  async function seeded(): Promise<string> {
    const c = fresh('held');
    await create(c, { validator: rules });
    expect((await mql('insertMany', { collection: c, documents: [{ _id: 1, qty: 5 }, { _id: 2, qty: 7 }] })).status).toBe(201);
    return c;
  }
  const unchanged = [{ _id: 1, qty: 5 }, { _id: 2, qty: 7 }];

  it('updates, replacements, upserts and findOneAnd* that would break them change nothing', async () => {
    const c = await seeded();
    await refusedWrite('updateOne', { collection: c, filter: { _id: 1 }, update: { $set: { qty: -1 } } }, 1);
    await refusedWrite('updateOne', { collection: c, filter: { _id: 1 }, update: [{ $unset: 'qty' }] }, 1);
    await refusedWrite('updateMany', { collection: c, filter: {}, update: { $inc: { qty: -6 } } });
    await refusedWrite('replaceOne', { collection: c, filter: { _id: 2 }, replacement: { qty: 'many' } }, 2);
    await refusedWrite('updateOne', { collection: c, filter: { _id: 9 }, update: { $set: { name: 'x' } }, upsert: true }, 9);
    await refusedWrite('findOneAndUpdate', { collection: c, filter: { _id: 2 }, update: { $set: { qty: 1.5 } } }, 2);
    await refusedWrite('findOneAndReplace', { collection: c, filter: { _id: 1 }, replacement: {} }, 1);
    expect(await all(c)).toEqual(unchanged);
    // Changes that keep the rules go through; deletes are never checked.
    expect((await mql('updateOne', { collection: c, filter: { _id: 1 }, update: { $inc: { qty: 1 } } })).body).toEqual({ matchedCount: 1, modifiedCount: 1 });
    expect((await mql('deleteOne', { collection: c, filter: { _id: 2 } })).body).toEqual({ deletedCount: 1 });
    expect(await all(c)).toEqual([{ _id: 1, qty: 6 }]);
  });

  it('bulkWrite: a write error of the operation that breaks them', async () => {
    const c = await seeded();
    const res = await mql('bulkWrite', { collection: c, ordered: false, operations: [{ insertOne: { document: { _id: 3, qty: 1 } } }, { insertOne: { document: { _id: 4 } } }, { updateOne: { filter: { _id: 1 }, update: { $set: { qty: 'no' } } } }] });
    expect(res.status, res.text).toBe(400);
    expect(res.body.error.details.writeErrors.map((e: { index: number; message: string }) => [e.index, e.message])).toEqual([
      [1, 'Document failed validation'],
      [2, 'Document failed validation'],
    ]);
    expect(await all(c)).toEqual([...unchanged, { _id: 3, qty: 1 }]);
  });

  it('$merge into a validated collection refuses a failing batch; $out keeps the rules and leaves the target as it was', async () => {
    const c = await seeded();
    const src = await file.seed([{ _id: 1, qty: 50 }, { _id: 5, qty: -3 }], 'src');
    const merged = await mql('aggregate', { collection: src, pipeline: [{ $merge: { into: c } }] });
    expect(merged.status, merged.text).toBe(400);
    expect(merged.body.error.message).toContain('Document failed validation');
    expect(await all(c)).toEqual(unchanged);
    const out = await mql('aggregate', { collection: src, pipeline: [{ $out: c }] });
    expect(out.status, out.text).toBe(400);
    expect(out.body.error.message).toContain('Document failed validation');
    expect(await all(c)).toEqual(unchanged);
    // A valid output replaces the documents, and the rules stay with the collection.
    expect((await mql('aggregate', { collection: src, pipeline: [{ $match: { qty: { $gte: 0 } } }, { $out: c }] })).status).toBe(200);
    expect(await all(c)).toEqual([{ _id: 1, qty: 50 }]);
    await refusedWrite('insertOne', { collection: c, document: { _id: 6 } }, 6);
  });

  it('renameCollection takes the rules with it', async () => {
    const c = await seeded();
    expect((await mql('renameCollection', { collection: c, to: `${c}_r` })).status).toBe(200);
    await refusedWrite('insertOne', { collection: `${c}_r`, document: { _id: 8, qty: -1 } }, 8);
  });
});

describe('collMod, validationLevel and validationAction', () => {
  it('rules added to a collection leave its documents; moderate lets documents that broke them go on changing', async () => {
    const c = await file.seed([{ _id: 1, name: 'old, no phone' }, { _id: 2, name: 'valid', phone: '1' }], 'mod');
    const res = await mql('collMod', { collection: c, validator: CONTACTS_RULES, validationLevel: 'moderate' });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ modified: true });
    expect(await all(c)).toHaveLength(2);
    // The manual's point: under moderate, an invalid document may be updated and stay invalid...
    expect((await mql('updateOne', { collection: c, filter: { _id: 1 }, update: { $set: { name: 'still no phone' } } })).body.modifiedCount).toBe(1);
    // ...but a valid one may not become invalid, and inserts are always checked.
    await refusedWrite('updateOne', { collection: c, filter: { _id: 2 }, update: { $unset: { phone: '' } } }, 2);
    await refusedWrite('insertOne', { collection: c, document: { _id: 3 } }, 3);
    // strict: the invalid document may no longer change without becoming valid.
    expect((await mql('collMod', { collection: c, validationLevel: 'strict' })).status).toBe(200);
    await refusedWrite('updateOne', { collection: c, filter: { _id: 1 }, update: { $set: { name: 'x' } } }, 1);
    expect((await mql('updateOne', { collection: c, filter: { _id: 1 }, update: { $set: { phone: '2' } } })).body.modifiedCount).toBe(1);
    // off: nothing is checked; the rules are kept for later.
    expect((await mql('collMod', { collection: c, validationLevel: 'off' })).status).toBe(200);
    expect((await mql('insertOne', { collection: c, document: { _id: 4 } })).status).toBe(201);
    const listed = (await mql('listCollections', {})).body.collections.find((x: { name: string }) => x.name === c);
    expect(listed.options).toEqual({ validator: CONTACTS_RULES, validationLevel: 'off', validationAction: 'error' });
    // An empty validator removes the rules.
    expect((await mql('collMod', { collection: c, validator: {}, validationLevel: 'strict' })).status).toBe(200);
    expect((await mql('insertOne', { collection: c, document: { _id: 5 } })).status).toBe(201);
  });

  it('warn writes the failing document (the service logs it)', async () => {
    const c = fresh('warned');
    await create(c, { validator: CONTACTS_RULES, validationAction: 'warn' });
    expect((await mql('insertOne', { collection: c, document: { _id: 1, name: 'no contact' } })).status).toBe(201);
    expect(await all(c)).toEqual([{ _id: 1, name: 'no contact' }]);
  });

  it('refuses bad options and rules, changing nothing', async () => {
    const c = fresh('bad');
    await create(c, { validator: CONTACTS_RULES });
    const cases: Array<[string, Record<string, unknown>, number, string, string]> = [
      ['collMod', { collection: 'missing_one', validator: {} }, 404, 'NOT_FOUND', 'ns does not exist: missing_one'],
      ['collMod', { collection: c, validationLevel: 'lax' }, 400, 'VALIDATION_FAILED', 'validationLevel'],
      ['collMod', { collection: c, validationAction: 'ignore' }, 400, 'VALIDATION_FAILED', 'validationAction'],
      ['collMod', { collection: c, validator: { a: { $foo: 1 } } }, 400, 'QUERY_ERROR', 'unknown operator: $foo'],
      ['collMod', { collection: c, validator: { $where: 'true' } }, 400, 'QUERY_ERROR', '$where'],
      ['collMod', { collection: c, validator: { $expr: { $lt: [{ $rand: {} }, 0.5] } } }, 400, 'QUERY_ERROR', 'must not use $rand or $sampleRate'],
      ['collMod', { collection: c, validator: { $sampleRate: 0.5 } }, 400, 'QUERY_ERROR', 'must not use $rand or $sampleRate'],
      ['createCollection', { collection: fresh('bad'), capped: true }, 400, 'VALIDATION_FAILED', 'capped'],
      ['createCollection', { collection: fresh('bad'), validator: 'phone' }, 400, 'VALIDATION_FAILED', 'validator'],
    ];
    for (const [op, body, status, code, message] of cases) {
      const res = await mql(op, body);
      expect(res.status, `${op} ${JSON.stringify(body)}: ${res.text}`).toBe(status);
      expect(res.body.error.code).toBe(code);
      expect(res.body.error.message).toContain(message);
    }
    const listed = (await mql('listCollections', {})).body.collections.map((x: { name: string; options?: unknown }) => [x.name, x.options]);
    expect(listed.filter(([name]: [string]) => name.startsWith('bad'))).toEqual([[c, { validator: CONTACTS_RULES, validationLevel: 'strict', validationAction: 'error' }]]);
  });
});

describe('validation across a restart', () => {
  const dir = tempDir('validation-restart');
  afterAll(() => dir.remove());

  it('keeps the rules', async () => {
    let server = await spawnServer(dir.path, ['--rate-limit', '0']);
    const { apiKey } = await signup(server.url, 'rules');
    const call = (s: typeof server, op: string, json: unknown) => http(s.url, 'POST', `/api/mql/${op}`, { apiKey, json });
    expect((await call(server, 'createCollection', { collection: 'c', validator: STUDENTS_SCHEMA })).status).toBe(200);
    server.child.kill('SIGKILL');
    await server.exited;
    server = await spawnServer(dir.path, ['--rate-limit', '0']);
    try {
      const res = await call(server, 'insertOne', { collection: 'c', document: { name: 'x' } });
      expect(res.status, res.text).toBe(400);
      expect(res.body.error.message).toBe('Document failed validation');
    } finally {
      server.child.kill('SIGKILL');
      await server.exited;
    }
  });
});
