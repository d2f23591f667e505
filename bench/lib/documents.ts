// The documents of the document benchmarks: the same JSON for tetradb and PostgreSQL, derived
// from the document's number alone (a seeded hash, no stored table), so the HTTP loader, the
// workloads picking random ids and the engine-level memory loader all agree on every byte.
// About 300 bytes of JSON each.

import { seededRandom } from './dataset.js';

/** One benchmark document, as JSON (what the HTTP bodies carry). */
export interface BenchDocument {
  _id: string;
  email: string;
  n: number;
  name: string;
  tags: string[];
  profile: { age: number; city: string };
  bio: string;
}

const FIRST = ['Ada', 'Alan', 'Barbara', 'Claude', 'Donald', 'Edsger', 'Frances', 'Grace', 'Hedy', 'Ivan', 'John', 'Katherine', 'Leslie', 'Margaret', 'Niklaus', 'Radia'];
const LAST = ['Lovelace', 'Turing', 'Liskov', 'Shannon', 'Knuth', 'Dijkstra', 'Allen', 'Hopper', 'Lamarr', 'Sutherland', 'Backus', 'Johnson', 'Lamport', 'Hamilton', 'Wirth', 'Perlman'];
/** The cities of `profile.city`, drawn uniformly (the aggregation benchmark joins them to a collection of its own). */
export const CITIES = ['Amsterdam', 'Berlin', 'Cairo', 'Dublin', 'Helsinki', 'Lisbon', 'Montreal', 'Nairobi', 'Osaka', 'Porto', 'Santiago', 'Vienna'];
const TAGS = ['admin', 'beta', 'billing', 'churn-risk', 'enterprise', 'free', 'mobile', 'newsletter', 'partner', 'pro', 'support', 'trial', 'vip', 'web'];
const WORDS = ['builds', 'careful', 'database', 'engines', 'fast', 'likes', 'queries', 'reliable', 'storage', 'systems', 'tests', 'writes', 'and', 'with', 'for', 'small'];
const SEED = 0xd0c5;

/** The `_id` of document `i` (a string, as the brief's data set has). */
export function docId(i: number): string {
  return `doc-${String(i).padStart(9, '0')}`;
}

/** The `email` of document `i`: unique per document, the secondary indexed field. */
export function docEmail(i: number): string {
  return `user${i}@example.com`;
}

/** Document `i`: fields drawn from a generator seeded by `i`, so any process can rebuild it. */
export function makeDocument(i: number, id = docId(i), email = docEmail(i)): BenchDocument {
  const rand = seededRandom(SEED ^ Math.imul(i + 1, 0x9e3779b1));
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  const tags: string[] = [];
  for (let t = 2 + Math.floor(rand() * 3); t > 0; t--) tags.push(pick(TAGS));
  const words: string[] = [];
  for (let w = 0; w < 19; w++) words.push(pick(WORDS));
  return {
    _id: id,
    email,
    n: i,
    name: `${pick(FIRST)} ${pick(LAST)}`,
    tags,
    profile: { age: 18 + Math.floor(rand() * 60), city: pick(CITIES) },
    bio: words.join(' '),
  };
}

/** `count` numbers drawn uniformly from [0, size): which loaded documents the reads ask for. */
export function randomDocNumbers(size: number, count: number, seed = SEED + size): number[] {
  const rand = seededRandom(seed);
  return Array.from({ length: count }, () => Math.floor(rand() * size));
}

/** Where `joined` (the in-process benchmark's indexed range field) starts, and how wide it is. */
export const JOINED_START_MS = Date.UTC(2023, 0, 1);
export const JOINED_SPAN_MS = 3 * 365 * 86_400_000;
const JOINED_SEED = 0x701d;

/**
 * A BenchDocument with two fields more for the in-process documents benchmark (docs.bench.ts):
 * `joined`, an epoch-ms sign-up time drawn uniformly over JOINED_SPAN_MS (a high-cardinality
 * number, so a range can hold ~100 documents at any size, which `profile.age`'s 60 values cannot),
 * and `logins`, the counter its updates increment. The BenchDocument fields are the same bytes as
 * makeDocument(i) gives the HTTP benchmark.
 */
export interface QueryDocument extends BenchDocument {
  joined: number;
  logins: number;
}

/** Document `i` of the in-process documents benchmark (see QueryDocument). */
export function makeQueryDocument(i: number): QueryDocument {
  const rand = seededRandom(JOINED_SEED ^ Math.imul(i + 1, 0x85ebca6b));
  return { ...makeDocument(i), joined: JOINED_START_MS + Math.floor(rand() * JOINED_SPAN_MS), logins: 0 };
}
