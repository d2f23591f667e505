// renameCollection and estimatedDocumentCount over HTTP on a real server: a rename takes the
// documents and every index with it (unique and TTL indexes still act under the new name), the
// old name is gone, dropTarget replaces an existing collection, refusals (MongoDB's messages)
// change nothing, and a restart keeps the rename. The mirror's side is in mongo-routing.test.ts.
import { afterAll, describe, expect, it } from 'vitest';
import { http, serverForFile, signup } from '../helpers/server.js';
import { spawnServer } from '../helpers/server-process.js';
import { tempDir } from '../helpers/temp-dir.js';

const file = serverForFile();
const mql = file.mql.bind(file);
const all = (collection: string): Promise<any[]> => file.all(collection);
const names = file.collectionNames.bind(file);
const indexNames = async (collection: string): Promise<string[]> => (await file.indexes(collection)).map((i: { name: string }) => i.name);

const PEOPLE = [
  { _id: 1, email: 'a@x', age: 30 },
  { _id: 2, email: 'b@x', age: 40 },
  { _id: 3, email: 'c@x', age: 50 },
];

describe('renameCollection', () => {
  it('moves the documents and indexes to the new name; the old one is gone', async () => {
    const c = await file.seed(PEOPLE, 'people');
    expect((await mql('createIndex', { collection: c, keys: { email: 1 }, unique: true })).status).toBe(200);
    expect((await mql('createIndex', { collection: c, keys: { age: -1 } })).status).toBe(200);
    const before = await indexNames(c);
    const res = await mql('renameCollection', { collection: c, to: `${c}_renamed` });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ renamed: true });
    expect(await all(`${c}_renamed`)).toEqual(PEOPLE);
    expect(await all(c)).toEqual([]);
    expect(await names()).toContain(`${c}_renamed`);
    expect(await names()).not.toContain(c);
    expect(await indexNames(`${c}_renamed`)).toEqual(before);
    // The indexes serve and hold under the new name.
    const found = await mql('find', { collection: `${c}_renamed`, filter: { email: 'b@x' }, explain: true });
    expect(found.body.documents).toEqual([PEOPLE[1]]);
    expect(JSON.stringify(found.body.explain)).toContain('email_1');
    const dup = await mql('insertOne', { collection: `${c}_renamed`, document: { _id: 9, email: 'a@x' } });
    expect(dup.status, dup.text).toBe(409);
    expect(dup.body.error.message).toContain(`collection: ${c}_renamed index: email_1`);
    // A new collection of the old name starts empty, with no indexes of the renamed one.
    expect((await mql('insertOne', { collection: c, document: { _id: 1, email: 'a@x' } })).status).toBe(201);
    expect(await indexNames(c)).toEqual(['_id_']);
  });

  it('with dropTarget, replaces a collection of the new name in the same batch', async () => {
    const source = await file.seed(PEOPLE, 'src');
    const target = await file.seed([{ _id: 'old', x: 1 }], 'dst');
    expect((await mql('createIndex', { collection: target, keys: { x: 1 } })).status).toBe(200);
    const res = await mql('renameCollection', { collection: source, to: target, dropTarget: true });
    expect(res.status, res.text).toBe(200);
    expect(await all(target)).toEqual(PEOPLE);
    expect(await indexNames(target)).toEqual(['_id_']);
    expect(await names()).not.toContain(source);
  });

  it('refuses with MongoDB\'s messages and changes nothing', async () => {
    const source = await file.seed(PEOPLE, 'keep');
    const target = await file.seed([{ _id: 't' }], 'there');
    const cases: Array<[Record<string, unknown>, number, string, string]> = [
      [{ collection: source, to: target }, 409, 'CONFLICT', `target namespace exists: ${target}`],
      [{ collection: source, to: target, dropTarget: false }, 409, 'CONFLICT', 'target namespace exists'],
      [{ collection: 'nothing_here', to: 'x' }, 404, 'NOT_FOUND', 'source namespace does not exist: nothing_here'],
      [{ collection: source, to: source }, 400, 'VALIDATION_FAILED', "Can't rename a collection to itself"],
      [{ collection: source, to: 'a$b' }, 400, 'VALIDATION_FAILED', "collection names must not contain '$'"],
      [{ collection: source, to: 'system.x' }, 400, 'VALIDATION_FAILED', "must not start with 'system.'"],
      [{ collection: source, to: '' }, 400, 'VALIDATION_FAILED', 'to must be a non-empty string'],
      [{ collection: source }, 400, 'VALIDATION_FAILED', 'to'],
      [{ collection: source, to: 'y', dropTarget: 'yes' }, 400, 'VALIDATION_FAILED', 'dropTarget'],
    ];
    for (const [body, status, code, message] of cases) {
      const res = await mql('renameCollection', body);
      expect(res.status, `${JSON.stringify(body)}: ${res.text}`).toBe(status);
      expect(res.body.error.code).toBe(code);
      expect(res.body.error.message).toContain(message);
    }
    expect(await all(source)).toEqual(PEOPLE);
    expect(await all(target)).toEqual([{ _id: 't' }]);
  });

  it('keeps a TTL index acting under the new name', async () => {
    const c = await file.seed([{ _id: 1, at: { $date: new Date(Date.now() - 60_000).toISOString() } }, { _id: 2, at: { $date: new Date(Date.now() + 3_600_000).toISOString() } }], 'ttl');
    // Expires what is older than 2 s: document 1 at once, when the expiry service runs.
    expect((await mql('createIndex', { collection: c, keys: { at: 1 }, expireAfterSeconds: 2 })).status).toBe(200);
    expect((await mql('renameCollection', { collection: c, to: `${c}_moved` })).status).toBe(200);
    const deadline = Date.now() + 15_000;
    let ids: unknown[] = [];
    while (Date.now() < deadline) {
      ids = (await all(`${c}_moved`)).map((d) => d._id);
      if (ids.length === 1) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(ids).toEqual([2]);
  });
});

