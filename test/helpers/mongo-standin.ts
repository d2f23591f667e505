// A stand-in for a MongoDB server, for the tests of the external aggregation routing: no MongoDB
// server can be had on this machine (the docs say so). It speaks the wire protocol the official
// driver speaks (OP_MSG, and OP_QUERY for the legacy handshake), keeps its databases in memory,
// and answers the commands the mirror and the routing send: hello, ping, buildInfo, endSessions,
// insert, update (replacements and upserts), delete, find, aggregate, getMore, killCursors, drop,
// dropDatabase, listCollections, createIndexes, dropIndexes, listIndexes. Filters and pipelines run on mingo
// (a dev dependency, here as the engine behind the stand-in, as in the oracle suites).
//
// What it is not: MongoDB. `$text` is a minimal version (each term of `$search` as a
// case-insensitive word of some string field, which needs a text index as MongoDB does; no
// stemming, phrases, negations or scores). The tests check what tetradb sends and receives, and
// the mirror's contents; MongoDB's semantics of the stages are checked against mingo elsewhere.
import { createServer, type Server, type Socket } from 'node:net';
import { Aggregator, Query } from 'mingo';
import { BSON } from 'mongodb';

type Doc = Record<string, unknown>;

const OP_REPLY = 1;
const OP_QUERY = 2004;
const OP_MSG = 2013;

export interface MongoStandIn {
  readonly uri: string;
  readonly port: number;
  /** Database name -> collection name -> documents. */
  readonly dbs: Map<string, Map<string, Doc[]>>;
  /** Commands received, in order (name and database), for assertions. */
  readonly commands: Array<{ name: string; db: string; body: Doc }>;
  /** Documents of one collection (empty when missing), `_id` order. */
  docs(db: string, collection: string): Doc[];
  /** The indexes made on one collection (createIndexes), `_id`'s not included. */
  indexes(db: string, collection: string): Doc[];
  /** Closes the listener and every connection (the driver sees the server gone). */
  stop(): Promise<void>;
  /** Listens again on the same port, with the same data unless `wipe`. */
  start(options?: { wipe?: boolean }): Promise<void>;
  /**
   * From now on, commands with these names (case-insensitive) get no reply until `release`: a
   * MongoDB that is up (it answers hello and ping) but has not yet done the writes it was sent.
   */
  hold(commands: string[]): void;
  /** Answers the held commands in the order they came, and holds no more. */
  release(): void;
}

function errorReply(code: number, codeName: string, errmsg: string): Doc {
  return { ok: 0, code, codeName, errmsg };
}

function cursorReply(ns: string, batch: Doc[]): Doc {
  return { cursor: { id: BSON.Long.fromNumber(0), ns, firstBatch: batch }, ok: 1 };
}

function compareIds(a: Doc, b: Doc): number {
  const x = a._id as string | number;
  const y = b._id as string | number;
  if (typeof x === typeof y) return x < y ? -1 : x > y ? 1 : 0;
  return typeof x === 'number' ? -1 : 1;
}

// The minimal $text of the stand-in: the first stage's `$text: {$search}` keeps documents with a
// string field (at any depth) holding one of the terms as a word, case-insensitively.
function applyText(docs: Doc[], pipeline: Doc[]): { docs: Doc[]; pipeline: Doc[] } {
  const first = pipeline[0]?.$match as Doc | undefined;
  const text = first?.$text as { $search?: unknown } | undefined;
  if (text === undefined) return { docs, pipeline };
  const terms = String(text.$search).toLowerCase().split(/\s+/).filter(Boolean);
  const words = (v: unknown, out: Set<string>): Set<string> => {
    if (typeof v === 'string') for (const w of v.toLowerCase().split(/[^\p{L}\p{N}]+/u)) out.add(w);
    else if (Array.isArray(v)) for (const x of v) words(x, out);
    else if (v !== null && typeof v === 'object' && !(v instanceof Date)) for (const x of Object.values(v)) words(x, out);
    return out;
  };
  const { $text: _, ...rest } = first!;
  const kept = docs.filter((d) => {
    const ws = words(d, new Set());
    return terms.some((t) => ws.has(t));
  });
  return { docs: kept, pipeline: [{ $match: rest }, ...pipeline.slice(1)] };
}

/**
 * `port`: where to listen (default: any free port). `sink`: for benchmarks, documents written to databases other than `keepDb` are not kept, only
 * their ids (the `count` command answers how many), so a large load costs the stand-in little.
 */
