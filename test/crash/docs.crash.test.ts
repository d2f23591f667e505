import { afterAll, describe, expect, it } from 'vitest';
import { randomInt, seededRandom } from '../helpers/random.js';
import { http, signup } from '../helpers/server.js';
import { spawnServer, type ServerProcess } from '../helpers/server-process.js';
import { tempDir } from '../helpers/temp-dir.js';
import { killOnFailure } from './kill-on-failure.js';

// Documents and indexes under SIGKILL, over HTTP against the real server process: writers insert
// and update documents of a collection with unique, compound, multikey and partial indexes, an index is
// built from the data while they write, and the process is killed mid-load. After each restart:
// every acknowledged insert and update is there (an unacknowledged one wholly or not at all), the
// indexes agree with the documents (a query through each index returns what a collection scan
// returns, reading no stale keys), an interrupted build resumes, and the unique index still
// refuses duplicates. The default run kills a few times; TETRA_CRASH_CAMPAIGN=1 runs a long one.
const CAMPAIGN = process.env.TETRA_CRASH_CAMPAIGN === '1';
const KILLS = Number(process.env.TETRA_DOCS_CRASH_KILLS ?? (CAMPAIGN ? 20 : 2));
const SEED = Number(process.env.TETRA_CRASH_SEED ?? 13);
const WRITERS = 6;
const BULK = 2000; // enough that an index build takes a few dozen event-loop turns
const COLLECTION = 'orders';
const TAGS = ['t0', 't1', 't2', 't3', 't4', 't5', 't6', 't7'];

const dir = tempDir('docs-crash');
afterAll(() => dir.remove());

type Doc = Record<string, unknown>;

/** One document as the client knows it: every version it sent (0 is the insert), the acknowledged one. */
interface Tracked {
  versions: Doc[];
  /** Highest acknowledged version; -1 while the insert is unacknowledged. */
  acked: number;
  /** The insertMany it came with, while that batch is unacknowledged (all or nothing). */
  batch?: string;
}

/** The indexes of the collection: name, keys, and a probe that makes the planner pick it. */
interface IndexSpec {
  name: string;
  keys: Record<string, 1 | -1>;
  unique?: boolean;
  field: string;
  sort?: Record<string, 1 | -1>;
  /** Each document has one value at `field`: an equality reads exactly its matches' keys. */
  single: boolean;
  /** A partial index: its filter (which each probe adds, so the index serves it), and who matches it. */
  partial?: { filter: Doc; member: (d: Doc) => boolean };
}

const BASE_INDEXES: IndexSpec[] = [
  { name: 'u_1', keys: { u: 1 }, unique: true, field: 'u', single: true },
  { name: 'a_1', keys: { a: 1 }, field: 'a', single: true },
  { name: 'b_1_c_-1', keys: { b: 1, c: -1 }, field: 'b', sort: { c: -1 }, single: true },
  { name: 'tags_1', keys: { tags: 1 }, field: 'tags', single: false },
  { name: 'c_1', keys: { c: 1 }, field: 'c', single: true, partial: { filter: { b: { $gte: 2 } }, member: (d) => (d['b'] as number) >= 2 } },
];

/** The index round `r` builds while writers run: it serves {g: X} sorted by x<r>, and no other does. */
function roundIndex(r: number): IndexSpec {
  return { name: `g_1_x${r}_1`, keys: { g: 1, [`x${r}`]: 1 }, field: 'g', sort: { [`x${r}`]: 1 }, single: true };
}