describe('estimatedDocumentCount', () => {
  it('counts the documents of a collection, 0 for none, and refuses a bad name', async () => {
    const c = await file.seed(PEOPLE, 'count');
    expect((await mql('estimatedDocumentCount', { collection: c })).body).toEqual({ count: 3 });
    expect((await mql('deleteOne', { collection: c, filter: { _id: 1 } })).status).toBe(200);
    expect((await mql('estimatedDocumentCount', { collection: c })).body).toEqual({ count: 2 });
    expect((await mql('estimatedDocumentCount', { collection: 'never_made' })).body).toEqual({ count: 0 });
    const bad = await mql('estimatedDocumentCount', { collection: 'a$b' });
    expect(bad.status).toBe(400);
    expect((await mql('estimatedDocumentCount', { collection: c, filter: {} })).status).toBe(400);
  });
});

describe('renameCollection across a restart', () => {
  const dir = tempDir('rename-restart');
  afterAll(() => dir.remove());

  it('is kept, and a SIGKILL right after the answer loses nothing', async () => {
    let server = await spawnServer(dir.path, ['--rate-limit', '0']);
    const { apiKey } = await signup(server.url, 'rename');
    const call = (s: typeof server, op: string, json: unknown) => http(s.url, 'POST', `/api/mql/${op}`, { apiKey, json });
    expect((await call(server, 'insertMany', { collection: 'a', documents: PEOPLE })).status).toBe(201);
    expect((await call(server, 'createIndex', { collection: 'a', keys: { email: 1 }, unique: true })).status).toBe(200);
    expect((await call(server, 'renameCollection', { collection: 'a', to: 'b' })).status).toBe(200);
    server.child.kill('SIGKILL');
    await server.exited;
    server = await spawnServer(dir.path, ['--rate-limit', '0']);
    try {
      expect((await call(server, 'find', { collection: 'b', sort: { _id: 1 } })).body.documents).toEqual(PEOPLE);
      expect((await call(server, 'find', { collection: 'a' })).body.documents).toEqual([]);
      expect((await call(server, 'insertOne', { collection: 'b', document: { email: 'c@x' } })).status).toBe(409);
    } finally {
      server.child.kill('SIGKILL');
      await server.exited;
    }
  });
});