export async function startMongoStandIn(options: { sink?: boolean; keepDb?: string; port?: number } = {}): Promise<MongoStandIn> {
  const sinkIds = new Map<string, Set<unknown>>();
  const sunk = (db: string, coll: string): Set<unknown> | undefined => {
    if (options.sink !== true || db === options.keepDb) return undefined;
    const key = `${db}.${coll}`;
    let ids = sinkIds.get(key);
    if (ids === undefined) sinkIds.set(key, (ids = new Set()));
    return ids;
  };
  const dbs = new Map<string, Map<string, Doc[]>>();
  const indexes = new Map<string, Doc[]>();
  const commands: Array<{ name: string; db: string; body: Doc }> = [];
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  let port = 0;
  let connectionId = 0;
  let held = new Set<string>();
  let heldReplies: Array<() => void> = [];

  const collectionOf = (db: string, name: string, create: boolean): Doc[] | undefined => {
    let colls = dbs.get(db);
    if (colls === undefined) {
      if (!create) return undefined;
      colls = new Map();
      dbs.set(db, colls);
    }
    let docs = colls.get(name);
    if (docs === undefined && create) {
      docs = [];
      colls.set(name, docs);
    }
    return docs;
  };

  // Collections a pipeline reads besides its own, resolved from the same database (mingo's
  // collectionResolver).
  const resolverFor = (db: string) => (name: string) => collectionOf(db, name, false) ?? [];

  function run(body: Doc, sequences: Map<string, Doc[]>): Doc {
    const name = Object.keys(body)[0]!;
    const db = String(body.$db ?? 'admin');
    commands.push({ name, db, body });
    switch (name.toLowerCase()) {
      case 'hello':
      case 'ismaster':
        return {
          helloOk: true,
          ismaster: true,
          isWritablePrimary: true,
          maxBsonObjectSize: 16 * 1024 * 1024,
          maxMessageSizeBytes: 48_000_000,
          maxWriteBatchSize: 100_000,
          localTime: new Date(),
          logicalSessionTimeoutMinutes: 30,
          connectionId: ++connectionId,
          minWireVersion: 0,
          maxWireVersion: 21,
          readOnly: false,
          ok: 1,
        };
      case 'ping':
      case 'endsessions':
      case 'killcursors':
        return { ok: 1 };
      case 'buildinfo':
        return { version: '7.0.0-standin', versionArray: [7, 0, 0, 0], ok: 1 };
      case 'count': {
        const ids = sunk(db, String(body.count));
        return { n: ids !== undefined ? ids.size : (collectionOf(db, String(body.count), false) ?? []).length, ok: 1 };
      }
      case 'insert': {
        const incoming = (body.documents as Doc[] | undefined) ?? sequences.get('documents') ?? [];
        const ids = sunk(db, String(body.insert));
        if (ids !== undefined) {
          for (const d of incoming) ids.add(d._id);
          return { n: incoming.length, ok: 1 };
        }
        const docs = collectionOf(db, String(body.insert), true)!;
        const writeErrors: Doc[] = [];
        incoming.forEach((d, index) => {
          if (docs.some((x) => Buffer.from(BSON.serialize({ v: x._id })).equals(BSON.serialize({ v: d._id })))) writeErrors.push({ index, code: 11000, errmsg: 'E11000 duplicate key error' });
          else docs.push(d);
        });
        docs.sort(compareIds);
        return { n: incoming.length - writeErrors.length, ...(writeErrors.length > 0 ? { writeErrors } : {}), ok: 1 };
      }
      case 'update': {
        const updates = (body.updates as Doc[] | undefined) ?? sequences.get('updates') ?? [];
        const ids = sunk(db, String(body.update));
        if (ids !== undefined) {
          for (const u of updates) ids.add((u.q as Doc)._id);
          return { n: updates.length, nModified: 0, ok: 1 };
        }
        const docs = collectionOf(db, String(body.update), true)!;
        let n = 0;
        let nModified = 0;
        const upserted: Doc[] = [];
        updates.forEach((u, index) => {
          const q = new Query(u.q as Doc);
          const spec = u.u as Doc;
          const operators = Object.keys(spec).filter((k) => k.startsWith('$'));
          if (operators.some((k) => k !== '$set')) throw new Error('the stand-in applies replacements and $set only');
          // A replacement, or $set of top-level fields.
          const next = (old: Doc | undefined, id: unknown): Doc => (operators.length === 0 ? { _id: id, ...spec } : { ...(old ?? { _id: id }), ...(spec.$set as Doc) });
          const at = docs.findIndex((d) => q.test(d));
          if (at >= 0) {
            n++;
            nModified++;
            docs[at] = next(docs[at], docs[at]!._id);
          } else if (u.upsert === true) {
            const _id = (operators.length === 0 ? spec._id : undefined) ?? (u.q as Doc)._id;
            docs.push(next(undefined, _id));
            upserted.push({ index, _id });
            n++;
          }
        });
        docs.sort(compareIds);
        return { n, nModified, ...(upserted.length > 0 ? { upserted } : {}), ok: 1 };
      }
      case 'delete': {
        const deletes = (body.deletes as Doc[] | undefined) ?? sequences.get('deletes') ?? [];
        const ids = sunk(db, String(body.delete));
        if (ids !== undefined) {
          for (const d of deletes) {
            if ((d.q as Doc)._id !== undefined) ids.delete((d.q as Doc)._id);
            else ids.clear();
          }
          return { n: deletes.length, ok: 1 };
        }
        const docs = collectionOf(db, String(body.delete), false) ?? [];
        let n = 0;
        for (const d of deletes) {
          const q = new Query(d.q as Doc);
          for (let i = 0; i < docs.length; ) {
            if (q.test(docs[i]!)) {
              docs.splice(i, 1);
              n++;
              if (d.limit === 1) break;
            } else i++;
          }
        }
        return { n, ok: 1 };
      }
      case 'find': {
        const coll = String(body.find);
        const docs = collectionOf(db, coll, false) ?? [];
        let out = new Query((body.filter as Doc | undefined) ?? {}).find(docs).all() as Doc[];
        if (typeof body.limit === 'number' && body.limit > 0) out = out.slice(0, body.limit);
        return cursorReply(`${db}.${coll}`, out);
      }
      case 'aggregate': {
        const coll = String(body.aggregate);
        const pipeline = body.pipeline as Doc[];
        const source = collectionOf(db, coll, false) ?? [];
        if (((pipeline[0]?.$match as Doc | undefined)?.$text) !== undefined && !(indexes.get(`${db}.${coll}`) ?? []).some((ix) => Object.values(ix.key as Doc).includes('text'))) {
          return errorReply(27, 'IndexNotFound', 'text index required for $text query');
        }
        const texted = applyText(source, pipeline);
        // A command's `let` becomes mingo's global variables, as MongoDB binds them.
        const out = new Aggregator(texted.pipeline, { collectionResolver: resolverFor(db), ...(body.let !== undefined ? { variables: body.let as Doc } : {}) }).run(texted.docs) as Doc[];
        return cursorReply(`${db}.${coll}`, out);
      }
      case 'getmore':
        return { cursor: { id: BSON.Long.fromNumber(0), ns: `${db}.${String(body.collection)}`, nextBatch: [] }, ok: 1 };
      case 'drop': {
        const colls = dbs.get(db);
        if (colls?.delete(String(body.drop)) !== true) return errorReply(26, 'NamespaceNotFound', 'ns not found');
        indexes.delete(`${db}.${String(body.drop)}`);
        return { ok: 1 };
      }
      case 'dropdatabase':
        dbs.delete(db);
        return { ok: 1 };
      case 'listcollections': {
        const names = [...(dbs.get(db)?.keys() ?? [])];
        return cursorReply(`${db}.$cmd.listCollections`, names.map((n) => ({ name: n, type: 'collection', options: {}, info: { readOnly: false } })));
      }
      case 'createindexes': {
        collectionOf(db, String(body.createIndexes), true);
        const key = `${db}.${String(body.createIndexes)}`;
        const added = body.indexes as Doc[];
        indexes.set(key, [...(indexes.get(key) ?? []).filter((ix) => !added.some((a) => a.name === ix.name)), ...added]);
        return { ok: 1 };
      }
      case 'dropindexes': {
        const key = `${db}.${String(body.dropIndexes)}`;
        const list = indexes.get(key) ?? [];
        const kept = list.filter((ix) => ix.name !== body.index);
        if (kept.length === list.length) return errorReply(27, 'IndexNotFound', `index not found with name [${String(body.index)}]`);
        indexes.set(key, kept);
        return { ok: 1 };
      }
      case 'listindexes': {
        const key = `${db}.${String(body.listIndexes)}`;
        return cursorReply(key, [{ v: 2, key: { _id: 1 }, name: '_id_' }, ...(indexes.get(key) ?? [])]);
      }
      default:
        return errorReply(59, 'CommandNotFound', `no such command: '${name}'`);
    }
  }

  function reply(socket: Socket, responseTo: number, opCode: number, payload: Buffer): void {
    const header = Buffer.alloc(16);
    header.writeInt32LE(16 + payload.length, 0);
    header.writeInt32LE(0, 4);
    header.writeInt32LE(responseTo, 8);
    header.writeInt32LE(opCode, 12);
    socket.write(Buffer.concat([header, payload]));
  }

  function answer(body: Doc, sequences: Map<string, Doc[]>): Doc {
    try {
      return run(body, sequences);
    } catch (err) {
      return errorReply(8000, 'StandInError', (err as Error).message);
    }
  }

  function handle(socket: Socket, message: Buffer): void {
    const requestId = message.readInt32LE(4);
    const opCode = message.readInt32LE(12);
    if (opCode === OP_MSG) {
      const flags = message.readUInt32LE(16);
      let pos = 20;
      const end = message.length - (flags & 1 ? 4 : 0);
      let body: Doc = {};
      const sequences = new Map<string, Doc[]>();
      while (pos < end) {
        const kind = message[pos]!;
        pos++;
        const size = message.readInt32LE(pos);
        if (kind === 0) {
          body = BSON.deserialize(message.subarray(pos, pos + size), { promoteLongs: true });
          pos += size;
        } else {
          const sectionEnd = pos + size;
          let p = pos + 4;
          const zero = message.indexOf(0, p);
          const id = message.toString('utf8', p, zero);
          p = zero + 1;
          const docs: Doc[] = [];
          while (p < sectionEnd) {
            const n = message.readInt32LE(p);
            docs.push(BSON.deserialize(message.subarray(p, p + n), { promoteLongs: true }));
            p += n;
          }
          sequences.set(id, docs);
          pos = sectionEnd;
        }
      }
      if (held.has(Object.keys(body)[0]?.toLowerCase() ?? '')) {
        const kept = Buffer.from(message);
        heldReplies.push(() => {
          if (!socket.destroyed) handle(socket, kept);
        });
        return;
      }
      const out = answer(body, sequences);
      if (flags & 2) return; // moreToCome: no reply expected
      const doc = Buffer.from(BSON.serialize(out));
      const payload = Buffer.alloc(5 + doc.length);
      payload.writeUInt32LE(0, 0);
      payload[4] = 0;
      doc.copy(payload, 5);
      reply(socket, requestId, OP_MSG, payload);
      return;
    }
    if (opCode === OP_QUERY) {
      let pos = 20;
      const zero = message.indexOf(0, pos);
      const ns = message.toString('utf8', pos, zero);
      pos = zero + 1 + 8;
      const size = message.readInt32LE(pos);
      const query = BSON.deserialize(message.subarray(pos, pos + size));
      const body = (query.$query as Doc | undefined) ?? query;
      const out = answer({ ...body, $db: ns.split('.')[0] }, new Map());
      const doc = Buffer.from(BSON.serialize(out));
      const payload = Buffer.alloc(20 + doc.length);
      payload.writeInt32LE(0, 0);
      payload.writeBigInt64LE(0n, 4);
      payload.writeInt32LE(0, 12);
      payload.writeInt32LE(1, 16);
      doc.copy(payload, 20);
      reply(socket, requestId, OP_REPLY, payload);
      return;
    }
    socket.destroy();
  }

  const listen = (atPort: number): Promise<void> =>
    new Promise((resolve, reject) => {
      server = createServer((socket) => {
        sockets.add(socket);
        socket.on('close', () => sockets.delete(socket));
        socket.on('error', () => socket.destroy());
        let pending: Buffer = Buffer.alloc(0);
        socket.on('data', (chunk: Buffer) => {
          pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
          while (pending.length >= 4) {
            const length = pending.readInt32LE(0);
            if (pending.length < length) break;
            handle(socket, pending.subarray(0, length));
            pending = pending.subarray(length);
          }
        });
      });
      server.once('error', reject);
      server.listen(atPort, '127.0.0.1', () => {
        const address = server!.address();
        port = typeof address === 'object' && address !== null ? address.port : atPort;
        resolve();
      });
    });

  await listen(options.port ?? 0);
  return {
    get uri() {
      return `mongodb://127.0.0.1:${port}/?directConnection=true&serverSelectionTimeoutMS=1000&connectTimeoutMS=1000`;
    },
    get port() {
      return port;
    },
    dbs,
    commands,
    docs: (db, collection) => [...(collectionOf(db, collection, false) ?? [])],
    indexes: (db, collection) => [...(indexes.get(`${db}.${collection}`) ?? [])],
    hold(names) {
      held = new Set(names.map((n) => n.toLowerCase()));
    },
    release() {
      held = new Set();
      for (const run of heldReplies.splice(0)) run();
    },
    async stop() {
      heldReplies = [];
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => (server === undefined ? resolve() : server.close(() => resolve())));
      server = undefined;
    },
    async start(options = {}) {
      if (options.wipe === true) {
        dbs.clear();
        indexes.clear();
      }
      await listen(port);
    },
  };
}
