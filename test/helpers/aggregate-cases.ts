// Table-driven aggregation cases run through the real server over HTTP (POST /api/mql/aggregate),
// optionally checked against mingo (the differential oracle) where mingo agrees with the manual.
import { aggregate } from 'mingo';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { fromJson } from '../../engine/docs/index.js';
import { http, signup, startServer, type HttpResult, type RunningServer } from './server.js';

/** A running server with one tenant, its collections seeded with Extended JSON documents. */
export interface AggregateHarness {
  aggregate(pipeline: unknown[], collection?: string): Promise<HttpResult>;
  /** The value of `expr` on the document `_id` of `collection` ("docs"), undefined when missing. */
  value(expr: unknown, id?: unknown, collection?: string): Promise<unknown>;
  /** The seeded documents of a collection, as JavaScript values (dates as Date), for mingo. */
  docs(collection?: string): Record<string, unknown>[];
}

/** Starts a server for the file's tests and seeds `collections` (name -> Extended JSON documents). */
export function aggregateHarness(collections: Record<string, unknown[]>): AggregateHarness {
  let server: RunningServer;
  let apiKey: string;
  beforeAll(async () => {
    server = await startServer();
    ({ apiKey } = await signup(server.url));
    for (const [collection, documents] of Object.entries(collections)) {
      const res = await http(server.url, 'POST', '/api/mql/insertMany', { json: { collection, documents }, apiKey });
      if (res.status !== 201) throw new Error(`seeding ${collection}: ${res.status} ${res.text}`);
    }
  });
  afterAll(() => server.stop());
  const run = (pipeline: unknown[], collection = 'docs') => http(server.url, 'POST', '/api/mql/aggregate', { json: { collection, pipeline }, apiKey });
  return {
    aggregate: run,
    async value(expr, id = 1, collection = 'docs') {
      const res = await run([{ $match: { _id: id } }, { $project: { _id: 0, v: expr } }], collection);
      expect(res.status, res.text).toBe(200);
      return res.body.documents[0].v;
    },
    docs: (collection = 'docs') => fromJson(structuredClone(collections[collection] ?? [])) as Record<string, unknown>[],
  };
}

/** A value case: name, expression, expected value (Extended JSON; undefined for missing), and 'mingo' when mingo must agree. */
export type ValueCase = readonly [name: string, expr: unknown, expected: unknown, oracle?: 'mingo'];

/** One test per case: the value over HTTP equals `expected`; for 'mingo' cases mingo's value too. */
export function valueCases(h: AggregateHarness, cases: readonly ValueCase[], id: unknown = 1): void {
  for (const [name, expr, expected, oracle] of cases) {
    it(name, async () => {
      expect(await h.value(expr, id)).toEqual(expected);
      if (oracle === 'mingo') {
        const doc = h.docs().find((d) => d['_id'] === id);
        const theirs = (aggregate([doc ?? {}], [{ $project: { _id: 0, v: expr } }]) as Array<Record<string, unknown>>)[0]?.['v'];
        expect(theirs, 'mingo').toEqual(fromJson(structuredClone(expected)));
      }
    });
  }
}

/** An error case: name, expression, the operator the error names, and its message. */
export type ErrorCase = readonly [name: string, expr: unknown, operator: string, message: RegExp];

/** One test per case: 400 QUERY_ERROR naming the operator (in the message or its details). */
export function errorCases(h: AggregateHarness, cases: readonly ErrorCase[], id: unknown = 1): void {
  for (const [name, expr, operator, message] of cases) {
    it(`refuses ${name}`, async () => {
      const res = await h.aggregate([{ $match: { _id: id } }, { $project: { _id: 0, v: expr } }]);
      expectQueryError(res, operator, message);
    });
  }
}

/** The response is a 400 QUERY_ERROR naming `operator`, with a message matching `message`. */
export function expectQueryError(res: HttpResult, operator: string, message: RegExp): void {
  expect(res.status, res.text).toBe(400);
  expect(res.body.error.code).toBe('QUERY_ERROR');
  expect(res.body.error.message).toMatch(message);
  const named = res.body.error.message.includes(operator) || res.body.error.details?.operator === operator || res.body.error.details?.stage === operator;
  expect(named, `${res.body.error.message} names ${operator}`).toBe(true);
}