describe('documents and indexes under SIGKILL', () => {
  it(`keep every acknowledged write and consistent indexes over ${KILLS} kills`, async () => {
    const rand = seededRandom(SEED);
    const docs = new Map<string, Tracked>();
    const roundIndexAcked = new Map<number, boolean>();
    let nextU = BULK;
    let apiKey = '';
    const stats: string[] = [];

    const mql = (server: ServerProcess, op: string, body: Doc) => http(server.url, 'POST', `/api/mql/${op}`, { json: { collection: COLLECTION, ...body }, apiKey });

    const newDoc = (id: string, r: () => number): Doc => ({
      _id: id,
      u: nextU++,
      a: randomInt(r, 0, 9),
      b: randomInt(r, 0, 4),
      c: randomInt(r, 0, 1000),
      g: randomInt(r, 0, 19),
      tags: Array.from({ length: randomInt(r, 1, 3) }, () => TAGS[randomInt(r, 0, TAGS.length - 1)]!),
      v: 0,
    });

    /** Reads every document (by _id ranges: a find returns at most 10,000). */
    const readAll = async (server: ServerProcess): Promise<Map<string, Doc>> => {
      const all = new Map<string, Doc>();
      let after: string | undefined;
      for (;;) {
        const res = await mql(server, 'find', { filter: after === undefined ? {} : { _id: { $gt: after } }, sort: { _id: 1 }, limit: 5000 });
        expect(res.status, res.text).toBe(200);
        const page = res.body.documents as Doc[];
        for (const d of page) all.set(d['_id'] as string, d);
        if (page.length < 5000) return all;
        after = page[page.length - 1]!['_id'] as string;
      }
    };

    /** After a restart: the documents match what was acknowledged, and the indexes match the documents. */
    const verify = async (server: ServerProcess, label: string): Promise<void> => {
      const stored = await readAll(server);
      const batches = new Map<string, boolean[]>();
      for (const [id, t] of [...docs]) {
        const got = stored.get(id);
        if (t.batch !== undefined) batches.set(t.batch, [...(batches.get(t.batch) ?? []), got !== undefined]);
        if (got === undefined) {
          expect(t.acked, `${label}: acknowledged document ${id} is missing`).toBe(-1);
          docs.delete(id); // its insert never happened
          continue;
        }
        const v = got['v'] as number;
        expect(v, `${label}: ${id} is at version ${v}, below the acknowledged ${t.acked}`).toBeGreaterThanOrEqual(Math.max(t.acked, 0));
        expect(v, `${label}: ${id} is at version ${v}, which was never sent`).toBeLessThan(t.versions.length);
        expect(got, `${label}: ${id} at version ${v}`).toEqual(t.versions[v]);
        // From here on the store's version is the truth.
        t.versions.length = v + 1;
        t.acked = v;
        delete t.batch;
      }
      for (const id of stored.keys()) expect(docs.has(id), `${label}: unexpected document ${id}`).toBe(true);
      for (const [batch, present] of batches) {
        expect(new Set(present).size, `${label}: insertMany ${batch} applied in part: ${present}`).toBe(1);
      }

      // Index builds interrupted by the kill are listed as building; createIndex finishes them.
      const listed = await mql(server, 'listIndexes', {});
      expect(listed.status, listed.text).toBe(200);
      const byName = new Map((listed.body.indexes as Doc[]).map((i) => [i['name'] as string, i]));
      for (const spec of BASE_INDEXES) expect(byName.get(spec.name), `${label}: index ${spec.name}`).toMatchObject({ key: spec.keys });
      const specs = [...BASE_INDEXES];
      let resumed = 0;
      for (const [r, acked] of roundIndexAcked) {
        const spec = roundIndex(r);
        const entry = byName.get(spec.name);
        if (acked) expect(entry, `${label}: acknowledged index ${spec.name}`).toBeDefined();
        if (acked) expect(entry?.['building'], `${label}: acknowledged index ${spec.name} is still building`).toBeUndefined();
        if (entry === undefined || entry['building'] === true) {
          if (entry !== undefined) resumed++;
          const res = await mql(server, 'createIndex', { keys: spec.keys });
          expect(res.status, `${label}: resuming ${spec.name}: ${res.text}`).toBe(200);
          roundIndexAcked.set(r, true);
        }
        specs.push(spec);
      }

      // Through each index, what a collection scan finds, and no stale keys on the way.
      // Values to probe: a sample of those stored, and one stored nowhere.
      const values = (field: string): unknown[] => {
        const seen = new Set<unknown>();
        for (const d of stored.values()) for (const x of [d[field]].flat()) seen.add(x);
        const all = [...seen];
        return [...(all.length <= 5 ? all : Array.from({ length: 5 }, () => all[randomInt(rand, 0, all.length - 1)])), 'absent'];
      };
      let probes = 0;
      for (const spec of specs) {
        for (const [k, value] of values(spec.field).entries()) {
          const what = `${label}: {${spec.field}: ${String(value)}}`;
          const viaIndex = await mql(server, 'find', { filter: { [spec.field]: value, ...spec.partial?.filter }, sort: spec.sort, limit: 10_000, explain: true });
          expect(viaIndex.status, viaIndex.text).toBe(200);
          expect(viaIndex.body.explain.plan, what).toMatchObject({ stage: 'IXSCAN', indexName: spec.name });
          const got = (viaIndex.body.documents as Doc[]).map((d) => d['_id'] as string).sort();
          // The documents read by _id above are what a scan sees; a few probes also ask the
          // server for the same filter in a form no index can serve.
          const want = [...stored.values()].filter((d) => [d[spec.field]].flat().includes(value) && (spec.partial?.member(d) ?? true)).map((d) => d['_id'] as string).sort();
          expect(got, `${what} through ${spec.name}, and in the documents read by _id`).toEqual(want);
          if (k < 2) {
            const branch = { [spec.field]: value, ...spec.partial?.filter };
            const scan = await mql(server, 'find', { filter: { $or: [branch, branch] }, limit: 10_000, explain: true });
            expect(scan.status, scan.text).toBe(200);
            expect(scan.body.explain.plan.stage).toBe('COLLSCAN');
            expect((scan.body.documents as Doc[]).map((d) => d['_id'] as string).sort(), `${what} by a collection scan`).toEqual(got);
          }
          // Each document has one key here per value: more keys read than documents returned
          // would be entries the documents no longer have.
          if (spec.single) expect(viaIndex.body.explain.keysExamined, `${what}: stale keys in ${spec.name}`).toBe(got.length);
          probes++;
        }
      }

      // The unique index still refuses a repeated key, for an insert and for an update.
      const present = [...stored.values()];
      if (present.length >= 2) {
        const [x, y] = [present[randomInt(rand, 0, present.length - 1)]!, present[0]!];
        const dupInsert = await mql(server, 'insertOne', { document: { _id: `dup-${label}`, u: x['u'] } });
        expect(dupInsert.status, dupInsert.text).toBe(409);
        expect(dupInsert.body.error.code).toBe('DUPLICATE_KEY');
        if (x['_id'] !== y['_id']) {
          const dupUpdate = await mql(server, 'updateOne', { filter: { _id: y['_id'] }, update: { $set: { u: x['u'] } } });
          expect(dupUpdate.status, dupUpdate.text).toBe(409);
          expect(dupUpdate.body.error.code).toBe('DUPLICATE_KEY');
        }
      }
      stats.push(`${label}: ${stored.size} documents, ${specs.length} indexes (${resumed} interrupted builds resumed), ${probes} probes`);
    };

    for (let round = 0; round <= KILLS; round++) {
      const last = round === KILLS;
      const server = await spawnServer(dir.path, ['--rate-limit', '0', '--fsync', round % 2 === 1 ? 'always' : 'batch']);
      await killOnFailure(server, async () => {
        if (round === 0) {
          ({ apiKey } = await signup(server.url, 'docs-crash'));
          for (const spec of BASE_INDEXES) {
            const res = await mql(server, 'createIndex', { keys: spec.keys, ...(spec.unique ? { unique: true } : {}), ...(spec.partial ? { partialFilterExpression: spec.partial.filter } : {}) });
            expect(res.status, res.text).toBe(200);
          }
          const bulkRand = seededRandom(SEED + 1);
          for (let from = 0; from < BULK; from += 1000) {
            const batch: Doc[] = Array.from({ length: 1000 }, (_, i) => ({ ...newDoc(`w${(from + i) % WRITERS}-bulk-${String(from + i).padStart(5, '0')}`, bulkRand), u: from + i }));
            const res = await mql(server, 'insertMany', { documents: batch });
            expect(res.status, res.text).toBe(201);
            for (const d of batch) docs.set(d['_id'] as string, { versions: [d], acked: 0 });
          }
        } else {
          await verify(server, `after kill ${round}`);
        }
      });
      if (last) {
        server.child.kill('SIGTERM');
        expect((await server.exited).code, server.output()).toBe(0);
        break;
      }

      let stop = false;
      const problems: string[] = [];
      let inserts = 0;
      let updates = 0;
      const writers = Array.from({ length: WRITERS }, async (_, w) => {
        const r = seededRandom(SEED * 1000 + round * 10 + w);
        const mine = (): string[] => [...docs].filter(([id, t]) => id.startsWith(`w${w}-`) && t.acked >= 0).map(([id]) => id);
        let own = mine();
        for (let i = 0; !stop; i++) {
          const roll = r();
          try {
            if (roll < 0.3 || own.length === 0) {
              const doc = newDoc(`w${w}-r${round}-${i}`, r);
              docs.set(doc['_id'] as string, { versions: [doc], acked: -1 });
              const res = await mql(server, 'insertOne', { document: doc });
              if (res.status !== 201) throw new Error(`insertOne answered ${res.status} ${res.text}`);
              docs.get(doc['_id'] as string)!.acked = 0;
              own.push(doc['_id'] as string);
              inserts++;
            } else if (roll < 0.4) {
              const batch = `w${w}-r${round}-${i}`;
              const many = Array.from({ length: 4 }, (_, k) => newDoc(`${batch}-${k}`, r));
              for (const d of many) docs.set(d['_id'] as string, { versions: [d], acked: -1, batch });
              const res = await mql(server, 'insertMany', { documents: many });
              if (res.status !== 201) throw new Error(`insertMany answered ${res.status} ${res.text}`);
              for (const d of many) {
                const t = docs.get(d['_id'] as string)!;
                t.acked = 0;
                delete t.batch;
                own.push(d['_id'] as string);
              }
              inserts += many.length;
            } else {
              // A new version of one of this writer's documents: other fields, maybe a new unique key.
              const id = own[randomInt(r, 0, own.length - 1)]!;
              const t = docs.get(id)!;
              const prev = t.versions[t.versions.length - 1]!;
              const set: Doc = { v: t.versions.length, a: randomInt(r, 0, 9), tags: [TAGS[randomInt(r, 0, 7)], TAGS[randomInt(r, 0, 7)]] };
              if (r() < 0.3) set['u'] = nextU++;
              if (r() < 0.3) set['b'] = randomInt(r, 0, 4);
              t.versions.push({ ...prev, ...set, c: (prev['c'] as number) + 1 });
              const res = await mql(server, 'updateOne', { filter: { _id: id }, update: { $set: set, $inc: { c: 1 } } });
              if (res.status !== 200 || res.body.matchedCount !== 1) throw new Error(`updateOne ${id} answered ${res.status} ${res.text}`);
              t.acked = Math.max(t.acked, set['v'] as number);
              updates++;
            }
          } catch (err) {
            if (stop) return; // the connection died with the process: unknown, never counted
            problems.push(`round ${round}, writer ${w}: ${err instanceof Error ? err.message : String(err)}`);
            return;
          }
          if (i % 50 === 49) own = mine();
        }
      });

      // The round's index is built from the data while the writers run, often cut short by the kill.
      // Odd rounds send it just before the kill (usually cut short), even ones earlier (usually done).
      const killAt = randomInt(rand, 250, 700);
      const buildAt = round % 2 === 1 ? killAt - randomInt(rand, 0, 40) : randomInt(rand, 0, Math.floor(killAt / 2));
      roundIndexAcked.set(round, false);
      const build = new Promise((resolve) => setTimeout(resolve, buildAt)).then(async () => {
        try {
          const res = await mql(server, 'createIndex', { keys: roundIndex(round).keys });
          if (res.status !== 200) throw new Error(`createIndex answered ${res.status} ${res.text}`);
          roundIndexAcked.set(round, true);
        } catch (err) {
          if (!stop) problems.push(`round ${round}, createIndex: ${err instanceof Error ? err.message : String(err)}`);
        }
      });
      await new Promise((resolve) => setTimeout(resolve, killAt));
      stop = true;
      server.child.kill('SIGKILL');
      const exit = await server.exited;
      await Promise.all([...writers, build]);
      expect(problems, server.output()).toEqual([]);
      expect(exit.signal, `round ${round}: the server must die by SIGKILL (${server.output()})`).toBe('SIGKILL');
      stats.push(`round ${round}: ${inserts} inserts and ${updates} updates acknowledged, index build ${roundIndexAcked.get(round) ? 'acknowledged' : 'cut short'}`);
    }
    // The rounds did real work.
    expect(docs.size, stats.join('\n')).toBeGreaterThan(BULK + KILLS * 10);
    expect([...docs.values()].filter((t) => t.acked > 0).length, stats.join('\n')).toBeGreaterThan(KILLS * 10);
    if (process.env.TETRA_CRASH_VERBOSE) console.log(stats.join('\n'));
  }, 30 * 60_000);
});
