/**
 * The document model over one tenant's store: collections, CRUD with MongoDB semantics, secondary
 * indexes and the query planner. Stateless functions, like the key-value model.
 *
 * Reads run on a snapshot and yield to the event loop between chunks of candidates, so a long
 * find neither blocks other requests nor sees a half-applied write. Writes are atomic within one
 * event-loop turn: a write reads the live documents it changes, checks unique indexes and applies
 * one batch in the same turn, so no other write can come between its check and its batch. A
 * multi-document update or delete finds candidates on a snapshot, then handles them a chunk at a
 * time, each chunk re-reading the live documents (and re-testing the filter) in the turn that
 * writes them: every document is changed atomically and never from a stale copy, and the whole
 * operation is not one transaction (as in MongoDB). insertMany is one batch: all or nothing.
 */

import { hostname } from 'node:os';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { fail, isTetraError, TetraError } from '../errors.js';
import { interruptOf, UNINTERRUPTED, type ClientWatch, type Interrupt } from '../interrupt.js';
import { emptyPageStats, encodeKey, keyPrefixRange, PAGE_SIZE, prefixUpperBound, ValueRun, type KeyPart, type SpillArea, type SpillFile, type SpillRun, type TreePageStats } from '../storage/index.js';
import type { BatchOp, Snapshot, TenantStore } from '../tenant/index.js';
import {
  CATALOG_TREE,
  deleteCollection,
  docsTree,
  dropCollectionOps,
  indexTree,
  listCollectionInfos,
  listTemporaryCollections,
  MAX_INDEXES,
  newCollection,
  newTemporaryCollection,
  putCollection,
  readCollection,
  sameKeyPattern,
  validateCollectionName,
  type CollectionInfo,
  type IndexInfo,
} from './catalog.js';
import { bypassOption, checkValidation, describeValidation, parseValidation, type ValidationOptions } from './collection-validator.js';
import { decodeDocument, decodeDocumentAt, encodeDocument, FieldReader, idKey, MAX_ID_BYTES } from './doc-codec.js';
import { directed, documentKeys, entryKey, idComponent, indexComponent, oneFieldEntryKey, type IndexField } from './index-key.js';
import { indexServesQuery, isIndexMember, validatePartialFilter } from './index-membership.js';
import { CursorInterrupt, type OpenedCursor } from './cursors.js';
import type { CollStatsSpec } from './aggregate/stages/coll-stats.js';
import { accessesOf, countIndexRead, countPlanReads, ID_INDEX_ID } from './index-stats.js';
import { DOCS_LIMITS } from './limits.js';
import { isValidId, newObjectId } from './object-id.js';
import { AGGREGATE_LIMITS, approxBytes, refuseLookupMatches, type LookupRefusal, type QueryMemory, type StageContext } from './aggregate/stage.js';
import { decodeSpilledDoc, encodeSpilledDoc, mergeRuns, refuseSort, writeRun } from './external-sort.js';
import { compilePipeline } from './aggregate/pipeline.js';
import { mergeVariables, type MergeSpec } from './aggregate/stages/merge.js';
import type { OutSpec } from './aggregate/stages/out.js';
import { noInput } from './aggregate/stages/lookup.js';
import { Scope } from './aggregate/expression/expression.js';
import { ValueSet } from './aggregate/value-key.js';
import { fromJson } from './ejson.js';
import { bindFilter, compileLet, letOf, type LetOptions, type LetVariables } from './let-variables.js';
import type { AndNode } from './query/filter-ast.js';
import { compileProjection, projectionFeatures, type CompiledProjection, type ProjectionOptions } from './projection.js';
import { projectTransform } from './aggregate/stages/project.js';
import { compileFilter, filterIsVolatile, filterPaths, filterReadsAll, filterTextAtTop, filterTextSearch, parseFilter, type CompiledFilter } from './query/compile-filter.js';
import { describePlan, planQuery, type Hint, type Plan, type ReadPlan } from './query-planner.js';
import { compileSort, type CompiledSort } from './sort.js';
import { compileUpdate } from './update/compile-update.js';
import { compilePipelineUpdate, type CompiledPipelineUpdate } from './update/pipeline-update.js';
import { buildUpsertDocument, filterIdEquality } from './update/upsert.js';
import { documentFromJson, validateDocument, wellFormed } from './validate.js';
import { collectValues, parsePath } from './path.js';
import {
  describeTextIndex,
  documentTermScores,
  isTextKeyPattern,
  parseTextIndex,
  sameTextIndex,
  setNoTextScore,
  setTextScore,
  termKey,
  textIndexFields,
  textKeyFields,
  textKeyPattern,
  textKeyValue,
  TEXT_SCORE_UNAVAILABLE,
  type TextIndexOptions,
  type TextIndexSpec,
  type TextSearch,
} from './text/index.js';
import { bsonTypeOf, cloneValue, compareValues, describeValue, getOwn, isPlainObject, MISSING, setOwn, valuesEqual, type Doc } from './values.js';

/** Limits of the document endpoints (see docs/mql.md). */
export const DOCS_MODEL_LIMITS = {
  /** Encoded size of one stored document (MongoDB: 16 MiB of BSON). */
  maxDocumentBytes: 1024 * 1024,
  defaultFindLimit: 100,
  maxFindLimit: 10_000,
  maxInsertMany: 10_000,
  /** Stored bytes of the documents one find may return. */
  maxResultBytes: 32 * 1024 * 1024,
} as const;

/**
 * The server's bounds on what one query holds: the blocking bound of a stage or a find's sort
 * (AGGREGATE_LIMITS.maxBlockingBytes unless configured), and where queries past it spill (none:
 * they fail past it, as without allowDiskUse).
 */
export interface MemorySettings {
  readonly maxBlockingBytes: number;
  readonly spill: SpillArea | undefined;
}

/** MongoDB's allowDiskUse of a command (`owner`: the IDL name its message gives, 'aggregate' or 'FindCommandRequest'). @throws QUERY_ERROR when not a boolean */
export function allowDiskUseOf(v: unknown, owner: string): boolean {
  if (v === undefined) return true; // MongoDB 6.0+: allowDiskUseByDefault
  if (typeof v !== 'boolean') fail('QUERY_ERROR', `BSON field '${owner}.allowDiskUse' is the wrong type '${bsonTypeOf(v)}', expected type 'bool'`, { field: 'allowDiskUse' });
  return v;
}

/** One query's memory: the bound, and its own spill space when it may spill (close it when the query is over); and what stops it. */
function queryMemory(settings: MemorySettings | undefined, allowDiskUse: boolean, interrupt: Interrupt = UNINTERRUPTED): QueryMemory {
  return {
    maxBlockingBytes: settings?.maxBlockingBytes ?? AGGREGATE_LIMITS.maxBlockingBytes,
    allowDiskUse,
    spill: allowDiskUse ? settings?.spill?.begin() : undefined,
    interrupt,
  };
}

/**
 * What may stop a query of a request before its end, besides its own `maxTimeMS`: the server's
 * time limit for queries (TETRA_MQL_TIME_LIMIT_MS; 0 or absent: none) and the client to watch.
 */
export interface QueryGuard {
  readonly timeLimitMs?: number;
  readonly client?: ClientWatch;
  /**
   * When the request began (performance.now()), if it did something else first: its time limits
   * count from then (an aggregation run natively after the external MongoDB did not answer in
   * time has only what is left).
   */
  readonly since?: number;
}

/** MongoDB's largest maxTimeMS (a 32-bit signed integer of milliseconds). */
const MAX_TIME_MS_MAX = 2 ** 31 - 1;

/**
 * A command's maxTimeMS as MongoDB reads it (its parseMaxTimeMS): a number, truncated to a 64-bit
 * integer for the range check (0 to 2^31-1; 0: no limit), then integral; undefined when absent.
 * @throws QUERY_ERROR with MongoDB's messages
 */
export function maxTimeMSOf(v: unknown): number | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== 'number') fail('QUERY_ERROR', 'maxTimeMS must be a number', { field: 'maxTimeMS' });
  const long = Number.isNaN(v) ? 0n : v >= 2 ** 63 ? 2n ** 63n - 1n : v <= -(2 ** 63) ? -(2n ** 63n) : BigInt(Math.trunc(v));
  if (long < 0n || long > BigInt(MAX_TIME_MS_MAX)) fail('QUERY_ERROR', `${long} value for maxTimeMS is out of range`, { field: 'maxTimeMS' });
  if (!Number.isInteger(v)) fail('QUERY_ERROR', 'maxTimeMS has non-integral value', { field: 'maxTimeMS' });
  return v;
}

/**
 * What stops one query: the lower of its maxTimeMS and the server's limit (either 0 or absent:
 * none), timed from now, and its client gone. MongoDB's words for a query past its time.
 * @throws QUERY_ERROR for a malformed maxTimeMS
 */
function queryInterrupt(maxTimeMS: unknown, guard: QueryGuard | undefined): Interrupt {
  const timeLimitMs = timeLimitOf(maxTimeMSOf(maxTimeMS), guard?.timeLimitMs);
  return interruptOf({ timeLimitMs, since: guard?.since, timedOut: timeLimitExceeded, client: guard?.client, clientGone: interrupted });
}

/** The time limit of a query: the lower of its maxTimeMS and the server's limit, where either is 0 or absent for none (0: none at all). */
export function timeLimitOf(maxTimeMS: number | undefined, serverLimitMs: number | undefined): number {
  const own = maxTimeMS ?? 0;
  const server = serverLimitMs ?? 0;
  return own > 0 && server > 0 ? Math.min(own, server) : Math.max(own, server);
}

/** MongoDB's MaxTimeMSExpired: a query past its time limit. @throws QUERY_ERROR */
export function timeLimitExceeded(timeLimitMs: number): never {
  fail('QUERY_ERROR', 'operation exceeded time limit', { maxTimeMS: timeLimitMs });
}

/** A cursor's interrupt (cursors.ts) with MongoDB's words: `maxTimeMS` over all its batches (0: none). */
export function newCursorInterrupt(maxTimeMS: number): CursorInterrupt {
  return new CursorInterrupt(maxTimeMS, timeLimitExceeded, interrupted);
}

// MongoDB's words for an operation killed (its client gone); nobody reads them but the log.
function interrupted(): never {
  fail('QUERY_ERROR', 'operation was interrupted: the client closed its connection');
}

/** Lookups a pipeline run remembers (see docsAggregate), and the bytes they may hold. */
const LOOKUP_MEMO_ENTRIES = 4096;
const LOOKUP_MEMO_BYTES = 16 * 1024 * 1024;

// Candidates handled per event-loop turn.
const CHUNK = 256;
// A cursor's sorted documents held in memory while it waits for its next getMore; more are spilled.
const CURSOR_SORT_HOLD_BYTES = 1024 * 1024;
// The read buffers of a cursor's spilled sort, over all its runs.
const CURSOR_MERGE_BYTES = 1024 * 1024;
// Documents a prefiltered collection scan reads per turn (or CHUNK candidates, whichever comes
// first): a rejected one costs ~0.3 µs, so a turn holds the loop well under a millisecond, and
// the turns themselves (~20 µs each) stay a small share of the scan.
const SCAN_CHUNK_READS = 2048;
const ID = '_id';

/** A write applied in memory; `durable` resolves once it is on disk. */
export interface Written<T> {
  readonly result: T;
  readonly durable: Promise<void>;
}

const DONE: Promise<void> = Promise.resolve();

function durableOf(write: Promise<unknown> | undefined): Promise<void> {
  return write === undefined ? DONE : write.then(() => undefined);
}

// ---- Options ------------------------------------------------------------------------------------

function integerOption(value: unknown, name: string, min: number, max: number, fallback: number): number {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    fail('VALIDATION_FAILED', `${name} must be an integer between ${min} and ${max}`, { field: name });
  }
  return value;
}

const NO_NAMES: ReadonlySet<string> = new Set();
/** The filters of find, count, distinct and the writes may hold a `$text` (other filters may not). */
const TEXT_ALLOWED = { text: true } as const;

/**
 * A find's projection: inclusions, exclusions and find's projection operators (projection.ts),
 * or, when it computes fields (MongoDB 4.4+), a $project stage's (its expressions see `$$NOW`,
 * one instant per request). find's own operators cannot join computed fields here.
 * @throws QUERY_ERROR for a malformed projection
 */
function compileFindProjection(spec: unknown, options: ProjectionOptions, lets?: LetVariables): CompiledProjection {
  const features = projectionFeatures(spec);
  if (!features.computed) return compileProjection(spec, options);
  if (features.findOperators) {
    fail('QUERY_ERROR', 'a projection that computes fields cannot also use $slice, $elemMatch, $meta or a positional \'$\' in tetradb: run the find as an aggregation ($match, $project) instead', { operator: 'projection' });
  }
  const transform = projectTransform(fromJson(spec, { code: 'QUERY_ERROR' }), lets?.names ?? NO_NAMES);
  const vars = lets?.scope ?? new Scope(new Map([['NOW', new Date()]]));
  const includesId = !(isPlainObject(spec) && (spec[ID] === 0 || spec[ID] === false));
  return { mode: 'inclusion', paths: [], includesId, apply: (doc) => transform.apply(doc, vars) };
}

/** The options of find; everything comes straight from the request and is validated here. */
export interface FindOptions {
  filter?: unknown;
  projection?: unknown;
  sort?: unknown;
  skip?: unknown;
  limit?: unknown;
  explain?: unknown;
  hint?: unknown;
  /** MongoDB's allowDiskUse: a sort past the memory bound spills (true, the default) or fails. */
  allowDiskUse?: unknown;
  /** MongoDB's maxTimeMS: milliseconds the find may run (0: no limit of its own). */
  maxTimeMS?: unknown;
  /** MongoDB's `let`: variables the filter's `$expr` and a computed projection read (let-variables.ts). */
  let?: unknown;
}

interface Query {
  readonly filter: CompiledFilter;
  readonly sort: CompiledSort;
  readonly skip: number;
  readonly limit: number;
  readonly hint?: Hint;
  /** The filter's `$text` search: each match gets its text score (text/text-score.ts). */
  readonly text?: TextSearch;
  /** The `$text` is a top-level condition (not inside an `$or`): every match matches the search. */
  readonly textAtTop?: boolean;
  readonly allowDiskUse: boolean;
}

/**
 * Gives a match of a `$text` query its text score; none to a match the search itself does not
 * match (another clause of its `$or` did), as MongoDB gives it no score metadata.
 */
function giveTextScore(text: TextSearch, atTop: boolean, doc: Doc): void {
  if (atTop || text.matches(doc)) setTextScore(doc, text.score(doc));
  else setNoTextScore(doc);
}

function compileQuery(options: FindOptions, defaultLimit: number, maxLimit: number, lets?: LetVariables): Query {
  const filter = bindFilter(compileFilter(options.filter ?? {}, lets?.names, TEXT_ALLOWED), lets);
  const sort = compileSort(options.sort ?? {}, { meta: true });
  const text = filterTextSearch(filter.ast);
  if (text === undefined && sort.keys.some((k) => k.meta !== undefined)) fail('QUERY_ERROR', TEXT_SCORE_UNAVAILABLE, { operator: '$meta' });
  return {
    filter,
    sort,
    skip: integerOption(options.skip, 'skip', 0, Number.MAX_SAFE_INTEGER, 0),
    limit: integerOption(options.limit, 'limit', 1, maxLimit, defaultLimit),
    hint: parseHint(options.hint),
    text,
    textAtTop: filterTextAtTop(filter.ast),
    allowDiskUse: allowDiskUseOf(options.allowDiskUse, 'FindCommandRequest'),
  };
}

// ---- Reading ------------------------------------------------------------------------------------

/** Counters of one read, for explain. */
interface Examined {
  keys: number;
  docs: number;
}

interface Candidate {
  readonly doc: Doc;
  readonly bytes: number;
  /**
   * Candidates read from stored bytes: the fields `reader` names, read without decoding the rest
   * (see FieldReader), or the document once decoded; undefined when it must be decoded whole.
   */
  fields?(reader: FieldReader): Doc | undefined;
  /** The candidate as a spill record (external-sort.ts), from its stored bytes when it still has them. */
  record?(): Buffer;
  /**
   * Keeps its stored bytes in a copy of their own rather than as a span of a page: a candidate
   * held past its read (a sort's) would otherwise keep the whole page alive, and a read that
   * cycles pages through the cache would hold a page per candidate (a cursor's sort of 500,000
   * documents held 1.9 GB so).
   */
  detach?(): void;
}

/**
 * A candidate decoded when its document is first read, from its stored bytes (in place in an
 * immutable page, or a copy): a find with a limit stops reading a chunk once it has enough, and
 * the candidates after that are never decoded (a find of {} with limit 1 decoded a whole chunk of
 * 256 documents).
 */
class LazyCandidate implements Candidate {
  readonly bytes: number;
  #buf: Buffer | undefined;
  #start: number;
  /** Counts the document as examined when it is first read (unless it was counted when scanned). */
  #examined: Examined | undefined;
  #doc: Doc | undefined;

  constructor(buf: Buffer, start: number, length: number, examined?: Examined) {
    this.#buf = buf;
    this.#start = start;
    this.bytes = length;
    this.#examined = examined;
  }

  /**
   * The fields `reader` names, read from the stored bytes without decoding the rest (see
   * FieldReader), or the document once decoded; undefined when it must be decoded whole.
   */
  fields(reader: FieldReader): Doc | undefined {
    if (this.#doc !== undefined) return this.#doc;
    this.#count();
    return reader.readAt(this.#buf!, this.#start, this.#start + this.bytes);
  }

  // Counts the document as examined once, when first read (in part or whole).
  #count(): void {
    if (this.#examined === undefined) return;
    this.#examined.docs++;
    this.#examined = undefined;
  }

  record(): Buffer {
    if (this.#doc !== undefined) return encodeSpilledDoc(this.#doc);
    const buf = this.#buf!;
    return encodeSpilledDoc(undefined, buf.subarray(this.#start, this.#start + this.bytes));
  }

  detach(): void {
    const buf = this.#buf;
    if (buf === undefined || (this.#start === 0 && buf.length === this.bytes)) return;
    this.#buf = Buffer.from(buf.subarray(this.#start, this.#start + this.bytes));
    this.#start = 0;
  }

  get doc(): Doc {
    if (this.#doc === undefined) {
      const buf = this.#buf!;
      this.#doc = decodeDocumentAt(buf, this.#start, this.#start + this.bytes);
      this.#buf = undefined; // the page is no longer held
      this.#count();
    }
    return this.#doc;
  }
}

/**
 * The candidate an index entry names, read from the collection (and counted as examined) when its
 * document or size is first asked for: a find that a limit stops reads no further document. Its
 * bytes are read in place (a span of their page), as are its fields and its decoding.
 */
class IndexedCandidate implements Candidate {
  readonly #read: (run: ValueRun) => void;
  #buf: Buffer | undefined;
  #start = 0;
  #length = 0;
  #doc: Doc | undefined;

  constructor(read: (run: ValueRun) => void) {
    this.#read = read;
  }

  #load(): Buffer {
    if (this.#buf === undefined) {
      const run = candidateRun;
      this.#read(run);
      this.#buf = run.bufs[0]!;
      this.#start = run.starts[0]!;
      this.#length = run.lengths[0]!;
    }
    return this.#buf;
  }

  get bytes(): number {
    this.#load();
    return this.#length;
  }

  fields(reader: FieldReader): Doc | undefined {
    if (this.#doc !== undefined) return this.#doc;
    const buf = this.#load();
    return reader.readAt(buf, this.#start, this.#start + this.#length);
  }

  get doc(): Doc {
    if (this.#doc === undefined) {
      const buf = this.#load();
      this.#doc = decodeDocumentAt(buf, this.#start, this.#start + this.#length);
    }
    return this.#doc;
  }

  record(): Buffer {
    const buf = this.#load();
    return encodeSpilledDoc(this.#doc, buf.subarray(this.#start, this.#start + this.#length));
  }

  detach(): void {
    const buf = this.#load();
    if (this.#start === 0 && buf.length === this.#length) return;
    this.#buf = Buffer.from(buf.subarray(this.#start, this.#start + this.#length));
    this.#start = 0;
  }
}

/** Where one-read finds and indexed candidates take a document's bytes in place (within one synchronous call). */
const candidateRun = new ValueRun();

/** The document that is `run`'s only entry (getInto), decoded in place. */
function runDocument(run: ValueRun): Doc {
  return decodeDocumentAt(run.bufs[0]!, run.starts[0]!, run.starts[0]! + run.lengths[0]!);
}

/** What candidate reads need of a store or a snapshot: point reads and ordered scans. */
type Reader = Pick<Snapshot, 'get' | 'getInto' | 'scan' | 'valueRuns'>;

/** The live store as a Reader, for reads consumed within the calling turn (scans without a snapshot). */
function liveReader(store: TenantStore): Reader {
  return { get: (tree, key) => store.get(tree, key), getInto: (tree, key, run) => store.getInto(tree, key, run), scan: (tree, range) => store.scanNow(tree, range), valueRuns: (tree, range) => store.valueRuns(tree, range) };
}

/**
 * A chunk of candidates; `more`: a full chunk was cut from a longer read, so the caller yields
 * the event loop before asking for the next one.
 */
interface Chunk {
  readonly candidates: Candidate[];
  readonly more: boolean;
}

/**
 * What a read does with the filter while it scans: documents the filter rejects are dropped after
 * reading only the fields it looks at (FieldReader); `whole: false` (count, update and delete,
 * which need only the filter's fields and `_id`) hands on those partial documents, `whole: true`
 * (find) decodes the ones that pass in full.
 */
interface ScanFilter {
  readonly filter: CompiledFilter;
  readonly whole: boolean;
  /** Not whole: further fields (dot paths) to decode besides the filter's (an aggregation's). */
  readonly extra?: readonly string[];
}

/** After this many documents read through a prefilter for whole documents, it is kept only if it rejected at least half. */
const PREFILTER_TRIAL = 512;

/** A ScanFilter applied to the stored documents of one read. */
class Prefilter {
  /** The fields a candidate carries on: the filter's, and for partial reads `_id` and the extra fields. */
  readonly #reader: FieldReader;
  /**
   * Partial reads whose handed-on fields go beyond the filter's: the filter's fields alone, read
   * first, so a rejected document costs only those (an aggregation's `_id` and group fields are
   * read for the documents that pass). Undefined when the filter's fields are all there is to read.
   */
  #testReader: FieldReader | undefined;
  readonly #test: (doc: Doc) => boolean;
  readonly #whole: boolean;
  #tried = 0;
  #passed = 0;
  #off = false;

  constructor(scan: ScanFilter) {
    const fields = filterPaths(scan.filter.ast);
    // A filter that reads no field passes every document: nothing to gain for whole ones. One
    // whose $expr may read any field cannot be tested on some fields; one drawing random numbers
    // ($rand) is tested once, by the reader of the candidates (a second draw would filter twice).
    if ((scan.whole && fields.length === 0) || filterReadsAll(scan.filter.ast) || filterIsVolatile(scan.filter.ast)) this.#off = true;
    if (!scan.whole && fields.length > 0) this.#testReader = new FieldReader(fields);
    // Partial documents handed on carry `_id` and the fields asked for whole.
    this.#reader = new FieldReader(scan.whole ? fields : [...fields, ID, ...(scan.extra ?? [])]);
    this.#test = scan.filter.test;
    this.#whole = scan.whole;
  }

  /**
   * The candidate of the stored document in bytes [start, start + length) of `buf` (a leaf's
   * page, read in place: a Buffer is made only for a document that passes), or undefined when the
   * filter rejects it.
   */
  candidateAt(buf: Buffer, start: number, length: number, examined?: Examined): Candidate | undefined {
    const whole = (): Doc => decodeDocumentAt(buf, start, start + length);
    // Nothing to test: read (and count) only when the reader asks for the document.
    if (this.#off) return new LazyCandidate(buf, start, length, examined);
    if (examined !== undefined) examined.docs++;
    const end = start + length;
    const tester = this.#testReader; // #count may drop it: this document was read by it
    const probe = (tester ?? this.#reader).readAt(buf, start, end);
    if (probe === undefined) return new LazyCandidate(buf, start, length);
    if (!this.#test(probe)) {
      this.#count(false);
      return undefined;
    }
    this.#count(true);
    if (this.#whole) return new LazyCandidate(buf, start, length);
    return { doc: tester === undefined ? probe : (this.#reader.readAt(buf, start, end) ?? whole()), bytes: length };
  }

  /** candidateAt of a whole stored document. */
  candidate(raw: Buffer): Candidate | undefined {
    return this.candidateAt(raw, 0, raw.length);
  }

  // A filter most documents pass makes each document read twice (its fields, then all of it, or
  // all it hands on): past the trial, such a prefilter reads once (whole documents: decodes them
  // whole; partial ones: reads every field it hands on, then tests).
  #count(passed: boolean): void {
    if (this.#tried > PREFILTER_TRIAL) return;
    this.#tried++;
    if (passed) this.#passed++;
    if (this.#tried !== PREFILTER_TRIAL || this.#passed * 2 <= PREFILTER_TRIAL) return;
    if (this.#whole) this.#off = true;
    else this.#testReader = undefined;
  }
}

/**
 * The documents a plan names, in chunks of up to CHUNK reads, synchronously, from `reader`. With
 * `scan`, a collection scan (a primary plan over ranges), and an index plan of a read that needs
 * only the filter's fields, drop the documents the filter rejects (they never reach the chunk,
 * though they count as read and examined).
 */
function* candidateChunks(reader: Reader, info: CollectionInfo, plan: Plan, examined: Examined, scan?: ScanFilter): Generator<Chunk> {
  const tree = docsTree(info);
  switch (plan.kind) {
    case 'empty':
      return;
    case 'primary': {
      const prefilter = scan !== undefined && !plan.points ? new Prefilter(scan) : undefined;
      if (prefilter !== undefined) {
        yield* prefilteredScan(reader, tree, plan, prefilter, examined);
        return;
      }
      let chunk: Candidate[] = [];
      let reads = 0;
      for (const raw of primaryReads(reader, tree, plan, examined)) {
        examined.docs++;
        chunk.push({ doc: decodeDocument(raw), bytes: raw.length });
        if (++reads >= CHUNK) {
          yield { candidates: chunk, more: true };
          chunk = [];
          reads = 0;
        }
      }
      if (chunk.length > 0) yield { candidates: chunk, more: false };
      return;
    }
    case 'index': {
      const seen = plan.dedupe ? new Set<string>() : undefined;
      const ranges = plan.reverse ? [...plan.ranges].reverse() : plan.ranges;
      // Reads that need only the filter's fields (count, update, delete) read just those of each
      // indexed document too; a find's candidates mostly match (the index bounds its filter), so
      // they are decoded whole at once.
      const prefilter = scan !== undefined && !scan.whole ? new Prefilter(scan) : undefined;
      const take = (chunk: Candidate[], pk: Buffer): void => {
        if (prefilter === undefined) {
          chunk.push(new IndexedCandidate((run) => indexedInto(reader, tree, info, plan, pk, examined, run)));
          return;
        }
        const c = prefilter.candidate(indexedRaw(reader, tree, info, plan, pk, examined));
        if (c !== undefined) chunk.push(c);
      };
      for (const range of ranges) {
        let chunk: Candidate[] = [];
        let keys = 0;
        for (const [, pk] of reader.scan(indexTree(info, plan.index), { ...range, reverse: plan.reverse })) {
          examined.keys++;
          keys++;
          if (seen !== undefined) {
            const id = pk.toString('latin1');
            if (!seen.has(id)) {
              seen.add(id);
              take(chunk, pk);
            }
          } else {
            take(chunk, pk);
          }
          if (keys >= CHUNK) {
            yield { candidates: chunk, more: true };
            chunk = [];
            keys = 0;
          }
        }
        if (chunk.length > 0) yield { candidates: chunk, more: false };
      }
      return;
    }
    case 'or': {
      // Each document once, whichever read finds it first (the text index's, planned first).
      const seen = new Set<string>();
      let chunk: Candidate[] = [];
      let keys = 0;
      for (const child of plan.children) {
        for (const [pk, stored] of readPlanEntries(reader, tree, info, child, examined)) {
          const id = pk.toString('latin1');
          if (!seen.has(id)) {
            seen.add(id);
            const raw = stored ?? indexedRaw(reader, tree, info, child as Plan & { kind: 'index' }, pk, examined);
            if (stored !== undefined) examined.docs++;
            chunk.push({ doc: decodeDocument(raw), bytes: raw.length });
          }
          if (++keys >= CHUNK) {
            yield { candidates: chunk, more: true };
            chunk = [];
            keys = 0;
          }
        }
      }
      if (chunk.length > 0) yield { candidates: chunk, more: false };
      return;
    }
    default: {
      const never: never = plan;
      return never;
    }
  }
}

/**
 * The entries one read of an `or` plan names: each document's primary key, with its stored bytes
 * when the read is of the collection's own tree (undefined for an index's: read if it is new).
 */
function* readPlanEntries(reader: Reader, tree: string, info: CollectionInfo, plan: ReadPlan, examined: Examined): Generator<[Buffer, Buffer | undefined]> {
  if (plan.kind === 'index') {
    for (const range of plan.ranges) {
      for (const [, pk] of reader.scan(indexTree(info, plan.index), range)) {
        examined.keys++;
        yield [pk, undefined];
      }
    }
    return;
  }
  for (const range of plan.ranges) {
    if (plan.points) {
      examined.keys++;
      const raw = reader.get(tree, range.gte!);
      if (raw !== undefined) yield [Buffer.from(range.gte!), raw];
      continue;
    }
    for (const [pk, raw] of reader.scan(tree, { ...range, reverse: plan.reverse })) {
      examined.keys++;
      yield [pk, raw];
    }
  }
}

/**
 * A collection scan through a prefilter: the documents are read a leaf at a time, in place in
 * their pages (TreeReader.valueRuns), so a document the filter rejects costs no Buffer, no key
 * and no decode beyond the fields the filter reads. A chunk ends at CHUNK candidates or
 * SCAN_CHUNK_READS documents read, mid-leaf if need be.
 */
function* prefilteredScan(reader: Reader, tree: string, plan: Plan & { kind: 'primary' }, prefilter: Prefilter, examined: Examined): Generator<Chunk> {
  let chunk: Candidate[] = [];
  let reads = 0;
  for (const range of plan.ranges) {
    for (const run of reader.valueRuns(tree, { ...range, reverse: plan.reverse })) {
      const { bufs, starts, lengths } = run;
      for (let i = 0; i < run.count; i++) {
        examined.keys++;
        const c = prefilter.candidateAt(bufs[i]!, starts[i]!, lengths[i]!, examined);
        if (c !== undefined) chunk.push(c);
        if (++reads >= SCAN_CHUNK_READS || chunk.length >= CHUNK) {
          // Mid-run is fine: the run's pages are immutable and the scan does not move on meanwhile.
          yield { candidates: chunk, more: true };
          chunk = [];
          reads = 0;
        }
      }
    }
  }
  if (chunk.length > 0) yield { candidates: chunk, more: false };
}

/** The stored documents a primary plan names: point reads of `_id`s, or scans of `_id` ranges. */
function* primaryReads(reader: Reader, tree: string, plan: Plan & { kind: 'primary' }, examined: Examined): Generator<Buffer> {
  for (const range of plan.ranges) {
    if (plan.points) {
      examined.keys++;
      const raw = reader.get(tree, range.gte!);
      if (raw !== undefined) yield raw;
      continue;
    }
    for (const [, raw] of reader.scan(tree, { ...range, reverse: plan.reverse })) {
      examined.keys++;
      yield raw;
    }
  }
}

/** The stored document an index entry names. @throws CORRUPTION when it is missing */
function indexedRaw(reader: Reader, tree: string, info: CollectionInfo, plan: Plan & { kind: 'index' }, pk: Buffer, examined: Examined): Buffer {
  const raw = reader.get(tree, pk);
  if (raw === undefined) missingDocument(info, plan.index);
  examined.docs++;
  return raw;
}

/** indexedRaw in place: the document's bytes become `run`'s only entry. */
function indexedInto(reader: Reader, tree: string, info: CollectionInfo, plan: Plan & { kind: 'index' }, pk: Buffer, examined: Examined, run: ValueRun): void {
  if (!reader.getInto(tree, pk, run)) missingDocument(info, plan.index);
  examined.docs++;
}

function missingDocument(info: CollectionInfo, index: IndexInfo): never {
  fail('CORRUPTION', `index ${index.name} of collection ${info.name} names a missing document`);
}

/** The documents a plan names, in chunks, on `snapshot`, yielding the event loop between chunks. */
async function* candidates(snapshot: Snapshot, info: CollectionInfo, plan: Plan, examined: Examined, scan: ScanFilter | undefined, interrupt: Interrupt): AsyncGenerator<Candidate[]> {
  for (const chunk of candidateChunks(snapshot, info, plan, examined, scan)) {
    yield chunk.candidates;
    if (!chunk.more) continue;
    await nextTurn();
    // What stops the query is noticed here: a time limit or a client gone cannot act while it runs.
    interrupt.check();
  }
}

/**
 * The best `keep` candidates of a find whose plan does not give its sort. Past the query's memory
 * bound it spills (allowDiskUse, external-sort.ts): offer marks it due, and the caller, between
 * chunks, writes the best `keep` held as a sorted run (spill); result then merges the runs.
 */
class TopK {
  #docs: Array<{ c: Candidate; keys: unknown[] }> = [];
  #bytes = 0;
  /** After a trim that kept `keep`: the keys of the last one kept. A later candidate that does not sort before it can never be kept. */
  #worst: unknown[] | undefined;
  readonly #keep: number;
  readonly #sort: CompiledSort;
  readonly #memory: QueryMemory;
  #file: SpillFile | undefined;
  readonly #runs: SpillRun[] = [];

  constructor(keep: number, sort: CompiledSort, memory: QueryMemory) {
    this.#keep = keep;
    this.#sort = sort;
    this.#memory = memory;
  }

  /** True when what it holds is past the memory bound: spill before offering more. */
  get due(): boolean {
    return this.#bytes > this.#memory.maxBlockingBytes;
  }

  /** `keyDoc`: the document, or the part of it holding the sort's paths. @throws QUERY_ERROR past the bound when it may not spill */
  offer(c: Candidate, keyDoc: Doc = c.doc): void {
    // Each candidate's sort keys are computed once (a comparison would otherwise walk both
    // documents' paths again), and one that cannot make the cut is dropped at once (ties keep the
    // order they came in: a later one ranks after the one it ties with).
    const keys = this.#sort.keyOf(keyDoc);
    if (this.#worst !== undefined && this.#sort.compareKeyed(keys, this.#worst) >= 0) return;
    c.detach?.();
    this.#docs.push({ c, keys });
    this.#bytes += c.bytes;
    if (this.#docs.length >= Math.max(2 * this.#keep, 1024)) this.#trim();
    // Past the bound, what is past `keep` goes first: only `keep` documents that do not fit spill.
    if (this.due && this.#docs.length > this.#keep) this.#trim();
    if (this.due && this.#memory.spill === undefined) {
      const limit = this.#memory.maxBlockingBytes;
      if (!this.#memory.allowDiskUse) refuseSort(this.#memory, 'find');
      fail('QUERY_ERROR', `sort exceeded the memory limit of ${limit} bytes: add an index on the sort fields, filter more narrowly, or lower skip + limit`, { limit });
    }
  }

  #trim(): void {
    // A stable sort keeps ties in the order they came (the plan's order), as sortDocuments does.
    const sort = this.#sort;
    this.#docs.sort((a, b) => sort.compareKeyed(a.keys, b.keys));
    const dropped = this.#docs.splice(this.#keep);
    for (const d of dropped) this.#bytes -= d.c.bytes;
    if (this.#docs.length === this.#keep && this.#keep > 0) this.#worst = this.#docs[this.#keep - 1]!.keys;
  }

  /** Writes the best `keep` held as a sorted run and holds nothing (the query's spill space must be there). */
  async spill(): Promise<void> {
    this.#trim();
    const docs = this.#docs;
    this.#docs = [];
    this.#bytes = 0;
    if (docs.length === 0) return;
    this.#file ??= await this.#memory.spill!.create();
    this.#runs.push(await writeRun(this.#file, docs.map((d) => (d.c.record === undefined ? encodeSpilledDoc(d.c.doc) : d.c.record()))));
  }

  /** The best `keep` in order, when nothing was spilled. */
  result(): Candidate[] {
    this.#trim();
    return this.#docs.map((d) => d.c);
  }

  /**
   * The best `keep` in order, one at a time (a cursor's sort): held in memory up to `holdBytes`,
   * else spilled first (when it may spill) and merged through buffers of `mergeBytes` in all; the
   * spill file is removed once read, or when the reader stops early.
   */
  async *stream(holdBytes: number, mergeBytes: number): AsyncGenerator<Candidate> {
    if (this.#file === undefined && this.#bytes > holdBytes && this.#memory.spill !== undefined) await this.spill();
    if (this.#file === undefined) {
      yield* this.result();
      return;
    }
    yield* this.#merged(this.#file, mergeBytes);
  }

  /** The best `keep` of the spilled runs and what is held (spilled last), merged through buffers of `mergeBytes`; the file is removed once read, or when the reader stops early. */
  async *#merged(file: SpillFile, mergeBytes: number): AsyncGenerator<Candidate> {
    try {
      await this.spill();
      const sort = this.#sort;
      const merged = mergeRuns(file, this.#runs, (rec) => {
        const doc = decodeSpilledDoc(rec);
        return { item: { doc, bytes: rec.length }, key: sort.keyOf(doc) };
      }, (a, b) => sort.compareKeyed(a, b), mergeBytes);
      let n = 0;
      if (this.#keep > 0) {
        for await (const c of merged) {
          yield c;
          if (++n >= this.#keep) break;
        }
      }
    } finally {
      await file.remove();
    }
  }

  /** result, merging the spilled runs (and what is held) when it spilled; the spill file is then removed. */
  async resultAfterSpill(): Promise<Candidate[]> {
    if (this.#file === undefined) return this.result();
    const out: Candidate[] = [];
    for await (const c of this.#merged(this.#file, this.#memory.maxBlockingBytes)) out.push(c);
    return out;
  }
}

// Decoded catalog entries for reads, per store, reused while the stored bytes are the same.
// Writers read the catalog afresh (they change the info they read).
const catalogCache = new WeakMap<TenantStore, Map<string, { bytes: Buffer; info: CollectionInfo; version: number }>>();
const CATALOG_CACHE_ENTRIES = 64;

/**
 * The collection as `snapshot` (or the store itself) sees it, decoded once per version. Read-only
 * for the caller. A read of the live store takes the entry without reading the catalog while the
 * catalog tree is unchanged (TenantStore.treeVersion); otherwise the stored bytes decide.
 */
function readCollectionCached(store: TenantStore, snapshot: Pick<Snapshot, 'get' | 'scan'>, name: string): CollectionInfo | undefined {
  let cache = catalogCache.get(store);
  if (cache === undefined) catalogCache.set(store, (cache = new Map()));
  const hit = cache.get(name);
  const version = snapshot === store ? store.treeVersion(CATALOG_TREE) : -1;
  if (hit !== undefined && version > 0 && hit.version === version) return hit.info;
  const raw = snapshot.get(CATALOG_TREE, Buffer.from(name));
  if (raw === undefined) return undefined;
  if (hit !== undefined && hit.bytes.equals(raw)) {
    if (version > 0) hit.version = version;
    return hit.info;
  }
  const info = readCollection(snapshot, name)!;
  if (cache.size >= CATALOG_CACHE_ENTRIES) cache.delete(cache.keys().next().value!);
  cache.set(name, { bytes: Buffer.from(raw), info, version });
  return info;
}

/**
 * The collection as the live store has it, for a write: a copy of the cached entry
 * (readCollectionCached) with its index objects copied too, since a write sets their flags
 * (entriesOf: multikey, lossy) and a write that fails must leave the cached entry as stored.
 * Copying a few objects costs a fraction of decoding the entry (~2.7 µs with three indexes),
 * which every write did, some twice.
 */
function collectionToWrite(store: TenantStore, name: string): CollectionInfo | undefined {
  const info = readCollectionCached(store, store, name);
  return info === undefined ? undefined : { ...info, indexes: info.indexes.map((index) => ({ ...index })) };
}

/** The trees a read of `info` may touch: its documents and its indexes. */
function treesOf(info: CollectionInfo): string[] {
  return [docsTree(info), ...info.indexes.map((index) => indexTree(info, index))];
}

/**
 * Runs `fn` with the collection's catalog entry and a fresh snapshot of its trees only (the
 * entry is read in the same turn the snapshot is taken, so both show one state), closing the
 * snapshot afterwards; `fn` gets no snapshot when the collection does not exist.
 */
async function onCollectionSnapshot<T>(store: TenantStore, name: string, fn: (info: CollectionInfo | undefined, snapshot: Snapshot | undefined) => Promise<T>): Promise<T> {
  const info = readCollectionCached(store, store, name);
  if (info === undefined) return fn(undefined, undefined);
  const snapshot = store.snapshot(treesOf(info));
  try {
    return await fn(info, snapshot);
  } finally {
    snapshot.close();
  }
}

/** What find returns: documents (with Date values; the route renders Extended JSON) and, when asked, the plan. */
export interface FindResult {
  documents: Doc[];
  explain?: Record<string, unknown>;
}

/** A find's defaults: its limit, the server's memory settings (the sort's bound, the spill area), and what else may stop it. */
export interface FindDefaults {
  limit?: number;
  memory?: MemorySettings;
  guard?: QueryGuard;
}

/**
 * Documents of `collection` matching the filter, sorted, skipped, limited and projected.
 * @throws VALIDATION_FAILED for a bad collection name, skip or limit
 * @throws QUERY_ERROR for a bad filter, sort or projection, or a result or sort past its memory bound
 */
export async function docsFind(store: TenantStore, collection: unknown, options: FindOptions, defaults: FindDefaults = {}): Promise<FindResult> {
  return docsFindNow(store, collection, options, defaults);
}

/**
 * docsFind, answering in the calling turn when it can: a find by `_id`, or one whose plan reads
 * at most a chunk, comes back as a value (no turn of the microtask queue); a longer one as a
 * promise. Errors always come as a rejected promise, never thrown.
 */
export function docsFindNow(store: TenantStore, collection: unknown, options: FindOptions, defaults: FindDefaults = {}): FindResult | Promise<FindResult> {
  let name: string;
  let query: Query;
  let projection: CompiledProjection;
  let explain: boolean;
  let memory: QueryMemory;
  try {
    name = validateCollectionName(collection);
    // A find with `let` takes the general path: its variables may reach the projection.
    const lets = compileLet(options.let, 'FindCommandRequest');
    const plain = lets === undefined ? plainEquality(options) : undefined;
    if (plain !== undefined) {
      if (plain.field === ID) return findById(store, name, plain.value, options);
      const found = findByIndexedEquality(store, name, plain.field, plain.value, options, defaults);
      if (found !== undefined) return found;
    }
    query = compileQuery(options, defaults.limit ?? DOCS_MODEL_LIMITS.defaultFindLimit, DOCS_MODEL_LIMITS.maxFindLimit, lets);
    const ast = query.filter.ast;
    projection = compileFindProjection(options.projection, { filter: () => ast }, lets);
    if (projection.textScore === true && query.text === undefined) fail('QUERY_ERROR', TEXT_SCORE_UNAVAILABLE, { operator: '$meta' });
    explain = options.explain === true;
    if (options.explain !== undefined && typeof options.explain !== 'boolean') fail('VALIDATION_FAILED', 'explain must be a boolean', { field: 'explain' });
    memory = queryMemory(defaults.memory, query.allowDiskUse, queryInterrupt(options.maxTimeMS, defaults.guard));
    if (!explain) {
      // Most finds read a few entries: answered in this turn from the live store (consistent by
      // itself: nothing else runs meanwhile), without a snapshot or a turn per chunk. Its spill
      // space holds no file yet: a sort that would spill starts again on a snapshot.
      const quick = findInOneTurn(store, name, query, projection, memory);
      if (quick !== undefined) return { documents: quick };
    }
  } catch (err) {
    return Promise.reject(err);
  }
  return findOnSnapshot(store, name, query, projection, explain, memory);
}

/** The rest of a find that did not fit in one turn: on a snapshot, a chunk per turn. */
async function findOnSnapshot(store: TenantStore, name: string, query: Query, projection: CompiledProjection, explain: boolean, memory: QueryMemory): Promise<FindResult> {
  try {
    return await onCollectionSnapshot(store, name, (info, snapshot) => findOnSnapshotWith(store, info, snapshot, name, query, projection, explain, memory));
  } finally {
    // However the find ends (a failure, the snapshot's expiry), its spill files go.
    await memory.spill?.close();
  }
}

async function findOnSnapshotWith(store: TenantStore, info: CollectionInfo | undefined, snapshot: Snapshot | undefined, name: string, query: Query, projection: CompiledProjection, explain: boolean, memory: QueryMemory): Promise<FindResult> {
  const plan = planQuery(info, query.filter.ast, query.sort.keys, query.hint, query.filter.vars);
  if (info !== undefined && !explain) countPlanReads(store, info, plan);
    const examined: Examined = { keys: 0, docs: 0 };
    const collector = new FindCollector(query, projection, plan, memory);
    if (info !== undefined && snapshot !== undefined) {
      for await (const chunk of candidates(snapshot, info, plan, examined, { filter: query.filter, whole: true }, memory.interrupt!)) {
        if (collector.offer(chunk)) break;
        // Past the memory bound between chunks: the sort's best go to disk (allowDiskUse).
        if (collector.due) await collector.spill();
      }
    }
    const out = await collector.documentsAfterSpill();
    const result: FindResult = { documents: out };
    if (explain) {
      result.explain = { collection: name, plan: describePlan(plan), inMemorySort: plan.kind !== 'empty' && !plan.sorted, keysExamined: examined.keys, docsExamined: examined.docs, nReturned: out.length };
    }
    return result;
}

/**
 * A find opened as a cursor (MongoDB's find with a batchSize): validated and compiled as docsFind
 * does, on a snapshot taken now, its documents handed out a batch at a time by a CursorRegistry.
 * `limit` is 0 or absent for no limit (MongoDB's), else at most Number.MAX_SAFE_INTEGER; explain
 * is refused. Every batch reads the snapshot: the collection as it was when the find began.
 * @throws VALIDATION_FAILED, QUERY_ERROR as docsFind
 */
export function docsFindCursor(store: TenantStore, collection: unknown, options: FindOptions, defaults: FindDefaults = {}): OpenedCursor {
  const name = validateCollectionName(collection);
  if (options.explain !== undefined) fail('VALIDATION_FAILED', 'explain cannot be combined with batchSize (a cursor): explain the find without it', { field: 'explain' });
  const lets = compileLet(options.let, 'FindCommandRequest');
  const limit = integerOption(options.limit, 'limit', 0, Number.MAX_SAFE_INTEGER, 0);
  // The rest compiled as a find's; its limit (checked above, 0 for none) replaces compileQuery's.
  const query: Query = { ...compileQuery({ ...options, limit: undefined }, 1, 1, lets), limit: limit === 0 ? Infinity : limit };
  const ast = query.filter.ast;
  const projection = compileFindProjection(options.projection, { filter: () => ast }, lets);
  if (projection.textScore === true && query.text === undefined) fail('QUERY_ERROR', TEXT_SCORE_UNAVAILABLE, { operator: '$meta' });
  const interrupt = newCursorInterrupt(maxTimeMSOf(options.maxTimeMS) ?? 0);
  const memory = queryMemory(defaults.memory, query.allowDiskUse, interrupt);
  const info = readCollectionCached(store, store, name);
  const snapshot = info === undefined ? undefined : store.snapshot(treesOf(info));
  async function* batches(): AsyncGenerator<Doc[]> {
    if (info === undefined || snapshot === undefined) return;
    const plan = planQuery(info, query.filter.ast, query.sort.keys, query.hint, query.filter.vars);
    countPlanReads(store, info, plan);
    const collector = new FindCollector(query, projection, plan, memory);
    for await (const chunk of candidates(snapshot, info, plan, { keys: 0, docs: 0 }, { filter: query.filter, whole: true }, interrupt)) {
      const done = collector.offer(chunk);
      const out = collector.drain();
      if (out.length > 0) yield out;
      if (done) return;
      if (collector.due) await collector.spill();
    }
    yield* collector.sortedBatches();
  }
  return {
    collection: name,
    interrupt,
    source: {
      batches: batches(),
      async close() {
        snapshot?.close();
        await memory.spill?.close();
      },
    },
  };
}

/**
 * A find whose plan reads at most one chunk, answered synchronously from the live store; undefined
 * when the read turns out longer (it is then run again on a snapshot, a chunk per turn: at most one
 * chunk's reads are spent twice).
 */
function findInOneTurn(store: TenantStore, name: string, query: Query, projection: CompiledProjection, memory: QueryMemory): Doc[] | undefined {
  const info = readCollectionCached(store, store, name);
  if (info === undefined) return [];
  const plan = planQuery(info, query.filter.ast, query.sort.keys, query.hint, query.filter.vars);
  const out = findPlanInOneTurn(store, info, plan, query, projection, memory);
  // Counted once the find is answered here (otherwise the snapshot's run counts it).
  if (out !== undefined) countPlanReads(store, info, plan);
  return out;
}

function findPlanInOneTurn(store: TenantStore, info: CollectionInfo, plan: Plan, query: Query, projection: CompiledProjection, memory: QueryMemory): Doc[] | undefined {
  const collector = new FindCollector(query, projection, plan, memory);
  if (plan.kind === 'index') return indexFindInOneTurn(store, info, plan, collector);
  const live = liveReader(store);
  for (const chunk of candidateChunks(live, info, plan, { keys: 0, docs: 0 }, { filter: query.filter, whole: true })) {
    if (collector.offer(chunk.candidates)) break;
    // A sort that must spill does so on a snapshot (writing takes turns).
    if (chunk.more || collector.due) return undefined;
  }
  return collector.documents();
}

/**
 * findInOneTurn for an index plan: the documents its index entries name, range by range, each
 * range's entries (their values, the documents' keys) read in one synchronous call rather than
 * through iterators; the same chunks, in the same order, as candidateChunks offers. Undefined when
 * a range holds more than a chunk and the collector still wants more.
 */
function indexFindInOneTurn(store: TenantStore, info: CollectionInfo, plan: Plan & { kind: 'index' }, collector: FindCollector): Doc[] | undefined {
  const tree = docsTree(info);
  const index = indexTree(info, plan.index);
  const seen = plan.dedupe ? new Set<string>() : undefined;
  const examined: Examined = { keys: 0, docs: 0 };
  const ranges = plan.ranges;
  for (let r = 0; r < ranges.length; r++) {
    const range = ranges[plan.reverse ? ranges.length - 1 - r : r]!;
    const pks: Buffer[] = [];
    const more = store.valuesNow(index, plan.reverse ? { ...range, reverse: true } : range, CHUNK, pks);
    for (const pk of pks) {
      if (seen !== undefined) {
        const id = pk.toString('latin1');
        if (seen.has(id)) continue;
        seen.add(id);
      }
      // One at a time: the documents after the last one a limit takes are not read.
      if (collector.offerOne(new IndexedCandidate((run) => indexedInto(store, tree, info, plan, pk, examined, run)))) return collector.documents();
      if (collector.due) return undefined;
    }
    if (more) return undefined;
  }
  return collector.documents();
}

/** A find's filter, sort, skip, limit, result bound and projection, applied to candidates as they come. */
class FindCollector {
  readonly #query: Query;
  readonly #projection: CompiledProjection;
  /** Set when the plan does not give the sort order: every match is kept, the best ones returned. */
  readonly #top: TopK | undefined;
  /**
   * With #top, the filter's and the sort's fields: a stored candidate (of a scan or an index read)
   * is tested and ranked on those alone, and decoded whole only if it is among the best at the end
   * (a top 10 of a scan, or of an index read of many entries, decoded every document). Undefined
   * when the filter may read any field or draws random numbers, or for a text search (its score is
   * kept with the whole document).
   */
  readonly #keyReader: FieldReader | undefined;
  /**
   * Without #top, for a skip: the filter's fields, on which the candidates to skip are tested
   * without decoding them whole (skip/limit paging decoded every document it skipped: ~2 µs each).
   */
  readonly #skipReader: FieldReader | undefined;
  #out: Doc[] = [];
  #skipped = 0;
  #taken = 0;
  #bytes = 0;

  constructor(query: Query, projection: CompiledProjection, plan: Plan, memory: QueryMemory) {
    this.#query = query;
    this.#projection = projection;
    this.#top = plan.kind !== 'empty' && !plan.sorted ? new TopK(query.skip + query.limit, query.sort, memory) : undefined;
    const ast = query.filter.ast;
    const partial = this.#top !== undefined && query.text === undefined && !filterReadsAll(ast) && !filterIsVolatile(ast);
    this.#keyReader = partial ? new FieldReader([...filterPaths(ast), ...query.sort.keys.map((k) => k.path)]) : undefined;
    const skipsInPart = this.#top === undefined && query.skip > 0 && query.text === undefined && !filterReadsAll(ast) && !filterIsVolatile(ast);
    this.#skipReader = skipsInPart ? new FieldReader(filterPaths(ast)) : undefined;
  }

  /** Takes a chunk of candidates, in order, stopping (and reading no more of them) once no more are needed; true then. */
  offer(chunk: readonly Candidate[]): boolean {
    for (const c of chunk) if (this.offerOne(c)) return true;
    return false;
  }

  /** Takes one candidate; true once no more are needed. */
  offerOne(c: Candidate): boolean {
    const query = this.#query;
    if (this.#keyReader !== undefined && c.fields !== undefined) {
      // The filter matches these fields exactly when it matches the whole document.
      const part = c.fields(this.#keyReader);
      if (part !== undefined) {
        if (query.filter.test(part)) this.#top!.offer(c, part);
        return false;
      }
    }
    if (this.#skipReader !== undefined && this.#skipped < query.skip && c.fields !== undefined) {
      // The filter matches these fields exactly when it matches the whole document.
      const part = c.fields(this.#skipReader);
      if (part !== undefined) {
        if (query.filter.test(part)) this.#skipped++;
        return false;
      }
    }
    if (!query.filter.test(c.doc)) return false;
    if (query.text !== undefined) giveTextScore(query.text, query.textAtTop === true, c.doc);
    if (this.#top !== undefined) {
      this.#top.offer(c);
      return false;
    }
    if (this.#skipped < query.skip) {
      this.#skipped++;
      return false;
    }
    this.#take(c);
    return this.#taken >= query.limit;
  }

  /** True when its sort holds more than the memory bound: spill (or, in one turn, start again on a snapshot) before offering more. */
  get due(): boolean {
    return this.#top?.due === true;
  }

  /** Writes what its sort holds to the query's spill space (only when due). */
  spill(): Promise<void> {
    return this.#top!.spill();
  }

  /** The result, once the candidates are all offered (call once), when nothing was spilled. */
  documents(): Doc[] {
    if (this.#top !== undefined) for (const c of this.#top.result().slice(this.#query.skip)) this.#take(c);
    return this.#out;
  }

  /** documents, merging what the sort spilled. */
  async documentsAfterSpill(): Promise<Doc[]> {
    if (this.#top !== undefined) for (const c of (await this.#top.resultAfterSpill()).slice(this.#query.skip)) this.#take(c);
    return this.#out;
  }

  /** A cursor's read: the documents taken since the last drain (their bytes no longer count against the result's bound). */
  drain(): Doc[] {
    const out = this.#out;
    this.#out = [];
    this.#bytes = 0;
    return out;
  }

  /**
   * A cursor's read, once the candidates are all offered: the sort's documents after the skip, a
   * chunk at a time, merged from the spill file when the sort spilled. What the sort holds past
   * CURSOR_SORT_HOLD_BYTES is spilled first (when the query may spill), so an idle cursor holds
   * only the merge's buffers.
   */
  async *sortedBatches(): AsyncGenerator<Doc[]> {
    if (this.#top === undefined) return;
    let batch: Doc[] = [];
    for await (const c of this.#top.stream(CURSOR_SORT_HOLD_BYTES, CURSOR_MERGE_BYTES)) {
      if (this.#skipped < this.#query.skip) {
        this.#skipped++;
        continue;
      }
      batch.push(this.#projection.mode === 'all' ? c.doc : this.#projection.apply(c.doc));
      if (batch.length >= CHUNK) {
        yield batch;
        batch = [];
      }
    }
    if (batch.length > 0) yield batch;
  }

  #take(c: Candidate): void {
    this.#taken++;
    this.#bytes += c.bytes;
    if (this.#bytes > DOCS_MODEL_LIMITS.maxResultBytes) {
      fail('QUERY_ERROR', `the result exceeds ${DOCS_MODEL_LIMITS.maxResultBytes} bytes: lower limit, filter more narrowly or project fewer fields`, { limit: DOCS_MODEL_LIMITS.maxResultBytes });
    }
    // A candidate is decoded for this query alone: with nothing to project it is returned as is.
    this.#out.push(this.#projection.mode === 'all' ? c.doc : this.#projection.apply(c.doc));
  }
}

/**
 * The one field and value of a find that is a plain equality (`{<field>: <string|number|boolean>}`,
 * no sort, skip, hint or explain): the shape answered without compiling the filter or planning,
 * by `_id` (findById) or through an index on the field alone (findByIndexedEquality); undefined
 * otherwise.
 */
function plainEquality(options: FindOptions): { field: string; value: string | number | boolean } | undefined {
  const filter = options.filter;
  if (!isPlainObject(filter) || (options.explain !== undefined && options.explain !== false) || options.hint !== undefined || (options.skip !== undefined && options.skip !== 0)) return undefined;
  // A bad allowDiskUse is refused by compileQuery, as for any find.
  if (options.allowDiskUse !== undefined && typeof options.allowDiskUse !== 'boolean') return undefined;
  if (options.sort !== undefined && !(isPlainObject(options.sort) && Object.keys(options.sort).length === 0)) return undefined;
  const keys = Object.keys(filter);
  if (keys.length !== 1) return undefined;
  const field = keys[0]!;
  const value = filter[field];
  return typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value)) ? { field, value } : undefined;
}

/** A find by `_id` (see plainEquality): one synchronous read, consistent by itself (MongoDB's IDHACK). */
function findById(store: TenantStore, name: string, id: string | number | boolean, options: FindOptions): FindResult {
  integerOption(options.limit, 'limit', 1, DOCS_MODEL_LIMITS.maxFindLimit, 1);
  // One read cannot run past a time limit; a malformed one is refused all the same.
  maxTimeMSOf(options.maxTimeMS);
  const projection = compileFindProjection(options.projection, { filter: () => parseFilter(options.filter, undefined, true) });
  const info = readCollectionCached(store, store, name);
  if (info === undefined) return { documents: [] };
  if (typeof id === 'string' && Buffer.byteLength(id) > MAX_ID_BYTES) return { documents: [] }; // no stored id is that long
  countIndexRead(store, info, undefined);
  if (!store.getInto(docsTree(info), idKey(id), candidateRun)) return { documents: [] };
  const doc = runDocument(candidateRun);
  return { documents: [projection.mode === 'all' ? doc : projection.apply(doc)] };
}

/**
 * The index that answers an equality on `field` the way the planner would: the only usable index
 * whose first field it is, when that index has no other field (its entries for one value are then
 * in `_id` order, as a collection scan's); undefined otherwise (also when another index could be
 * chosen, which would give another order).
 */
function equalityIndex(info: CollectionInfo, field: string): IndexInfo | undefined {
  let found: IndexInfo | undefined;
  for (const index of info.indexes) {
    if (index.fields[0]!.path !== field || index.hidden === true) continue;
    if (found !== undefined) return undefined;
    found = index;
  }
  if (found === undefined || found.fields.length !== 1 || found.text !== undefined || found.partialFilterExpression !== undefined) return undefined;
  if ((found as { building?: boolean }).building === true) return undefined;
  return found;
}

/**
 * A plain equality on one top-level field (see plainEquality) that an index on that field alone
 * answers: the entries of the value's key, each document read and checked, in one synchronous
 * call without compiling the filter or planning (the path MongoDB 8.0 calls express). Undefined
 * when it does not apply (no such index, a dotted or operator field, a value whose key is shortened
 * or not a well-formed string, more entries than one chunk): the caller runs the find as usual,
 * which gives the same documents in the same order.
 */
function findByIndexedEquality(store: TenantStore, name: string, field: string, value: string | number | boolean, options: FindOptions, defaults: FindDefaults): FindResult | undefined {
  if (field.startsWith('$') || field.includes('.') || field === '__proto__') return undefined;
  if (typeof value === 'string' && !wellFormed(value)) return undefined;
  const info = readCollectionCached(store, store, name);
  if (info === undefined) return undefined;
  const index = equalityIndex(info, field);
  if (index === undefined) return undefined;
  const range = equalityRange(index, value);
  if (range === undefined) return undefined;
  const limit = integerOption(options.limit, 'limit', 1, DOCS_MODEL_LIMITS.maxFindLimit, defaults.limit ?? DOCS_MODEL_LIMITS.defaultFindLimit);
  // Answered in this turn: a time limit cannot pass, but a malformed one is refused.
  maxTimeMSOf(options.maxTimeMS);
  const projection = compileFindProjection(options.projection, { filter: () => parseFilter(options.filter, undefined, true) });
  if (projection.textScore === true) return undefined; // refused by the usual path
  const pks: Buffer[] = [];
  if (store.valuesNow(indexTree(info, index), range, CHUNK, pks)) return undefined;
  const tree = docsTree(info);
  const documents: Doc[] = [];
  let bytes = 0;
  for (const pk of pks) {
    if (!store.getInto(tree, pk, candidateRun)) missingDocument(info, index);
    const doc = runDocument(candidateRun);
    // The key is exact, so every entry matches; checked all the same, as the filter would.
    if (!equalsOrHolds(getOwn(doc, field), value)) continue;
    bytes += candidateRun.lengths[0]!;
    if (bytes > DOCS_MODEL_LIMITS.maxResultBytes) return undefined; // the usual path says why
    documents.push(projection.mode === 'all' ? doc : projection.apply(doc));
    if (documents.length >= limit) break;
  }
  countIndexRead(store, info, index);
  return { documents };
}

/** The key range of an index's entries whose first field holds `value`; undefined for a value the index shortens (its entries may hold others). */
function equalityRange(index: IndexInfo, value: unknown): { gte: Buffer; lt?: Buffer } | undefined {
  const component = indexComponent(value);
  if (component.lossy) return undefined;
  const { start, end } = keyPrefixRange([directed(component.part, index.fields[0]!.direction)]);
  return end === undefined ? { gte: start } : { gte: start, lt: end };
}

// `{field: value}`'s test of a top-level field's value for a scalar `value`: equal, or an array holding it.
function equalsOrHolds(v: unknown, value: string | number | boolean): boolean {
  if (v === value) return true;
  if (!Array.isArray(v)) return false;
  for (let i = 0; i < v.length; i++) if (v[i] === value) return true;
  return false;
}

/** The first matching document, or null. Same errors as docsFind. */
export async function docsFindOne(store: TenantStore, collection: unknown, options: Omit<FindOptions, 'limit'>, guard?: QueryGuard): Promise<Doc | null> {
  const { documents } = await docsFind(store, collection, { ...options, limit: 1 }, { guard });
  return documents[0] ?? null;
}

/**
 * The number of matching documents (after skip, at most limit when given).
 * @throws VALIDATION_FAILED / QUERY_ERROR as docsFind
 */
export async function docsCount(store: TenantStore, collection: unknown, options: { filter?: unknown; skip?: unknown; limit?: unknown; hint?: unknown; maxTimeMS?: unknown }, guard?: QueryGuard): Promise<number> {
  const name = validateCollectionName(collection);
  const filter = compileFilter(options.filter ?? {}, undefined, TEXT_ALLOWED);
  const hint = parseHint(options.hint);
  const skip = integerOption(options.skip, 'skip', 0, Number.MAX_SAFE_INTEGER, 0);
  const limit = integerOption(options.limit, 'limit', 1, Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER);
  const interrupt = queryInterrupt(options.maxTimeMS, guard);
  return onCollectionSnapshot(store, name, async (info, snapshot) => {
    if (info === undefined || snapshot === undefined) return 0;
    // Counted in an index's entries when the filter has that shape (no plan needed then).
    const entries = hint === undefined ? await countIndexEntries(store, snapshot, info, filter.ast, skip + limit, interrupt) : undefined;
    if (entries !== undefined) return Math.min(Math.max(entries - skip, 0), limit);
    const plan = planQuery(info, filter.ast, [], hint, filter.vars);
    countPlanReads(store, info, plan);
    // Every document, no filter: the tree knows its size (a hinted sparse index may hold fewer: MongoDB counts its entries).
    if (filter.ast.children.length === 0 && (plan.kind === 'primary' || plan.kind === 'empty')) return Math.min(Math.max(snapshot.count(docsTree(info)) - skip, 0), limit);
    let n = 0;
    for await (const chunk of candidates(snapshot, info, plan, { keys: 0, docs: 0 }, { filter, whole: false }, interrupt)) {
      for (const c of chunk) if (filter.test(c.doc)) n++;
      if (n - skip >= limit) break;
    }
    return Math.min(Math.max(n - skip, 0), limit);
  });
}

/** How many index entries a count scan counts between turns of the event loop. */
const COUNT_SCAN_SLICE = 4096;

/** A value whose index key is its own (never shortened), counted by a count scan. */
function countable(v: unknown): v is string | number | boolean {
  return typeof v === 'string' ? wellFormed(v) : typeof v === 'number' ? !Number.isNaN(v) : typeof v === 'boolean';
}

/**
 * MongoDB's COUNT_SCAN: a filter that is one equality (or `$in`) of strings, numbers or booleans on
 * a top-level field, with an index on that field alone, is counted in the index's entries, without
 * reading a document: each document holds one entry per distinct value there, and a value's key
 * range holds exactly the documents equal to it or holding it in an array (the query's match). An
 * `$in` of several values over a multikey index would count a document holding two of them twice:
 * not counted so. At most `enough` entries; a turn of the event loop every COUNT_SCAN_SLICE.
 * Undefined when the filter is not of that shape.
 */
async function countIndexEntries(store: TenantStore, snapshot: Snapshot, info: CollectionInfo, ast: AndNode, enough: number, interrupt: Interrupt): Promise<number | undefined> {
  const node = ast.children.length === 1 ? ast.children[0]! : undefined;
  if (node?.kind !== 'field' || node.ops.length !== 1) return undefined;
  const field = node.path;
  if (field === ID || field.includes('.') || field.startsWith('$') || field === '__proto__') return undefined;
  const op = node.ops[0]!;
  const values = op.op === '$eq' ? [op.value] : op.op === '$in' ? [...new Set(op.value)] : undefined;
  if (values === undefined || !values.every(countable)) return undefined;
  const index = equalityIndex(info, field);
  if (index === undefined || (values.length > 1 && index.multikey)) return undefined;
  const ranges = [];
  for (const v of values) {
    const range = equalityRange(index, v);
    if (range === undefined) return undefined;
    ranges.push(range);
  }
  const tree = indexTree(info, index);
  countIndexRead(store, info, index);
  let n = 0;
  for (const range of ranges) {
    for (const _ of snapshot.keys(tree, range)) {
      if (++n >= enough) return n;
      if (n % COUNT_SCAN_SLICE === 0) {
        await nextTurn();
        interrupt.check();
      }
    }
  }
  return n;
}

export interface AggregateOptions {
  hint?: unknown;
  /** A final $merge or $out skips its target's validation (MongoDB's bypassDocumentValidation). */
  bypassDocumentValidation?: unknown;
  /** MongoDB's allowDiskUse: blocking stages past the memory bound spill (true, the default) or fail. */
  allowDiskUse?: unknown;
  /** The server's memory settings (none: the default bound, no spilling). */
  memory?: MemorySettings;
  /** Called with the bytes each batch of a $merge or $out adds, before it is written (a quota check may throw). */
  charge?: (bytes: number) => void;
  /** MongoDB's maxTimeMS: milliseconds the pipeline may run (0: no limit of its own). */
  maxTimeMS?: unknown;
  /** The server's time limit and the client to watch. */
  guard?: QueryGuard;
  /** MongoDB's `let`: variables the pipeline reads as `$$name` (let-variables.ts). */
  let?: unknown;
}

export interface AggregateResult {
  readonly documents: Doc[];
  /** The collection a final $merge or $out wrote into (documents is then empty). */
  readonly written?: string;
}

/**
 * Runs an aggregation pipeline (aggregate/pipeline.ts) over a collection, on one snapshot of it
 * and of every collection its $lookup stages read (the catalog entries read in the same turn).
 * A leading $match goes to the query planner, so an index serves it; the documents then flow
 * through the stages a chunk per turn. The result is bounded like find's. A final $merge writes
 * the output instead (mergeStream), as it streams, and answers once every write is durable; a
 * final $out writes it into a hidden collection and swaps that in for its target (outStream).
 * Without a collection (undefined), the pipeline must start with $documents, and only then.
 * @throws VALIDATION_FAILED for a bad or missing collection name; QUERY_ERROR for a bad pipeline, a stage
 *   past its memory bound or a result past AGGREGATE_LIMITS.maxResultBytes; a $merge's errors
 *   (mergeChunk), after the chunks before the failing one are written; a $out's (outStream),
 *   with its target unchanged
 */
export async function docsAggregate(store: TenantStore, collection: unknown, pipelineSpec: unknown, options: AggregateOptions = {}): Promise<AggregateResult> {
  const run = openAggregate(store, collection, pipelineSpec, options, () => queryInterrupt(options.maxTimeMS, options.guard));
  try {
    if (run.writes !== undefined) {
      // A $merge or $out returns no documents, as MongoDB's.
      await run.write();
      return { documents: [], written: run.writes };
    }
    const documents: Doc[] = [];
    let bytes = 0;
    for await (const chunk of run.output) {
      for (const d of chunk) {
        bytes += approxBytes(d);
        if (bytes > AGGREGATE_LIMITS.maxResultBytes) {
          fail('QUERY_ERROR', `the result exceeds ${AGGREGATE_LIMITS.maxResultBytes} bytes: add a $limit, $match earlier or $project fewer fields`, { limit: AGGREGATE_LIMITS.maxResultBytes });
        }
        documents.push(d);
      }
    }
    return { documents };
  } catch (err) {
    throw aggregateError(err);
  } finally {
    await run.close();
  }
}

/**
 * A value past what JavaScript can hold (a string past V8's limit, an array of too many elements)
 * is the pipeline's doing, not a fault of the service: a 400, as MongoDB refuses a value past its
 * BSON limit. Other errors as they are.
 */
function aggregateError(err: unknown): unknown {
  if (err instanceof RangeError) {
    try {
      fail('QUERY_ERROR', `the pipeline built a value too large to hold (${err.message}): add a $limit or $match earlier`, undefined, err);
    } catch (mapped) {
      return mapped;
    }
  }
  return err;
}

/**
 * An aggregation opened as a cursor (MongoDB's aggregate with `cursor: {batchSize}`): its output
 * handed out a batch at a time by a CursorRegistry, every batch on the snapshot taken now. A
 * pipeline ending in $merge or $out runs to its end here instead (`written`: its target).
 * @throws as docsAggregate
 */
export async function docsAggregateCursor(store: TenantStore, collection: unknown, pipelineSpec: unknown, options: AggregateOptions = {}): Promise<OpenedCursor | { written: string }> {
  let interrupt: CursorInterrupt | undefined;
  const run = openAggregate(store, collection, pipelineSpec, options, () => {
    interrupt = newCursorInterrupt(maxTimeMSOf(options.maxTimeMS) ?? 0);
    // A $merge or $out runs now, under this request's limits (CursorRegistry.first sets them again for a first batch).
    interrupt.begin(options.guard ?? {});
    return interrupt;
  });
  if (run.writes === undefined) {
    const output = run.output[Symbol.asyncIterator]();
    return { collection: collection === undefined ? null : (collection as string), interrupt: interrupt!, source: { batches: output, close: () => run.close(), mapError: aggregateError } };
  }
  // The route sets the interrupt's request before this runs: the whole write is the first batch's.
  try {
    await run.write();
    return { written: run.writes };
  } catch (err) {
    throw aggregateError(err);
  } finally {
    await run.close();
  }
}

/** A pipeline prepared on its snapshot: its output to read, or its $merge / $out to run; close() once done. */
interface AggregateRun {
  readonly output: AsyncIterable<Doc[]>;
  /** The collection a final $merge or $out writes into (write() runs it), else undefined. */
  readonly writes: string | undefined;
  write(): Promise<void>;
  close(): Promise<void>;
}

/**
 * docsAggregate up to its output: the pipeline compiled, the snapshot of every collection it reads
 * taken, the stages connected (nothing read yet). Its snapshot and spill space are released by
 * close(), or here when preparing fails.
 */
function openAggregate(store: TenantStore, collection: unknown, pipelineSpec: unknown, options: AggregateOptions, interruptOf: () => Interrupt): AggregateRun {
  // No collection is MongoDB's collection-less aggregate ({aggregate: 1}): its pipeline must
  // start with $documents, which a collection's must not.
  const name = collection === undefined ? undefined : validateCollectionName(collection);
  const bypass = bypassOption(options.bypassDocumentValidation, 'aggregate');
  // $$NOW is one instant for the whole pipeline, its `let` and $merge included, as in MongoDB.
  const lets = compileLet(options.let, 'aggregate');
  const now = lets?.now ?? new Date();
  const vars = lets?.scope ?? new Scope(new Map([['NOW', now]]));
  const pipeline = compilePipeline(fromJson(pipelineSpec, { code: 'QUERY_ERROR' }), lets?.names);
  if (name === undefined && !pipeline.generated) {
    fail('VALIDATION_FAILED', 'collection is required, unless the pipeline starts with $documents', { field: 'collection' });
  }
  if (name !== undefined && pipeline.generated) {
    fail('QUERY_ERROR', "'$documents' can only be run with {aggregate: 1} (an aggregate without a collection)", { stage: '$documents' });
  }
  // As MongoDB does when it parses the stage: an `on` without its unique index fails before any read.
  const merge = pipeline.merge;
  // A whenMatched pipeline is a pipeline-style update with the $merge's variables.
  // It reads the command's `let` too (SERVER-46998), where the $merge's own variables win.
  const mergeUpdate = merge?.pipeline === undefined ? undefined : compilePipelineUpdate(merge.pipeline, new Set([...(lets?.names ?? []), ...merge.variables.map(([name]) => name)]));
  if (merge !== undefined && !merge.onId) mergeIndex(readCollection(store, merge.into), merge);
  // The hint picks how the collection itself is read (its leading $match), not what $lookup and the like read.
  const hint = parseHint(options.hint);
  const allowDiskUse = allowDiskUseOf(options.allowDiskUse, 'aggregate');
  const interrupt = interruptOf();
  const infos = new Map<string, CollectionInfo | undefined>();
  for (const c of name === undefined ? pipeline.reads : [name, ...pipeline.reads]) infos.set(c, readCollectionCached(store, store, c));
  const trees = [...infos.values()].flatMap((info) => (info === undefined ? [] : treesOf(info)));
  const snapshot = trees.length > 0 ? store.snapshot(trees) : undefined;
  // Its own spill space, removed (files and all) in the finally below however the run ends.
  const memory = queryMemory(options.memory, allowDiskUse, interrupt);
  // A $out reads its target's indexes in the turn the snapshot is taken: what the output must satisfy.
  const target = pipeline.out === undefined ? undefined : readCollection(store, pipeline.out.into);
  const matchAll = compileFilter({});
  // `fields`: the paths the pipeline reads (the rest is not decoded), or all of them.
  async function* read(collection: string, unbound: CompiledFilter, fields?: readonly string[], hint?: Hint): AsyncGenerator<Doc[]> {
    const info = infos.get(collection);
    if (info === undefined || snapshot === undefined) return;
    // A leading $match's `$expr` reads the command's `let`, in the scan's partial reads too.
    const filter = bindFilter(unbound, lets);
    const plan = planQuery(info, filter.ast, [], hint, filter.vars);
    countPlanReads(store, info, plan);
    const scan: ScanFilter = fields === undefined ? { filter, whole: true } : { filter, whole: false, extra: fields };
    // A leading $text gives each document its text score, which `$meta` reads downstream.
    const text = filterTextSearch(filter.ast);
    const textAtTop = filterTextAtTop(filter.ast);
    for await (const chunk of candidates(snapshot, info, plan, { keys: 0, docs: 0 }, scan, interrupt)) {
      const docs: Doc[] = [];
      for (const c of chunk) {
        if (!filter.test(c.doc)) continue;
        if (text !== undefined) giveTextScore(text, textAtTop, c.doc);
        docs.push(c.doc);
      }
      if (docs.length > 0) yield docs;
    }
  }
  // What the $lookup stages brought in, by collection and the key of their filter, for the rest of
  // the run: input documents often share their local values (many orders of few customers), and
  // each lookup is a query of its own (~20 µs: compile, plan, read). All of them read the one
  // snapshot, so an equal filter finds the same documents.
  const lookups = new Map<string, { docs: Doc[]; bytes: number }>();
  let lookupBytes = 0;
  /** What one document's $lookup brings in, held whole within the blocking bound (past it, `refuse`), and remembered when it has a key. */
  async function lookupAnew(collection: string, filterSpec: Doc, key: string | undefined, refuse: LookupRefusal): Promise<Doc[]> {
    const docs: Doc[] = [];
    let bytes = 0;
    for await (const chunk of read(collection, compileFilter(filterSpec))) {
      for (const d of chunk) {
        bytes += approxBytes(d);
        if (bytes > memory.maxBlockingBytes) refuse(collection, memory.maxBlockingBytes);
        docs.push(d);
      }
    }
    if (key !== undefined && lookups.size < LOOKUP_MEMO_ENTRIES && lookupBytes + bytes <= LOOKUP_MEMO_BYTES) {
      lookups.set(key, { docs: docs.map((d) => cloneValue(d)), bytes });
      lookupBytes += bytes;
    }
    return docs;
  }
  const ctx: StageContext = {
    vars,
    memory,
    indexStats: () => {
      const info = name === undefined ? undefined : infos.get(name);
      return info === undefined ? [] : indexStatsOf(store, info);
    },
    collStats: (spec) => collStatsOf(name ?? '', name === undefined ? undefined : infos.get(name), snapshot, spec, interrupt),
    scan: (collection, filter) => read(collection, filter ?? matchAll),
    whole(docs) {
      // The pipeline's own collection, on its snapshot: every document read is there.
      const info = name === undefined ? undefined : infos.get(name);
      if (info === undefined || snapshot === undefined) throw new Error('whole documents asked of a pipeline without a collection');
      const tree = docsTree(info);
      return docs.map((d) => {
        const raw = snapshot.get(tree, idKey(idOf(d)));
        if (raw === undefined) throw new Error(`document ${JSON.stringify(d[ID])} read in part is not in the snapshot`);
        return decodeDocument(raw);
      });
    },
    lookup(collection, filterSpec, filterKey, refuse = refuseLookupMatches) {
      const key = filterKey === undefined ? undefined : `${collection}\0${filterKey}`;
      const known = key === undefined ? undefined : lookups.get(key);
      if (known === undefined) return lookupAnew(collection, filterSpec, key, refuse);
      // Within the blocking bound, as when it was read; copies, since the stages after may change
      // what they are given. In this turn: no promise per input document.
      if (known.bytes > memory.maxBlockingBytes) refuse(collection, memory.maxBlockingBytes);
      return known.docs.map((d) => cloneValue(d));
    },
  };
  const close = async (): Promise<void> => {
    snapshot?.close();
    await memory.spill?.close();
  };
  try {
    // The leading $match is the read's filter: the pipeline does not test it again.
    const input = name === undefined || pipeline.describes ? noInput() : read(name, pipeline.leading ?? matchAll, pipeline.fields, hint);
    const output = pipeline.run(input, ctx, true);
    const charge = options.charge ?? (() => undefined);
    if (merge !== undefined) {
      return { output, writes: merge.into, close, write: () => mergeStream(store, { spec: merge, update: mergeUpdate, now, bypass, commandVariables: lets?.values }, output, charge) };
    }
    const out = pipeline.out;
    if (out !== undefined) return { output, writes: out.into, close, write: () => outStream(store, out, target, output, charge, bypass) };
    return { output, writes: undefined, close, write: () => Promise.resolve() };
  } catch (err) {
    void close();
    throw err;
  }
}

// ---- $merge ---------------------------------------------------------------------------------------

/** A $merge as it runs: its spec, its whenMatched pipeline compiled, the aggregate's $$NOW. */
interface MergeRun {
  readonly spec: MergeSpec;
  readonly update: CompiledPipelineUpdate | undefined;
  readonly now: Date;
  /** The target's validation is skipped (bypassDocumentValidation). */
  readonly bypass: boolean;
  /** The aggregate's `let` values, which the whenMatched pipeline reads beside the $merge's own. */
  readonly commandVariables?: ReadonlyMap<string, unknown>;
}

/** Output documents a $merge writes per batch: one atomic batch, made and applied in one turn. */
const MERGE_CHUNK = 256;
// A primary key no document has: uniqueHolder then reports any holder.
const NO_PK = Buffer.alloc(0);

/**
 * The unique index a $merge's `on` fields (other than `_id` alone) need, as MongoDB requires: a
 * unique, non-partial index on exactly those fields, in any order.
 * @throws QUERY_ERROR with MongoDB's message when the target has none (or does not exist)
 */
function mergeIndex(info: CollectionInfo | undefined, spec: MergeSpec): IndexInfo {
  const wanted = new Set(spec.on);
  const index = info?.indexes.find((i) => i.unique && i.partialFilterExpression === undefined && i.fields.length === wanted.size && i.fields.every((f) => wanted.has(f.path)));
  if (index === undefined) fail('QUERY_ERROR', 'Cannot find index to verify that join fields will be unique', { stage: '$merge', on: [...spec.on] });
  return index;
}

/** The value at dot path `path`, through embedded documents only (MongoDB reads `on` fields so: an array on the way is no value). */
function onValue(doc: Doc, path: string): unknown {
  let cur: unknown = doc;
  for (const part of path.split('.')) {
    if (!isPlainObject(cur)) return MISSING;
    cur = getOwn(cur, part);
  }
  return cur;
}

/**
 * An output document as $merge writes it: an `_id` generated when `on` names `_id` and the
 * document has none (as MongoDB does), a storable `_id`, and every `on` field present, not null,
 * not an array (MongoDB's message).
 * @throws VALIDATION_FAILED for an `_id` tetradb cannot store; QUERY_ERROR for a bad `on` field
 */
function mergeOutput(doc: Doc, spec: MergeSpec): Doc {
  let out = doc;
  if (getOwn(doc, ID) === MISSING && spec.on.includes(ID)) out = withIdFirst(doc, newObjectId());
  const id = getOwn(out, ID);
  if (id !== MISSING && !isValidId(id)) fail('VALIDATION_FAILED', `$merge cannot write a document whose _id is ${describeValue(id)}: _id must be a string, a number or a boolean`, { stage: '$merge', field: ID });
  for (const path of spec.on) {
    const v = onValue(out, path);
    if (v === MISSING || v === null || Array.isArray(v)) fail('QUERY_ERROR', "$merge write error: 'on' field cannot be missing, null, undefined or an array", { stage: '$merge', field: path });
  }
  return out;
}

/**
 * Writes a $merge's output into its collection as it streams, MERGE_CHUNK documents per batch
 * (mergeChunk), and returns once every batch written is durable. A failing batch writes nothing,
 * the batches before it stay (MongoDB's $merge is not atomic either); they are durable before the
 * error is thrown. Only the current chunk is held.
 */
async function mergeStream(store: TenantStore, run: MergeRun, output: AsyncIterable<Doc[]>, charge: (bytes: number) => void): Promise<void> {
  const writes: Array<Promise<unknown>> = [];
  try {
    for await (const chunk of output) {
      for (let i = 0; i < chunk.length; i += MERGE_CHUNK) {
        // A large chunk (a $unwind's) is written in batches with other requests' turns between them.
        if (i > 0) await nextTurn();
        const write = mergeChunk(store, run, chunk.slice(i, i + MERGE_CHUNK), charge);
        if (write !== undefined) writes.push(write);
      }
    }
  } finally {
    await Promise.allSettled(writes);
  }
  await Promise.all(writes);
}

/**
 * One batch of a $merge, read, checked and written in this turn: each document is matched by its
 * `on` fields against the target as it is now and as the batch's earlier documents left it (by
 * `_id`, or through the unique index on the `on` fields), then, when matched, replaced (its `_id`
 * kept), merged (top-level fields set, as $mergeObjects), changed by the whenMatched pipeline
 * (with `$$new` and the `let` variables), kept, or inserted to fail on the duplicate key
 * (whenMatched "fail"); when not, inserted (the target created on first insert),
 * discarded, or refused. Unique indexes, the document size and index maintenance are the other
 * writes'. Returns the batch's write, or undefined when it changes nothing.
 * @throws QUERY_ERROR (an `on` field, a changed `_id`, no match for whenNotMatched "fail"),
 *   VALIDATION_FAILED (a document tetradb cannot store), DUPLICATE_KEY: nothing of the batch written
 */
function mergeChunk(store: TenantStore, run: MergeRun, docs: readonly Doc[], charge: (bytes: number) => void): Promise<unknown> | undefined {
  const { spec } = run;
  const ops: BatchOp[] = [];
  const existing = readCollection(store, spec.into);
  // Looked up for every batch: the index may have been dropped since the last one.
  const index = spec.onId ? undefined : mergeIndex(existing, spec);
  let target: { info: CollectionInfo; created: boolean } | undefined = existing === undefined ? undefined : { info: existing, created: false };
  const flags = existing === undefined ? '' : flagsOf(existing);
  const pending = new Map<string, Buffer>();
  // The documents this batch wrote, by primary key: the batch's later documents match them.
  const written = new Map<string, Doc>();
  const docOps: BatchOp[] = [];
  let bytes = 0;

  const stored = (info: CollectionInfo, pk: Buffer): Doc | undefined => {
    const mine = written.get(pk.toString('latin1'));
    if (mine !== undefined) return mine;
    const raw = store.get(docsTree(info), pk);
    return raw === undefined ? undefined : decodeDocument(raw);
  };
  const matched = (info: CollectionInfo, doc: Doc): { pk: Buffer; before: Doc } | undefined => {
    let pk: Buffer | undefined;
    if (index === undefined) pk = idKey(idOf(doc));
    else {
      const [entry] = entriesOf(index, doc).values();
      if (entry === undefined) return undefined;
      const claimed = pending.get(`${index.id}:${entry.claim}`);
      pk = claimed === RELEASED ? undefined : (claimed ?? uniqueHolder(store, info, index, entry, NO_PK));
    }
    const before = pk === undefined ? undefined : stored(info, pk);
    return before === undefined ? undefined : { pk: pk!, before };
  };
  const put = (info: CollectionInfo, pk: Buffer, before: Doc | undefined, after: Doc): void => {
    validateDocument(after, { maxDepth: DOCS_LIMITS.maxDocumentDepth });
    checkValidation(store, info, after, before, run.bypass);
    const encoded = encodeChecked(after);
    bytes += encoded.length + 64;
    docOps.push({ op: 'put', tree: docsTree(info), key: pk, value: encoded });
    pushIndexOps(docOps, info, indexChanges(store, info, pk, before, after, pending));
    written.set(pk.toString('latin1'), after);
  };
  const insert = (doc: Doc): void => {
    target ??= collectionForWrite(store, spec.into, ops);
    const id = getOwn(doc, ID);
    const after = withIdFirst(doc, id === MISSING ? newObjectId() : id);
    const pk = idKey(idOf(after));
    if (written.has(pk.toString('latin1')) || store.has(docsTree(target.info), pk)) {
      fail('DUPLICATE_KEY', `E11000 duplicate key error collection: ${spec.into} index: _id_ dup key: { _id: ${JSON.stringify(idOf(after))} }`, { collection: spec.into, index: '_id_', keyValue: { _id: idOf(after) } });
    }
    put(target.info, pk, undefined, after);
  };

  for (const output of docs) {
    const doc = mergeOutput(output, spec);
    const match = target === undefined ? undefined : matched(target.info, doc);
    if (match === undefined) {
      if (spec.whenNotMatched === 'discard') continue;
      if (spec.whenNotMatched === 'fail') {
        fail('QUERY_ERROR', '$merge could not find a matching document in the target collection for at least one document in the source collection', { stage: '$merge' });
      }
      insert(doc);
      continue;
    }
    if (spec.whenMatched === 'keepExisting') continue;
    // MongoDB inserts, and the insert fails on the key the document matched by.
    if (spec.whenMatched === 'fail') {
      insert(doc);
      continue;
    }
    const { pk, before } = match;
    if (spec.whenMatched === 'pipeline') {
      // The output document only binds $$new: its _id is not the matched document's business.
      const own = mergeVariables(spec, doc, run.now);
      const variables = run.commandVariables === undefined ? own : new Map([...run.commandVariables, ...own]);
      const { doc: updated, modified } = run.update!.apply(before, { now: run.now, variables });
      if (modified) put(target!.info, pk, before, updated);
      continue;
    }
    const id = getOwn(doc, ID);
    if (id !== MISSING && compareValues(id, before[ID]) !== 0) {
      fail('QUERY_ERROR', '$merge failed to update the matching document, did you attempt to modify the _id or the shard key?', { stage: '$merge', _id: before[ID] as string | number | boolean });
    }
    let after: Doc;
    if (spec.whenMatched === 'replace') after = withIdFirst(doc, before[ID]);
    else {
      // "merge": the existing document with the output's top-level fields set (existing ones keep their place).
      after = {};
      for (const key of Object.keys(before)) setOwn(after, key, before[key]);
      for (const key of Object.keys(doc)) if (key !== ID) setOwn(after, key, doc[key]);
    }
    // Equal, field order included: matched, nothing to write (as an update that changes nothing).
    if (valuesEqual(after, before)) continue;
    put(target!.info, pk, before, after);
  }
  if (docOps.length === 0) return undefined;
  charge(bytes);
  if (target!.created || flagsOf(target!.info) !== flags) ops.push(putCollection(target!.info));
  ops.push(...docOps);
  return store.write(ops);
}

// ---- $out -----------------------------------------------------------------------------------------

/**
 * The definition of an index as a $out copies it to its hidden collection: everything but its id
 * and its flags (multikey, lossy), which the new documents set afresh, and a build's mark (the
 * hidden collection indexes every document as it is written).
 */
function indexDefinition(index: IndexInfo): string {
  return JSON.stringify([index.name, index.fields, index.unique, index.expireAfterSeconds ?? null, index.sparse === true, index.partialFilterExpression ?? null, index.text ?? null]);
}

function indexDefinitions(info: CollectionInfo | undefined): string[] {
  return (info?.indexes ?? []).map(indexDefinition).sort();
}

/**
 * Runs a $out (MongoDB's: the output replaces the target collection, which keeps its indexes):
 * the output goes into a new hidden collection (catalog.ts, newTemporaryCollection) made with the
 * target's index definitions, OUT_CHUNK documents per atomic batch as it streams (outChunk), so
 * only one chunk is held; then one atomic batch points the target's name at the hidden
 * collection's id and drops the target's trees: readers see the old documents or the new, never a
 * mix. Resolves once that batch is durable. Any failure (the pipeline's, a duplicate key, a
 * document tetradb cannot store, the target's indexes changed meanwhile) drops the hidden
 * collection and leaves the target as it was; a crash before the swap leaves it too, and the
 * hidden collection goes when the store next opens (dropTemporaryCollections).
 * `target`: the target's catalog entry when the pipeline's snapshot was taken.
 * @throws VALIDATION_FAILED, DUPLICATE_KEY (outChunk); CONFLICT when the target's indexes changed while the $out ran
 */
async function outStream(store: TenantStore, spec: OutSpec, target: CollectionInfo | undefined, output: AsyncIterable<Doc[]>, charge: (bytes: number) => void, bypass: boolean): Promise<void> {
  const definitions = indexDefinitions(target);
  const { info: hidden, op } = newTemporaryCollection(store, Date.now());
  hidden.indexes = (target?.indexes ?? []).map((index, i): IndexInfo => {
    const copy: IndexInfo = { ...index, id: i + 1, multikey: false, lossy: false };
    delete (copy as { building?: boolean }).building;
    return copy;
  });
  hidden.nextIndexId = hidden.indexes.length + 1;
  // The output must pass the target's validation, as it would be inserted there (MongoDB's $out keeps the options).
  if (target?.validator !== undefined) hidden.validator = target.validator;
  const writes: Array<Promise<unknown>> = [store.write([op, putCollection(hidden)])];
  try {
    for await (const chunk of output) {
      for (let i = 0; i < chunk.length; i += OUT_CHUNK) {
        // A large chunk (a $unwind's) is written in batches with other requests' turns between them.
        if (i > 0) await nextTurn();
        writes.push(outChunk(store, hidden, spec.into, chunk.slice(i, i + OUT_CHUNK), charge, bypass));
      }
    }
    await Promise.all(writes);
    // The swap, read, checked and written in one turn.
    const live = readCollection(store, spec.into);
    if (indexDefinitions(live).join() !== definitions.join()) {
      fail('CONFLICT', `indexes of target collection ${spec.into} changed during processing.`, { stage: '$out', collection: spec.into });
    }
    // The validation the output was checked against (MongoDB compares the collection's options).
    if (JSON.stringify(live?.validator ?? null) !== JSON.stringify(target?.validator ?? null)) {
      fail('CONFLICT', `collection options of target collection ${spec.into} changed during processing.`, { stage: '$out', collection: spec.into });
    }
    const filled = readCollection(store, hidden.name)!;
    const swap: BatchOp[] = [deleteCollection(filled), putCollection({ ...filled, name: spec.into })];
    if (live !== undefined) swap.push(...dropCollectionOps(live).filter((o) => o.op === 'dropTree'));
    await store.write(swap);
  } catch (err) {
    // Every batch is applied already (a write applies in its turn): the drop takes them all. Their
    // promises are settled first so that a failed one is not left unhandled.
    await Promise.allSettled(writes);
    const left = readCollection(store, hidden.name);
    if (left !== undefined) await store.write(dropCollectionOps(left)).catch(() => undefined);
    throw err;
  }
}

/** Output documents a $out writes per batch: one atomic batch, made and applied in one turn. */
const OUT_CHUNK = MERGE_CHUNK;

/**
 * One batch of a $out's output into its hidden collection `hidden` (read live: its flags change as
 * documents arrive), checked and written in this turn, as inserts are: an `_id` generated when
 * missing, a storable one, unique indexes (the target's, copied) and the size. Messages name the
 * target `into`, the collection the client knows.
 * @throws VALIDATION_FAILED for a document tetradb cannot store; DUPLICATE_KEY for a repeated `_id` or unique key: nothing of the batch written
 */
function outChunk(store: TenantStore, hidden: CollectionInfo, into: string, docs: readonly Doc[], charge: (bytes: number) => void, bypass: boolean): Promise<unknown> {
  const live = readCollection(store, hidden.name);
  if (live === undefined) fail('CONFLICT', `the $out into ${into} lost its temporary collection`, { stage: '$out', collection: into });
  const info: CollectionInfo = { ...live, name: into };
  const flags = flagsOf(info);
  const stored: Doc[] = [];
  const encoded: Buffer[] = [];
  let bytes = 0;
  for (const output of docs) {
    const given = getOwn(output, ID);
    if (given !== MISSING && !isValidId(given)) fail('VALIDATION_FAILED', `$out cannot write a document whose _id is ${describeValue(given)}: _id must be a string, a number or a boolean`, { stage: '$out', field: ID });
    const doc = withIdFirst(output, given === MISSING ? newObjectId() : given);
    validateDocument(doc, { maxDepth: DOCS_LIMITS.maxDocumentDepth });
    const bytesOf = encodeChecked(doc);
    stored.push(doc);
    encoded.push(bytesOf);
    bytes += bytesOf.length + 64;
  }
  // Messages name the target (info.name), the collection the client knows.
  const docOps = insertOps(store, info, stored, encoded, bypass);
  charge(bytes);
  // The flags live on the hidden collection's entry, under its own name.
  const ops: BatchOp[] = flagsOf(info) !== flags ? [putCollection({ ...info, name: hidden.name })] : [];
  ops.push(...docOps);
  return store.write(ops);
}

/**
 * Drops the hidden collections a $out left behind when the process stopped before its swap (or
 * its cleanup): run when a tenant's store opens, before any request, so none is running. Returns
 * how many were dropped.
 */
export async function dropTemporaryCollections(store: TenantStore): Promise<number> {
  const left = listTemporaryCollections(store);
  for (const info of left) await store.write(dropCollectionOps(info));
  return left.length;
}

// ---- Index maintenance ------------------------------------------------------------------------

function idOf(doc: Doc): string | number | boolean {
  return doc[ID] as string | number | boolean;
}

/** What writing one document version changes in the indexes. */
interface IndexChange {
  readonly puts: Array<{ index: IndexInfo; key: Buffer; value: Buffer }>;
  readonly deletes: Array<{ index: IndexInfo; key: Buffer }>;
}

/**
 * One index entry of a document. `claim`: in a unique index, what the entry claims (its key, or
 * for a shortened key, its values encoded whole); `shared`: for a shortened key in a unique
 * index, the key without the `_id` suffix that every document with the same shortened values
 * shares (the entry itself carries the suffix, so such documents do not overwrite each other).
 */
interface IndexEntry {
  readonly key: Buffer;
  readonly claim: string;
  readonly shared?: Buffer;
}

// The entries of an absent document version, or of one a sparse or partial index leaves out (read only).
const NO_ENTRIES: ReadonlyMap<string, IndexEntry> = new Map();

function entriesOf(index: IndexInfo, doc: Doc): ReadonlyMap<string, IndexEntry> {
  if (!isIndexMember(index, doc)) return NO_ENTRIES;
  if (index.text !== undefined) return textEntries(index, index.text, doc);
  const keys = documentKeys(doc, index.fields);
  if (keys.multikey && !index.multikey) index.multikey = true;
  if (keys.lossy && !index.lossy) index.lossy = true;
  const out = new Map<string, IndexEntry>();
  let idPart: KeyPart | undefined;
  for (let e = 0; e < keys.entries.length; e++) {
    const parts = keys.entries[e]!;
    const whole = keys.wholes[e];
    if (index.unique && whole === undefined) {
      const key = entryKey(parts, undefined);
      const id = key.toString('latin1');
      out.set(id, { key, claim: id });
      continue;
    }
    idPart ??= idComponent(idOf(doc)).part;
    const key = entryKey(parts, idPart);
    if (!index.unique) {
      out.set(key.toString('latin1'), { key, claim: '' });
      continue;
    }
    // Keyed by its whole values too: a change within the shortened part keeps the key but is a
    // new claim, which the unique check must see.
    const claim = `whole:${encodeKey(whole!).toString('latin1')}`;
    out.set(`${key.toString('latin1')}\u0000${claim}`, { key, claim, shared: entryKey(parts, undefined) });
  }
  return out;
}

/**
 * A document's entries in a text index: one per distinct term of its indexed strings, none when it
 * has no indexed text. An entry's key is MongoDB's: the prefix fields' values (so a query's
 * equalities on them narrow the read to their entries), the term (or its first TERM_KEY_CHARS),
 * the suffix fields' values, then the document's id. The scores are not stored: a search computes
 * them from the document it reads anyway.
 * @throws VALIDATION_FAILED for a language override MongoDB refuses, or an array in a prefix or suffix field
 */
function textEntries(index: IndexInfo, spec: TextIndexSpec, doc: Doc): ReadonlyMap<string, IndexEntry> {
  const { prefix, suffix } = textKeyFields(index.fields);
  // Checked first, as MongoDB does: a document with an array there is refused even without text.
  const part = (f: IndexField): KeyPart => directed(indexComponent(textKeyValue(doc, f.path)).part, f.direction);
  const before = prefix.map(part);
  const after = suffix.map(part);
  const terms = documentTermScores(doc, spec);
  if (terms.size === 0) return NO_ENTRIES;
  const idPart = idComponent(idOf(doc)).part;
  const out = new Map<string, IndexEntry>();
  for (const term of terms.keys()) {
    const key = entryKey([...before, termKey(term), ...after], idPart);
    out.set(key.toString('latin1'), { key, claim: '' });
  }
  return out;
}

/** The keys of `doc`'s entries in `index`, as they are stored now (for upgrades of older layouts). */
export function indexEntryKeys(index: IndexInfo, doc: Doc): Buffer[] {
  return [...entriesOf({ ...index }, doc).values()].map((e) => e.key);
}

// In `pending`: a unique key an earlier document of the same batch gave up (free to take again).
const RELEASED = Buffer.alloc(0);

/**
 * The document (its key) holding unique entry `entry` in the live store, other than `pk`: for a
 * whole key, the entry's value; for a shortened one, the first document sharing the shortened key
 * whose values, encoded whole, are the entry's.
 */
function uniqueHolder(store: TenantStore, info: CollectionInfo, index: IndexInfo, entry: IndexEntry, pk: Buffer): Buffer | undefined {
  const tree = indexTree(info, index);
  if (entry.shared === undefined) {
    const holder = store.get(tree, entry.key);
    return holder !== undefined && !holder.equals(pk) ? holder : undefined;
  }
  // Every entry with these shortened values: the shared key followed by some document's id.
  const end = prefixUpperBound(entry.shared);
  for (const [, holderPk] of store.scan(tree, end === undefined ? { gte: entry.shared } : { gte: entry.shared, lt: end })) {
    if (holderPk.equals(pk)) continue;
    const raw = store.get(docsTree(info), holderPk);
    if (raw === undefined) continue;
    for (const other of entriesOf({ ...index }, decodeDocument(raw)).values()) if (other.claim === entry.claim) return Buffer.from(holderPk);
  }
  return undefined;
}

/**
 * The index changes from `before` to `after` (either may be absent), with unique checks against
 * the live store and `pending` (claims this batch already made or gave up). Flags
 * multikey/lossy on `info`.
 * @throws DUPLICATE_KEY naming the index and the key
 */
function indexChanges(store: TenantStore, info: CollectionInfo, pk: Buffer, before: Doc | undefined, after: Doc | undefined, pending: Map<string, Buffer>): IndexChange {
  const change: IndexChange = { puts: [], deletes: [] };
  for (const index of info.indexes) {
    if (before === undefined && after !== undefined && !index.unique && index.text === undefined) {
      newPlainEntries(index, after, pk, change.puts);
      continue;
    }
    const old = before === undefined ? NO_ENTRIES : entriesOf(index, before);
    const now = after === undefined ? NO_ENTRIES : entriesOf(index, after);
    for (const [id, entry] of old) {
      if (now.has(id)) continue;
      change.deletes.push({ index, key: entry.key });
      if (index.unique) pending.set(`${index.id}:${entry.claim}`, RELEASED);
    }
    for (const [id, entry] of now) {
      if (old.has(id)) continue;
      if (index.unique) {
        const claim = `${index.id}:${entry.claim}`;
        const claimed = pending.get(claim);
        const holder = claimed === RELEASED ? undefined : claimed !== undefined ? (claimed.equals(pk) ? undefined : claimed) : uniqueHolder(store, info, index, entry, pk);
        if (holder !== undefined) duplicateIndexKey(info, index, after!);
        pending.set(claim, pk);
      }
      change.puts.push({ index, key: entry.key, value: pk });
    }
  }
  return change;
}

/**
 * The entries of a new document in an index that is neither unique nor a text index: what
 * indexChanges makes of entriesOf's there (nothing old to keep, nothing to claim), without its
 * map: a document of one entry, the common case, goes straight in (an insert's index cost was
 * mostly that map and its string keys).
 */
function newPlainEntries(index: IndexInfo, doc: Doc, pk: Buffer, puts: IndexChange['puts']): void {
  if (!isIndexMember(index, doc)) return;
  if (index.fields.length === 1) {
    const key = oneFieldEntryKey(doc, index.fields[0]!, idComponent(idOf(doc)).part);
    if (key !== undefined) {
      puts.push({ index, key, value: pk });
      return;
    }
  }
  const keys = documentKeys(doc, index.fields);
  if (keys.multikey && !index.multikey) index.multikey = true;
  if (keys.lossy && !index.lossy) index.lossy = true;
  const idPart = idComponent(idOf(doc)).part;
  if (keys.entries.length === 1) {
    puts.push({ index, key: entryKey(keys.entries[0]!, idPart), value: pk });
    return;
  }
  // An array's equal elements make one entry, as entriesOf's map keeps one per key.
  const seen = new Set<string>();
  for (const parts of keys.entries) {
    const key = entryKey(parts, idPart);
    const id = key.toString('latin1');
    if (seen.has(id)) continue;
    seen.add(id);
    puts.push({ index, key, value: pk });
  }
}

function duplicateIndexKey(info: CollectionInfo, index: IndexInfo, doc: Doc): never {
  const keyValue = Object.fromEntries(index.fields.map((f) => [f.path, valueAtForMessage(doc, f.path)]));
  fail('DUPLICATE_KEY', `E11000 duplicate key error collection: ${info.name} index: ${index.name} dup key: ${JSON.stringify(keyValue)}`, {
    collection: info.name,
    index: index.name,
    keyValue,
  });
}

function valueAtForMessage(doc: Doc, path: string): unknown {
  let cur: unknown = doc;
  for (const part of path.split('.')) {
    if (!isPlainObject(cur)) return null;
    cur = getOwn(cur, part);
    if (cur === MISSING) return null;
  }
  return cur;
}

function pushIndexOps(ops: BatchOp[], info: CollectionInfo, change: IndexChange): void {
  for (const d of change.deletes) ops.push({ op: 'delete', tree: indexTree(info, d.index), key: d.key });
  for (const p of change.puts) ops.push({ op: 'put', tree: indexTree(info, p.index), key: p.key, value: p.value });
}

function flagsOf(info: CollectionInfo): string {
  return info.indexes.map((i) => `${i.multikey ? 1 : 0}${i.lossy ? 1 : 0}`).join();
}

// ---- Inserts ------------------------------------------------------------------------------------

/** A validated document ready to store: `_id` first, as MongoDB stores it. */
function prepareDocument(json: unknown, field: string): Doc {
  if (!isPlainObject(json)) fail('VALIDATION_FAILED', `${field} must be an object`, { field });
  const doc = documentFromJson(json, { maxDepth: DOCS_LIMITS.maxDocumentDepth });
  const id = getOwn(doc, ID);
  if (id !== MISSING && !isValidId(id)) fail('VALIDATION_FAILED', '_id must be a string, a number or a boolean', { field: `${field}._id` });
  // Already in order (the caller's object, or fromJson's copy): stored as it is, never changed.
  if (id !== MISSING && firstKey(doc) === ID) return doc;
  const out: Doc = {};
  setOwn(out, ID, id === MISSING ? newObjectId() : id);
  for (const key of Object.keys(doc)) if (key !== ID) setOwn(out, key, doc[key]);
  return out;
}

function firstKey(doc: Doc): string | undefined {
  for (const key in doc) return key;
  return undefined;
}

function encodeChecked(doc: Doc): Buffer {
  const bytes = encodeDocument(doc);
  if (bytes.length > DOCS_MODEL_LIMITS.maxDocumentBytes) {
    fail('VALIDATION_FAILED', `document of ${bytes.length} bytes exceeds the limit of ${DOCS_MODEL_LIMITS.maxDocumentBytes}`, { limit: DOCS_MODEL_LIMITS.maxDocumentBytes, _id: idOf(doc) });
  }
  return bytes;
}

/**
 * The collection a write goes to; when it does not exist yet, `created` is true and `ops` holds
 * the op taking its id (the caller stores the info in the same batch).
 */
function collectionForWrite(store: TenantStore, name: string, ops: BatchOp[]): { info: CollectionInfo; created: boolean } {
  const existing = collectionToWrite(store, name);
  if (existing !== undefined) return { info: existing, created: false };
  const fresh = newCollection(store, name, Date.now());
  ops.push(fresh.op);
  return { info: fresh.info, created: true };
}

/** Bytes an insert of these documents will add, for the quota check. */
export function docsInsertCost(docs: readonly unknown[]): number {
  let n = 0;
  for (const d of docs) n += Buffer.byteLength(JSON.stringify(d) ?? '') + 64;
  return n;
}

/**
 * Inserts `documents` into `collection` (created on first insert) as one atomic batch: all or
 * nothing. Ids are kept when given, else generated.
 * @throws VALIDATION_FAILED for a bad name, document, id or size (nothing written)
 * @throws DUPLICATE_KEY for an `_id` or unique key already present or repeated (nothing written)
 */
export function docsInsert(store: TenantStore, collection: unknown, documents: readonly unknown[], field = 'documents', options: WriteOptions & { maxTimeMS?: unknown } = {}): Written<{ insertedIds: Array<string | number | boolean> }> {
  return insertPrepared(store, prepareInsert(collection, documents, field, options));
}

/** What every write that stores documents takes. */
export interface WriteOptions {
  /** Skip the collection's validator (MongoDB's bypassDocumentValidation: a boolean, or a number read as one). */
  bypassDocumentValidation?: unknown;
}

/**
 * The time options of a change that searches (update, replace, delete and the findOneAnd*
 * operations): MongoDB's maxTimeMS, and the server's limit and client. Past the time, the search
 * stops; the chunks of an updateMany or deleteMany written before stay, as in MongoDB.
 */
export interface TimeOptions {
  maxTimeMS?: unknown;
  guard?: QueryGuard;
  /**
   * What stops the change instead of its own maxTimeMS and guard: a bulkWrite's, whose deadline
   * is the whole request's (maxTimeMS is then left out).
   */
  interrupt?: Interrupt;
}

/** An insert whose collection name and documents are checked, `_id`s given and encoded (see prepareInsert). */
export interface PreparedInsert {
  readonly name: string;
  readonly docs: readonly Doc[];
  readonly encoded: readonly Buffer[];
  /** The collection's validator is skipped (bypassDocumentValidation). */
  readonly bypass: boolean;
}

/**
 * docsInsert's checks, which need no store: the collection name, the count, each document (its
 * `_id` kept or generated now) and its encoded size. Nothing is written.
 * @throws VALIDATION_FAILED as docsInsert
 */
export function prepareInsert(collection: unknown, documents: readonly unknown[], field = 'documents', options: WriteOptions & { maxTimeMS?: unknown } = {}): PreparedInsert {
  // Checked first, as MongoDB parses it with the command. An insert is one synchronous turn, so
  // no limit can pass during it (the wait for durability is not counted, as in MongoDB).
  maxTimeMSOf(options.maxTimeMS);
  const name = validateCollectionName(collection);
  const bypass = bypassOption(options.bypassDocumentValidation, 'insert');
  if (documents.length === 0) fail('VALIDATION_FAILED', `${field} must not be empty`, { field });
  if (documents.length > DOCS_MODEL_LIMITS.maxInsertMany) fail('VALIDATION_FAILED', `at most ${DOCS_MODEL_LIMITS.maxInsertMany} documents per insert`, { field, limit: DOCS_MODEL_LIMITS.maxInsertMany });
  const docs = documents.map((d, i) => prepareDocument(d, documents.length === 1 && field === 'document' ? field : `${field}.${i}`));
  return { name, docs, encoded: docs.map(encodeChecked), bypass };
}

/**
 * Writes a prepared insert as one atomic batch: all or nothing.
 * @throws DUPLICATE_KEY for an `_id` or unique key already present or repeated (nothing written)
 */
export function insertPrepared(store: TenantStore, prepared: PreparedInsert): Written<{ insertedIds: Array<string | number | boolean> }> {
  const { name, docs, encoded, bypass } = prepared;
  // From here to store.write: one turn, so the checks below still hold when the batch applies.
  const ops: BatchOp[] = [];
  const { info, created } = collectionForWrite(store, name, ops);
  const flags = flagsOf(info);
  const docOps = insertOps(store, info, docs, encoded, bypass);
  if (created || flagsOf(info) !== flags) ops.push(putCollection(info));
  ops.push(...docOps);
  return { result: { insertedIds: docs.map(idOf) }, durable: durableOf(store.write(ops)) };
}

/**
 * The ops that insert `docs` (stored as `encoded`) into the collection `info` with their index
 * entries, checked against the live store and each other: a new `_id`, unique keys free. Sets
 * the collection's index flags (multikey, lossy) the documents need; errors name `info.name`.
 * @throws DUPLICATE_KEY for an `_id` or unique key already present or repeated
 */
function insertOps(store: TenantStore, info: CollectionInfo, docs: readonly Doc[], encoded: readonly Buffer[], bypass: boolean): BatchOp[] {
  const tree = docsTree(info);
  const ids = new Set<string>();
  const pending = new Map<string, Buffer>();
  const ops: BatchOp[] = [];
  for (let i = 0; i < docs.length; i++) {
    const doc = docs[i]!;
    const pk = idKey(idOf(doc));
    const claim = pk.toString('latin1');
    if (ids.has(claim) || store.has(tree, pk)) {
      fail('DUPLICATE_KEY', `E11000 duplicate key error collection: ${info.name} index: _id_ dup key: { _id: ${JSON.stringify(idOf(doc))} }`, { collection: info.name, index: '_id_', keyValue: { _id: idOf(doc) } });
    }
    ids.add(claim);
    checkValidation(store, info, doc, undefined, bypass);
    ops.push({ op: 'put', tree, key: pk, value: encoded[i]! });
    pushIndexOps(ops, info, indexChanges(store, info, pk, undefined, doc, pending));
  }
  return ops;
}

// ---- Updates and deletes -------------------------------------------------------------------------

/** Candidate primary keys of a filter, on a snapshot, a chunk at a time. */
async function* candidateKeys(store: TenantStore, name: string, filter: CompiledFilter, hint: Hint | undefined, interrupt: Interrupt): AsyncGenerator<Buffer[]> {
  const info = readCollection(store, name);
  if (info === undefined) return;
  const snapshot = store.snapshot(treesOf(info));
  try {
    const plan = planQuery(info, filter.ast, [], hint, filter.vars);
    countPlanReads(store, info, plan);
    for await (const chunk of candidates(snapshot, info, plan, { keys: 0, docs: 0 }, { filter, whole: false }, interrupt)) {
      const keys: Buffer[] = [];
      for (const c of chunk) if (filter.test(c.doc)) keys.push(idKey(idOf(c.doc)));
      if (keys.length > 0) yield keys;
    }
  } finally {
    snapshot.close();
  }
}

/** The result of an update. */
export interface UpdateOutcome {
  matchedCount: number;
  modifiedCount: number;
  upsertedId?: string | number | boolean;
}

/** Which document a findOneAnd* operation returns: as it was before the change, or after it. */
export type ReturnDocument = 'before' | 'after';

/** What findOneAndUpdate and findOneAndReplace answer: the document (projected) or null, and the counts. */
export interface FindAndModifyOutcome extends UpdateOutcome {
  document: Doc | null;
}

/** The documents one single-document change saw: the stored one (if any matched) and its new form (the inserted one for an upsert). */
export interface Changed {
  before: Doc | undefined;
  after: Doc | undefined;
}

/**
 * The options of a change to one document (updateOne, replaceOne, deleteOne and the findOneAnd*
 * operations): `sort` picks the first match in that order, as MongoDB's `sort` option does.
 */
function compileChangeSort(spec: unknown, multi: boolean): CompiledSort | undefined {
  if (spec === undefined) return undefined;
  if (multi) fail('VALIDATION_FAILED', 'sort applies to a change of one document only (updateOne, replaceOne, findOneAnd*)', { field: 'sort' });
  const sort = compileSort(spec, { meta: true });
  return sort.keys.length === 0 ? undefined : sort;
}

function checkUpsertFlag(upsert: unknown): void {
  if (upsert !== undefined && typeof upsert !== 'boolean') fail('VALIDATION_FAILED', 'upsert must be a boolean', { field: 'upsert' });
}

function returnDocumentOption(value: unknown): ReturnDocument {
  if (value === undefined) return 'before';
  if (value !== 'before' && value !== 'after') fail('VALIDATION_FAILED', 'returnDocument must be "before" or "after"', { field: 'returnDocument' });
  return value;
}

/**
 * Applies `update` to the first (`multi`: every) matching document; with `upsert` and no match,
 * inserts the document MongoDB would. Each document changes atomically; see the file comment.
 * `sort` (one document only) picks the first match in that order.
 * @throws VALIDATION_FAILED for a bad collection name, flag or sort, or a result document that cannot be stored
 * @throws QUERY_ERROR for a bad filter or update, or an update the document does not admit
 * @throws DUPLICATE_KEY when the change would repeat a unique key (that document is not changed)
 */
export async function docsUpdate(
  store: TenantStore,
  collection: unknown,
  filterSpec: unknown,
  updateSpec: unknown,
  options: { multi: boolean; upsert?: unknown; arrayFilters?: unknown; sort?: unknown; hint?: unknown } & WriteOptions & TimeOptions & LetOptions,
): Promise<Written<UpdateOutcome>> {
  const { outcome, durable } = await updateDocuments(store, collection, filterSpec, updateSpec, options);
  return { result: outcome, durable };
}

/**
 * MongoDB's findOneAndUpdate: updateOne (with `sort`, `upsert` and `arrayFilters`) that also
 * returns the document, as it was before the update (`returnDocument: "before"`, the default; null
 * for an upsert) or after it, with `projection` applied; null when nothing matched.
 * @throws as docsUpdate, and VALIDATION_FAILED / QUERY_ERROR for a bad returnDocument or projection
 */
export async function docsFindOneAndUpdate(
  store: TenantStore,
  collection: unknown,
  filterSpec: unknown,
  updateSpec: unknown,
  options: { upsert?: unknown; arrayFilters?: unknown; sort?: unknown; projection?: unknown; returnDocument?: unknown; hint?: unknown } & WriteOptions & TimeOptions & LetOptions,
): Promise<Written<FindAndModifyOutcome>> {
  bypassOption(options.bypassDocumentValidation, 'findAndModify');
  const variables = compileLet(options.let, 'findAndModify');
  return findAndModify(filterSpec, options, variables, () => updateDocuments(store, collection, filterSpec, updateSpec, { ...options, variables, multi: false }));
}

/** The findOneAnd* operations' part: the options checked first, then the change, then the document it answers with. */
async function findAndModify(
  filterSpec: unknown,
  options: { projection?: unknown; returnDocument?: unknown },
  lets: LetVariables | undefined,
  change: () => Promise<{ outcome: UpdateOutcome; changed: Changed; durable: Promise<void> }>,
): Promise<Written<FindAndModifyOutcome>> {
  const returned = returnDocumentOption(options.returnDocument);
  const projection = compileFindProjection(options.projection, { filter: () => parseFilter(filterSpec ?? {}, lets?.names, true) }, lets);
  const { outcome, changed, durable } = await change();
  return { result: { document: returnedDocument(changed, returned, projection), ...outcome }, durable };
}

function updateDocuments(
  store: TenantStore,
  collection: unknown,
  filterSpec: unknown,
  updateSpec: unknown,
  options: { multi: boolean; upsert?: unknown; arrayFilters?: unknown; sort?: unknown; hint?: unknown } & WriteOptions & TimeOptions & LetOptions,
): Promise<ChangeRun> {
  return prepareUpdate(collection, filterSpec, updateSpec, options).run(store);
}

/** What a change of documents did: its counts, the document a single-document change saw, and its durability. */
export interface ChangeRun {
  outcome: UpdateOutcome;
  changed: Changed;
  durable: Promise<void>;
}

/**
 * docsUpdate's checks, which need no store (the collection name, filter, update, flags, sort and
 * hint, compiled now), and the update itself, to run on a store.
 * @throws VALIDATION_FAILED / QUERY_ERROR as docsUpdate, for what it checks before reading
 */
export function prepareUpdate(
  collection: unknown,
  filterSpec: unknown,
  updateSpec: unknown,
  options: { multi: boolean; upsert?: unknown; arrayFilters?: unknown; sort?: unknown; hint?: unknown } & WriteOptions & TimeOptions & LetOptions,
): PreparedChange<ChangeRun> {
  const name = validateCollectionName(collection);
  if (filterSpec === undefined) fail('VALIDATION_FAILED', 'filter is required', { field: 'filter' });
  const lets = letOf(options, 'update');
  const filter = bindFilter(compileFilter(filterSpec, lets?.names, TEXT_ALLOWED), lets);
  const hint = parseHint(options.hint);
  const update = compileUpdate(updateSpec, { arrayFilters: options.arrayFilters, filter: filter.ast, names: lets?.names });
  checkUpsertFlag(options.upsert);
  const sort = compileChangeSort(options.sort, options.multi);
  const bypass = bypassOption(options.bypassDocumentValidation, 'update');
  const maxTimeMS = maxTimeMSOf(options.maxTimeMS);
  return { run: (store) => runUpdate(store, name, filter, hint, update, sort, { ...options, bypass, lets }, options.interrupt ?? queryInterrupt(maxTimeMS, options.guard)), checkHint: (store) => checkHint(store, name, filter, hint) };
}

/** A change whose arguments are checked and compiled (prepareUpdate, prepareReplace, prepareDelete). */
export interface PreparedChange<T> {
  /** Applies the change. */
  run(store: TenantStore): Promise<T>;
  /**
   * Checks the hint against the collection's indexes as they are now, as the change's planning
   * will (a bulkWrite checks every operation's before applying any).
   * @throws QUERY_ERROR when no index fits the hint
   */
  checkHint(store: TenantStore): void;
}

function checkHint(store: TenantStore, name: string, filter: CompiledFilter, hint: Hint | undefined): void {
  if (hint === undefined) return;
  const info = readCollectionCached(store, store, name);
  if (info !== undefined) planQuery(info, filter.ast, [], hint, filter.vars);
}

async function runUpdate(
  store: TenantStore,
  name: string,
  filter: CompiledFilter,
  hint: Hint | undefined,
  update: ReturnType<typeof compileUpdate>,
  sort: CompiledSort | undefined,
  options: { multi: boolean; upsert?: unknown; bypass: boolean; lets: LetVariables | undefined },
  interrupt: Interrupt,
): Promise<ChangeRun> {
  const outcome: UpdateOutcome = { matchedCount: 0, modifiedCount: 0 };
  const changed: Changed = { before: undefined, after: undefined };
  // One $$NOW for the operation, the one its `let` read.
  const now = options.lets?.now ?? new Date();
  const variables = options.lets?.values;
  const writes = await changeMatches(store, name, filter, options.multi, sort, (m) => {
    outcome.matchedCount++;
    const { doc: after, modified } = update.apply(m.doc, { now, variables });
    changed.before = m.doc;
    changed.after = modified ? after : m.doc;
    if (!modified) return;
    if (compareValues(after[ID], m.doc[ID]) !== 0 || getOwn(after, ID) === MISSING) {
      fail('QUERY_ERROR', "Performing an update on the path '_id' would modify the immutable field '_id'", { path: ID });
    }
    validateDocument(after, { maxDepth: DOCS_LIMITS.maxDocumentDepth });
    checkValidation(store, m.info, after, m.doc, options.bypass);
    m.ops.push({ op: 'put', tree: m.tree, key: m.pk, value: encodeChecked(after) });
    pushIndexOps(m.ops, m.info, indexChanges(store, m.info, m.pk, m.doc, after, m.pending));
    outcome.modifiedCount++;
  }, hint, interrupt);
  if (outcome.matchedCount === 0 && options.upsert === true) {
    const seeded = buildUpsertDocument(filter, update, { now, variables });
    const doc = prepareDocument(seeded, 'upsert');
    const inserted = docsInsert(store, name, [doc], 'document', { bypassDocumentValidation: options.bypass });
    outcome.upsertedId = inserted.result.insertedIds[0]!;
    changed.after = doc;
    writes.push(inserted.durable);
  }
  return { outcome, changed, durable: Promise.all(writes).then(() => undefined) };
}

/** The document a findOneAnd* operation answers with (see ReturnDocument), projected; null when there is none. */
function returnedDocument(changed: Changed, returned: ReturnDocument, projection: CompiledProjection): Doc | null {
  const doc = returned === 'before' ? changed.before : changed.after;
  if (doc === undefined) return null;
  return projection.mode === 'all' ? doc : projection.apply(doc);
}

/**
 * Replaces the first document `filter` matches (`sort`: the first in that order) with
 * `replacement`, as MongoDB's replaceOne does: every field becomes the replacement's, `_id` stays
 * (a replacement may repeat it, never change it) and comes first. Replacing a document with an
 * equal one (same fields, same order) matches it but modifies nothing. With `upsert`, no match
 * inserts the replacement, its `_id` the replacement's, else the filter's `_id` equality, else a
 * new one (the two must agree when both are given).
 * @throws VALIDATION_FAILED for a bad collection name, replacement, upsert flag or sort; QUERY_ERROR for
 *   a bad filter, update operators in the replacement or a changed `_id`; DUPLICATE_KEY when a
 *   unique index holds one of the replacement's keys (nothing written)
 */
export async function docsReplace(store: TenantStore, collection: unknown, filterSpec: unknown, replacementSpec: unknown, options: { upsert?: unknown; sort?: unknown; hint?: unknown } & WriteOptions & TimeOptions & LetOptions): Promise<Written<UpdateOutcome>> {
  const { outcome, durable } = await replaceDocument(store, collection, filterSpec, replacementSpec, options);
  return { result: outcome, durable };
}

/**
 * MongoDB's findOneAndReplace: replaceOne (with `sort` and `upsert`) that also returns the
 * document, before the replacement (the default; null for an upsert) or after it
 * (`returnDocument: "after"`), with `projection` applied; null when nothing matched.
 * @throws as docsReplace, and VALIDATION_FAILED / QUERY_ERROR for a bad returnDocument or projection
 */
export async function docsFindOneAndReplace(
  store: TenantStore,
  collection: unknown,
  filterSpec: unknown,
  replacementSpec: unknown,
  options: { upsert?: unknown; sort?: unknown; projection?: unknown; returnDocument?: unknown; hint?: unknown } & WriteOptions & TimeOptions & LetOptions,
): Promise<Written<FindAndModifyOutcome>> {
  bypassOption(options.bypassDocumentValidation, 'findAndModify');
  const variables = compileLet(options.let, 'findAndModify');
  return findAndModify(filterSpec, options, variables, () => replaceDocument(store, collection, filterSpec, replacementSpec, { ...options, variables }));
}

function replaceDocument(
  store: TenantStore,
  collection: unknown,
  filterSpec: unknown,
  replacementSpec: unknown,
  options: { upsert?: unknown; sort?: unknown; hint?: unknown } & WriteOptions & TimeOptions & LetOptions,
): Promise<ChangeRun> {
  return prepareReplace(collection, filterSpec, replacementSpec, options).run(store);
}

/**
 * docsReplace's checks, which need no store (the collection name, filter, replacement, flags,
 * sort and hint), and the replacement itself, to run on a store.
 * @throws VALIDATION_FAILED / QUERY_ERROR as docsReplace, for what it checks before reading
 */
export function prepareReplace(
  collection: unknown,
  filterSpec: unknown,
  replacementSpec: unknown,
  options: { upsert?: unknown; sort?: unknown; hint?: unknown } & WriteOptions & TimeOptions & LetOptions,
): PreparedChange<ChangeRun> {
  const name = validateCollectionName(collection);
  if (filterSpec === undefined) fail('VALIDATION_FAILED', 'filter is required', { field: 'filter' });
  const lets = letOf(options, 'update');
  const filter = bindFilter(compileFilter(filterSpec, lets?.names, TEXT_ALLOWED), lets);
  const hint = parseHint(options.hint);
  if (!isPlainObject(replacementSpec)) fail('VALIDATION_FAILED', 'replacement must be an object (a whole document)', { field: 'replacement' });
  for (const key of Object.keys(replacementSpec)) {
    if (key.startsWith('$')) fail('QUERY_ERROR', `the replacement document must not contain update operators (found ${key}); use updateOne for them`, { field: 'replacement', operator: key });
  }
  checkUpsertFlag(options.upsert);
  const sort = compileChangeSort(options.sort, false);
  const replacement = documentFromJson(replacementSpec, { maxDepth: DOCS_LIMITS.maxDocumentDepth });
  const givenId = getOwn(replacement, ID);
  if (givenId !== MISSING && !isValidId(givenId)) fail('VALIDATION_FAILED', '_id must be a string, a number or a boolean', { field: 'replacement._id' });
  const bypass = bypassOption(options.bypassDocumentValidation, 'update');
  const maxTimeMS = maxTimeMSOf(options.maxTimeMS);
  return { run: (store) => runReplace(store, name, filter, hint, replacement, givenId, sort, options.upsert === true, bypass, options.interrupt ?? queryInterrupt(maxTimeMS, options.guard)), checkHint: (store) => checkHint(store, name, filter, hint) };
}

async function runReplace(
  store: TenantStore,
  name: string,
  filter: CompiledFilter,
  hint: Hint | undefined,
  replacement: Doc,
  givenId: unknown,
  sort: CompiledSort | undefined,
  upsert: boolean,
  bypass: boolean,
  interrupt: Interrupt,
): Promise<ChangeRun> {
  const outcome: UpdateOutcome = { matchedCount: 0, modifiedCount: 0 };
  const changed: Changed = { before: undefined, after: undefined };
  const writes = await changeMatches(store, name, filter, false, sort, (m) => {
    outcome.matchedCount = 1;
    if (givenId !== MISSING && compareValues(givenId, m.doc[ID]) !== 0) {
      fail('QUERY_ERROR', `the replacement's _id (${JSON.stringify(givenId)}) differs from the document's (${JSON.stringify(m.doc[ID])}): _id is immutable`, { path: ID });
    }
    const after = withIdFirst(replacement, m.doc[ID]);
    changed.before = m.doc;
    changed.after = after;
    const bytes = encodeChecked(after);
    if (bytes.equals(m.raw)) return;
    checkValidation(store, m.info, after, m.doc, bypass);
    m.ops.push({ op: 'put', tree: m.tree, key: m.pk, value: bytes });
    pushIndexOps(m.ops, m.info, indexChanges(store, m.info, m.pk, m.doc, after, m.pending));
    outcome.modifiedCount = 1;
  }, hint, interrupt);
  if (outcome.matchedCount === 0 && upsert) {
    const fromFilter = filterIdEquality(filter);
    if (givenId !== MISSING && fromFilter !== MISSING && compareValues(givenId, fromFilter) !== 0) {
      fail('QUERY_ERROR', `the replacement's _id (${JSON.stringify(givenId)}) differs from the filter's (${JSON.stringify(fromFilter)})`, { path: ID });
    }
    const id = givenId !== MISSING ? givenId : fromFilter;
    if (id !== MISSING && !isValidId(id)) fail('VALIDATION_FAILED', '_id must be a string, a number or a boolean', { field: 'filter._id' });
    const doc = withIdFirst(replacement, id === MISSING ? newObjectId() : id);
    const inserted = docsInsert(store, name, [doc], 'document', { bypassDocumentValidation: bypass });
    outcome.upsertedId = inserted.result.insertedIds[0]!;
    changed.after = doc;
    writes.push(inserted.durable);
  }
  return { outcome, changed, durable: Promise.all(writes).then(() => undefined) };
}

/** `doc`'s fields after an `_id` of `id` (its own `_id`, if any, dropped). */
function withIdFirst(doc: Doc, id: unknown): Doc {
  const out: Doc = {};
  setOwn(out, ID, id);
  for (const key of Object.keys(doc)) if (key !== ID) setOwn(out, key, doc[key]);
  return out;
}

/**
 * Deletes the first (`multi`: every) matching document.
 * @throws VALIDATION_FAILED / QUERY_ERROR for a bad collection name or filter
 */
export async function docsDelete(store: TenantStore, collection: unknown, filterSpec: unknown, options: { multi: boolean; hint?: unknown } & TimeOptions & LetOptions): Promise<Written<{ deletedCount: number }>> {
  const { deletedCount, durable } = await deleteDocuments(store, collection, filterSpec, options.multi, undefined, options.hint, options);
  return { result: { deletedCount }, durable };
}

/**
 * MongoDB's findOneAndDelete: deletes the first matching document (`sort`: the first in that
 * order) and returns it, with `projection` applied; null when nothing matched.
 * @throws VALIDATION_FAILED / QUERY_ERROR for a bad collection name, filter, sort or projection
 */
export async function docsFindOneAndDelete(store: TenantStore, collection: unknown, filterSpec: unknown, options: { sort?: unknown; projection?: unknown; hint?: unknown } & TimeOptions & LetOptions): Promise<Written<{ document: Doc | null }>> {
  const variables = compileLet(options.let, 'findAndModify');
  const projection = compileFindProjection(options.projection, { filter: () => parseFilter(filterSpec ?? {}, variables?.names, true) }, variables);
  const { deleted, durable } = await deleteDocuments(store, collection, filterSpec, false, options.sort, options.hint, { ...options, variables });
  return { result: { document: returnedDocument({ before: deleted, after: undefined }, 'before', projection) }, durable };
}

function deleteDocuments(
  store: TenantStore,
  collection: unknown,
  filterSpec: unknown,
  multi: boolean,
  sortSpec: unknown,
  hintSpec: unknown,
  time: TimeOptions & LetOptions,
): Promise<DeleteRun> {
  return prepareDelete(collection, filterSpec, multi, sortSpec, hintSpec, time).run(store);
}

/** What a delete did: its count, the document a single-document delete removed, and its durability. */
export interface DeleteRun {
  deletedCount: number;
  deleted: Doc | undefined;
  durable: Promise<void>;
}

/**
 * docsDelete's checks, which need no store (the collection name, filter, sort and hint), and the
 * delete itself, to run on a store.
 * @throws VALIDATION_FAILED / QUERY_ERROR as docsDelete
 */
export function prepareDelete(collection: unknown, filterSpec: unknown, multi: boolean, sortSpec: unknown, hintSpec: unknown, time: TimeOptions & LetOptions = {}): PreparedChange<DeleteRun> {
  const name = validateCollectionName(collection);
  if (filterSpec === undefined) fail('VALIDATION_FAILED', 'filter is required', { field: 'filter' });
  const lets = letOf(time, 'delete');
  const filter = bindFilter(compileFilter(filterSpec, lets?.names, TEXT_ALLOWED), lets);
  const hint = parseHint(hintSpec);
  const sort = compileChangeSort(sortSpec, multi);
  const maxTimeMS = maxTimeMSOf(time.maxTimeMS);
  return { run: (store) => runDelete(store, name, filter, hint, sort, multi, time.interrupt ?? queryInterrupt(maxTimeMS, time.guard)), checkHint: (store) => checkHint(store, name, filter, hint) };
}

async function runDelete(store: TenantStore, name: string, filter: CompiledFilter, hint: Hint | undefined, sort: CompiledSort | undefined, multi: boolean, interrupt: Interrupt): Promise<DeleteRun> {
  let deletedCount = 0;
  let deleted: Doc | undefined;
  const writes = await changeMatches(store, name, filter, multi, sort, (m) => {
    m.ops.push({ op: 'delete', tree: m.tree, key: m.pk });
    pushIndexOps(m.ops, m.info, indexChanges(store, m.info, m.pk, m.doc, undefined, m.pending));
    deleted = m.doc;
    deletedCount++;
  }, hint, interrupt);
  return { deletedCount, deleted, durable: Promise.all(writes).then(() => undefined) };
}

/** A document a write matched, with the batch its chunk's changes go into (see changeMatches). */
interface Match {
  readonly info: CollectionInfo;
  readonly tree: string;
  readonly pk: Buffer;
  /** Its stored bytes. */
  readonly raw: Buffer;
  readonly doc: Doc;
  /** The chunk's batch: the change pushes its ops here. */
  readonly ops: BatchOp[];
  /** Unique index keys the chunk's earlier changes claim (see indexChanges). */
  readonly pending: Map<string, Buffer>;
}

/**
 * Calls `change` for the first (`multi`: every) document `filter` matches; with `sort` (one
 * document only), the first in that order (changeFirstSorted). Candidates come a chunk at a time;
 * each chunk is re-read, re-tested, changed and written as one batch in one turn, so a check a
 * change makes (a unique key) still holds when its batch applies. A change that throws writes
 * nothing of its chunk. Returns the chunks' writes.
 */
async function changeMatches(
  store: TenantStore,
  name: string,
  filter: CompiledFilter,
  multi: boolean,
  sort: CompiledSort | undefined,
  change: (match: Match) => void,
  hint: Hint | undefined,
  interrupt: Interrupt,
): Promise<Array<Promise<unknown>>> {
  if (sort !== undefined) return changeFirstSorted(store, name, filter, sort, change, hint, interrupt);
  const now = changeNow(store, name, filter, multi, change, hint);
  if (now !== undefined) return now;
  const writes: Array<Promise<unknown>> = [];
  for await (const keys of candidateKeys(store, name, filter, hint, interrupt)) {
    const info = collectionToWrite(store, name);
    if (info === undefined) break; // dropped meanwhile
    const write = changeInOneTurn(store, info, keys, filter, multi, change);
    if (write.promise !== undefined) writes.push(write.promise);
    if (write.changed && !multi) break;
  }
  return writes;
}

/**
 * changeMatches in the calling turn, from the live store, when the plan's first chunk holds a
 * match (one document to change) or its chunks hold every candidate (all of them); undefined when
 * the search goes on past a chunk, and the snapshot path searches again from the start.
 *
 * No snapshot, so no new write epoch: a snapshot open at a write makes every dirty page
 * copy-on-write, and updates by `_id` arriving back to back each copied their leaf, its branches
 * and the root again, though an earlier update had already copied them (docs/benchmarks.md,
 * session 28). Reading and writing in one turn is consistent by itself: nothing runs in between.
 */
function changeNow(store: TenantStore, name: string, filter: CompiledFilter, multi: boolean, change: (match: Match) => void, hint: Hint | undefined): Array<Promise<unknown>> | undefined {
  const info = collectionToWrite(store, name);
  if (info === undefined) return [];
  const plan = planQuery(info, filter.ast, [], hint, filter.vars);
  const live = liveReader(store);
  const keys: Buffer[] = [];
  // The loop ends (closing the scan and any snapshot it holds) before anything is written.
  for (const chunk of candidateChunks(live, info, plan, { keys: 0, docs: 0 }, { filter, whole: false })) {
    for (const c of chunk.candidates) if (filter.test(c.doc)) keys.push(idKey(idOf(c.doc)));
    if (!multi && keys.length > 0) break;
    if (chunk.more) return undefined;
  }
  // Counted once the change is settled here (otherwise its search on a snapshot counts it).
  countPlanReads(store, info, plan);
  if (keys.length === 0) return [];
  const write = changeInOneTurn(store, info, keys, filter, multi, change);
  return write.promise === undefined ? [] : [write.promise];
}

/**
 * The documents of `keys` (primary keys) that still match `filter`, read, changed by `change`
 * (the first only unless `multi`) and written as one batch, all in this turn. `changed`: one was.
 */
function changeInOneTurn(
  store: TenantStore,
  info: CollectionInfo,
  keys: readonly Buffer[],
  filter: CompiledFilter,
  multi: boolean,
  change: (match: Match) => void,
): { changed: boolean; promise: Promise<unknown> | undefined } {
  const flags = flagsOf(info);
  const tree = docsTree(info);
  const ops: BatchOp[] = [];
  const pending = new Map<string, Buffer>();
  let changed = false;
  for (const pk of keys) {
    const raw = store.get(tree, pk);
    if (raw === undefined) continue;
    const doc = decodeDocument(raw);
    if (!filter.test(doc)) continue;
    change({ info, tree, pk, raw, doc, ops, pending });
    changed = true;
    if (!multi) break;
  }
  if (flagsOf(info) !== flags) ops.unshift(putCollection(info));
  return { changed, promise: ops.length > 0 ? store.write(ops) : undefined };
}

/** Searches for the first match in sort order before a sorted change gives up (each search after a lost race). */
const SORTED_CHANGE_ATTEMPTS = 64;
/** The best matches a sorted change's search keeps, so a race lost to other writers of the first ones rarely costs another search. */
const SORTED_CHANGE_CANDIDATES = 16;

/**
 * changeMatches of one document with a sort. The best SORTED_CHANGE_CANDIDATES matches in `sort`
 * order are found as a find with that sort finds them (an index serves the sort when it can);
 * then, in one turn, they are read again and the best of those that still match (by their
 * current values) is changed. When concurrent writes changed or removed all of them meanwhile,
 * the search runs again (MongoDB retries a findAndModify's write conflict alike). A document
 * that began to match, or moved ahead in the order, after the search started is not seen by it:
 * under concurrent writes the choice is the best of what the search saw (docs/mql.md).
 * @throws CONFLICT when every candidate was taken away SORTED_CHANGE_ATTEMPTS times in a row
 */
async function changeFirstSorted(store: TenantStore, name: string, filter: CompiledFilter, sort: CompiledSort, change: (match: Match) => void, hint: Hint | undefined, interrupt: Interrupt): Promise<Array<Promise<unknown>>> {
  const query: Query = { filter, sort, skip: 0, limit: SORTED_CHANGE_CANDIDATES, hint, text: filterTextSearch(filter.ast), textAtTop: filterTextAtTop(filter.ast), allowDiskUse: true };
  // A few candidates: held within the default bound, never spilled.
  const memory = queryMemory(undefined, true, interrupt);
  if (query.text === undefined && sort.keys.some((k) => k.meta !== undefined)) fail('QUERY_ERROR', TEXT_SCORE_UNAVAILABLE, { operator: '$meta' });
  const whole = compileProjection(undefined);
  for (let attempt = 0; attempt < SORTED_CHANGE_ATTEMPTS; attempt++) {
    const found = findInOneTurn(store, name, query, whole, memory) ?? (await findOnSnapshot(store, name, query, whole, false, memory)).documents;
    if (found.length === 0) return [];
    const info = collectionToWrite(store, name);
    if (info === undefined) return []; // dropped meanwhile
    // The best of the candidates as they are now (unchanged candidates keep the search's order).
    const tree = docsTree(info);
    let best: { pk: Buffer; keys: unknown[] } | undefined;
    for (const candidate of found) {
      const pk = idKey(idOf(candidate));
      const raw = store.get(tree, pk);
      if (raw === undefined) continue;
      const doc = decodeDocument(raw);
      if (!filter.test(doc)) continue;
      if (query.text !== undefined) giveTextScore(query.text, query.textAtTop === true, doc);
      const keys = sort.keyOf(doc);
      if (best === undefined || sort.compareKeyed(keys, best.keys) < 0) best = { pk, keys };
    }
    if (best !== undefined) {
      const write = changeInOneTurn(store, info, [best.pk], filter, false, change);
      return write.promise === undefined ? [] : [write.promise];
    }
    await nextTurn();
  }
  fail('CONFLICT', `the documents matching the filter first in sort order were changed by other writes ${SORTED_CHANGE_ATTEMPTS} times in a row; retry`);
}

/**
 * MongoDB's distinct: the distinct values of `key` (a dot path) among the documents `filter`
 * matches, in BSON order. An array holds its elements as values (not the array itself; an array
 * inside it is one value); documents without the field add nothing; 1 and 1.0, and equal
 * documents, are one value. Read on a snapshot, a chunk per turn.
 * @throws VALIDATION_FAILED for a bad collection name or key; QUERY_ERROR for a bad filter or a
 *   result past DOCS_MODEL_LIMITS.maxResultBytes
 */
export async function docsDistinct(store: TenantStore, collection: unknown, key: unknown, options: { filter?: unknown; hint?: unknown; maxTimeMS?: unknown }, guard?: QueryGuard): Promise<unknown[]> {
  const name = validateCollectionName(collection);
  if (typeof key !== 'string' || key === '' || key.includes('\0') || key.startsWith('$') || key.split('.').some((p) => p === '')) {
    fail('VALIDATION_FAILED', 'key must be a field name or dot path such as "address.city"', { field: 'key' });
  }
  const filter = compileFilter(options.filter ?? {}, undefined, TEXT_ALLOWED);
  const hint = parseHint(options.hint);
  const interrupt = queryInterrupt(options.maxTimeMS, guard);
  const parts = parsePath(key);
  return onCollectionSnapshot(store, name, async (info, snapshot) => {
    if (info === undefined || snapshot === undefined) return [];
    const plan = planQuery(info, filter.ast, [], hint, filter.vars);
    countPlanReads(store, info, plan);
    const seen = new DistinctValues();
    for await (const chunk of candidates(snapshot, info, plan, { keys: 0, docs: 0 }, { filter, whole: false, extra: [key] }, interrupt)) {
      for (const c of chunk) {
        if (!filter.test(c.doc)) continue;
        for (const v of collectValues(c.doc, parts, 'traverse-omit-array')) if (v !== MISSING) seen.add(v);
      }
    }
    return seen.sorted();
  });
}

/** The distinct values distinct collects (ValueSet: equal in BSON terms is one), within the result bound. */
class DistinctValues {
  readonly #set = new ValueSet();
  #bytes = 0;

  add(value: unknown): void {
    if (!this.#set.add(value)) return;
    this.#bytes += approxBytes(value);
    if (this.#bytes > DOCS_MODEL_LIMITS.maxResultBytes) {
      fail('QUERY_ERROR', `the distinct values exceed ${DOCS_MODEL_LIMITS.maxResultBytes} bytes: narrow the filter`, { limit: DOCS_MODEL_LIMITS.maxResultBytes });
    }
  }

  sorted(): unknown[] {
    return this.#set.values.sort(compareValues);
  }
}

// ---- Collections and indexes ------------------------------------------------------------------------

/** Collections with their document counts, by name. */
export function docsListCollections(store: TenantStore): Array<{ name: string; count: number; indexes: number; createdAt: string; options?: Record<string, unknown> }> {
  return listCollectionInfos(store).map((info) => {
    const options = describeValidation(info.validator);
    return { name: info.name, count: store.count(docsTree(info)), indexes: info.indexes.length + 1, createdAt: new Date(info.createdAt).toISOString(), ...(options !== undefined ? { options } : {}) };
  });
}

/**
 * Creates an empty collection (MongoDB's createCollection), with schema validation when the
 * options ask for it (collection-validator.ts).
 * @throws VALIDATION_FAILED for a bad name or option; QUERY_ERROR for rules that are not a valid filter; CONFLICT when the collection exists
 */
export function docsCreateCollection(store: TenantStore, collection: unknown, options: ValidationOptions = {}): Written<{ created: true }> {
  const name = validateCollectionName(collection);
  const validator = parseValidation(options, undefined);
  // MongoDB's NamespaceExists.
  if (readCollection(store, name) !== undefined) fail('CONFLICT', `Collection already exists. NS: ${name}`, { collection: name });
  const { info, op } = newCollection(store, name, Date.now());
  if (validator !== undefined) info.validator = validator;
  return { result: { created: true }, durable: durableOf(store.write([op, putCollection(info)])) };
}

/**
 * Changes a collection's schema validation (MongoDB's collMod): what the options name, the rest
 * kept. Documents already stored are not checked again.
 * @throws VALIDATION_FAILED for a bad name or option; QUERY_ERROR for rules that are not a valid filter; NOT_FOUND when there is no such collection
 */
export function docsCollMod(store: TenantStore, collection: unknown, options: ValidationOptions & { index?: unknown }): Written<CollModResult> {
  const name = validateCollectionName(collection);
  const info = readCollection(store, name);
  if (info === undefined) fail('NOT_FOUND', `ns does not exist: ${name}`, { collection: name });
  const change = options.index === undefined ? undefined : indexChangeOf(options.index);
  const validates = options.validator !== undefined || options.validationLevel !== undefined || options.validationAction !== undefined;
  const next: CollectionInfo = { ...info };
  if (validates || change === undefined) {
    const validator = parseValidation(options, info.validator);
    if (validator === undefined) delete next.validator;
    else next.validator = validator;
  }
  const result: CollModResult = { modified: true };
  if (change !== undefined) {
    const at = findIndexFor(info, change.target, name);
    const index = info.indexes[at]!;
    const changed: IndexInfo & { hidden?: boolean; expireAfterSeconds?: number } = { ...index };
    if (change.hidden !== undefined) {
      result.hidden_old = index.hidden === true;
      result.hidden_new = change.hidden;
      if (change.hidden) changed.hidden = true;
      else delete changed.hidden;
    }
    if (change.expireAfterSeconds !== undefined) {
      // MongoDB 5.1+: a TTL index's time changes, and a plain index on one field (not _id, text, compound) becomes a TTL index.
      if (index.text !== undefined || index.fields.length !== 1) fail('VALIDATION_FAILED', 'TTL indexes are single-field indexes, compound indexes do not support TTL', { field: 'index.expireAfterSeconds' });
      if (index.expireAfterSeconds !== undefined) result.expireAfterSeconds_old = index.expireAfterSeconds;
      result.expireAfterSeconds_new = change.expireAfterSeconds;
      changed.expireAfterSeconds = change.expireAfterSeconds;
    }
    next.indexes = info.indexes.map((ix, k) => (k === at ? changed : ix));
  }
  return { result, durable: durableOf(store.write([putCollection(next)])) };
}

/** What collMod answers: `modified`, and for an `index` change MongoDB's old and new values of what it changed. */
export interface CollModResult {
  modified: true;
  hidden_old?: boolean;
  hidden_new?: boolean;
  expireAfterSeconds_old?: number;
  expireAfterSeconds_new?: number;
}

/** collMod's `index`: which index (by `name` or `keyPattern`), and what to change. */
interface CollModIndex {
  readonly target: { readonly name: string } | { readonly fields: readonly IndexField[] };
  readonly hidden?: boolean;
  readonly expireAfterSeconds?: number;
}

/** @throws VALIDATION_FAILED for a malformed collMod `index` (MongoDB's rules and words where it has them) */
function indexChangeOf(spec: unknown): CollModIndex {
  if (!isPlainObject(spec)) fail('VALIDATION_FAILED', 'index must be an object: {name or keyPattern, hidden?, expireAfterSeconds?}', { field: 'index' });
  for (const key of Object.keys(spec)) {
    if (!['name', 'keyPattern', 'hidden', 'expireAfterSeconds'].includes(key)) fail('VALIDATION_FAILED', `unsupported index option for collMod: ${key} (name, keyPattern, hidden and expireAfterSeconds are)`, { field: `index.${key}` });
  }
  const { name, keyPattern, hidden, expireAfterSeconds } = spec as Record<string, unknown>;
  if ((name === undefined) === (keyPattern === undefined)) fail('VALIDATION_FAILED', 'must specify either index name or key pattern in collMod index, not both', { field: 'index' });
  if (name !== undefined && (typeof name !== 'string' || name === '')) fail('VALIDATION_FAILED', 'index.name must be a non-empty string', { field: 'index.name' });
  if (hidden !== undefined && typeof hidden !== 'boolean') fail('VALIDATION_FAILED', 'index.hidden must be a boolean', { field: 'index.hidden' });
  if (hidden === undefined && expireAfterSeconds === undefined) fail('VALIDATION_FAILED', 'no expireAfterSeconds or hidden field to update', { field: 'index' });
  const target = name !== undefined ? { name: name as string } : { fields: parseKeys(keyPattern, 'index.keyPattern') };
  const change: { target: CollModIndex['target']; hidden?: boolean; expireAfterSeconds?: number } = { target };
  if (hidden !== undefined) change.hidden = hidden as boolean;
  if (expireAfterSeconds !== undefined) change.expireAfterSeconds = ttlSeconds(expireAfterSeconds, 'index.expireAfterSeconds');
  return change;
}

/** Where collMod's index is in `info.indexes`. @throws VALIDATION_FAILED for `_id_`, NOT_FOUND when there is none (MongoDB's IndexNotFound), CONFLICT when a key pattern names several */
function findIndexFor(info: CollectionInfo, target: CollModIndex['target'], collection: string): number {
  const isId = 'name' in target ? target.name === '_id_' : target.fields.length === 1 && target.fields[0]!.path === ID;
  if (isId) fail('VALIDATION_FAILED', "can't modify the _id index (it cannot be hidden or expire)", { field: 'index' });
  const shown = 'name' in target ? target.name : JSON.stringify(Object.fromEntries(target.fields.map((f) => [f.path, f.direction])));
  const matches = info.indexes.flatMap((ix, k) => ('name' in target ? ix.name === target.name : sameKeyPattern(ix.fields, target.fields)) ? [k] : []);
  if (matches.length === 0) fail('NOT_FOUND', `cannot find index ${shown} for ns ${collection}`, { index: shown });
  if (matches.length > 1) fail('CONFLICT', `index keyPattern ${shown} matches more than one index: name it instead`, { index: shown });
  return matches[0]!;
}

/**
 * Drops a collection with its documents and indexes, atomically. `dropped` is false when there
 * was none. @throws VALIDATION_FAILED for a bad name
 */
export function docsDropCollection(store: TenantStore, collection: unknown): Written<{ dropped: boolean }> {
  const name = validateCollectionName(collection);
  const info = readCollection(store, name);
  if (info === undefined) return { result: { dropped: false }, durable: DONE };
  return { result: { dropped: true }, durable: durableOf(store.write(dropCollectionOps(info))) };
}

/**
 * Renames a collection (MongoDB's renameCollection): its documents and indexes go with it, in one
 * atomic batch of the catalog; its trees are named by its id, so nothing is copied. With
 * `dropTarget`, a collection already named `to` is dropped in the same batch.
 * @throws VALIDATION_FAILED for a bad name, flag or the same name; NOT_FOUND when there is no such collection; CONFLICT when `to` exists without dropTarget
 */
export function docsRenameCollection(store: TenantStore, collection: unknown, to: unknown, options: { dropTarget?: unknown } = {}): Written<{ renamed: true }> {
  const name = validateCollectionName(collection);
  const target = validateCollectionName(to, 'to');
  if (options.dropTarget !== undefined && typeof options.dropTarget !== 'boolean') fail('VALIDATION_FAILED', 'dropTarget must be a boolean', { field: 'dropTarget' });
  // MongoDB's messages (IllegalOperation, NamespaceNotFound, NamespaceExists).
  if (name === target) fail('VALIDATION_FAILED', "Can't rename a collection to itself", { field: 'to' });
  const info = readCollection(store, name);
  if (info === undefined) fail('NOT_FOUND', `source namespace does not exist: ${name}`, { collection: name });
  const existing = readCollection(store, target);
  if (existing !== undefined && options.dropTarget !== true) fail('CONFLICT', `target namespace exists: ${target}`, { collection: target });
  const ops: BatchOp[] = existing === undefined ? [] : dropCollectionOps(existing);
  ops.push(deleteCollection(info), putCollection({ ...info, name: target }));
  return { result: { renamed: true }, durable: durableOf(store.write(ops)) };
}

/** The number of documents in a collection, from its tree's count (MongoDB's estimatedDocumentCount; exact here). 0 when there is none. */
export function docsEstimatedCount(store: TenantStore, collection: unknown): number {
  const info = readCollectionCached(store, store, validateCollectionName(collection));
  return info === undefined ? 0 : store.count(docsTree(info));
}

/** An index as listIndexes shows it (MongoDB's shape). */
export interface IndexDescription {
  name: string;
  key: Record<string, 1 | -1 | 'text'>;
  unique?: boolean;
  expireAfterSeconds?: number;
  sparse?: boolean;
  partialFilterExpression?: Doc;
  multikey?: boolean;
  /** Not read by queries (MongoDB's hidden index). */
  hidden?: boolean;
  /** The build has not finished (it was interrupted: createIndex again with the same spec resumes it). */
  building?: boolean;
}

function describeIndex(index: IndexInfo): IndexDescription {
  // A text index as MongoDB lists it: its key pattern, then weights and languages.
  if (index.text !== undefined) {
    const out = { name: index.name, key: textKeyPattern(index.fields), ...describeTextIndex(index.text) } as IndexDescription;
    if (index.partialFilterExpression !== undefined) out.partialFilterExpression = index.partialFilterExpression;
    if (index.hidden === true) out.hidden = true;
    if ((index as { building?: boolean }).building === true) out.building = true;
    return out;
  }
  const out: IndexDescription = { name: index.name, key: Object.fromEntries(index.fields.map((f) => [f.path, f.direction])) };
  if (index.unique) out.unique = true;
  if (index.expireAfterSeconds !== undefined) out.expireAfterSeconds = index.expireAfterSeconds;
  if (index.sparse === true) out.sparse = true;
  if (index.partialFilterExpression !== undefined) out.partialFilterExpression = index.partialFilterExpression;
  if (index.hidden === true) out.hidden = true;
  if (index.multikey) out.multikey = true;
  if ((index as { building?: boolean }).building === true) out.building = true;
  return out;
}

/**
 * What $indexStats gives for each index of `info`, `_id_` first: MongoDB's `{name, key, host,
 * accesses: {ops, since}, spec: {v: 2, key, name, ...}}` (`building: true` while a build runs).
 */
function indexStatsOf(store: TenantStore, info: CollectionInfo): Doc[] {
  const host = hostname();
  const one = (shown: IndexDescription, indexId: number): Doc => {
    const { name, key, building, multikey: _multikey, ...options } = shown;
    const accesses = accessesOf(store, info.id, indexId);
    const out: Doc = { name, key, host, accesses: { ops: accesses.ops, since: accesses.since }, spec: { v: 2, key, name, ...options } };
    if (building === true) out['building'] = true;
    return out;
  };
  return [one({ name: '_id_', key: { _id: 1 } }, ID_INDEX_ID), ...info.indexes.map((index) => one(describeIndex(index), index.id))];
}

/** The database name $collStats gives in `ns`: each tenant's collections are one database. */
const TENANT_DATABASE = 'tenant';

/**
 * Pages $collStats counts between turns of the event loop: a page not cached costs a read and a
 * decode (~50-85 µs here), so a turn stays within a few ms.
 */
const COLL_STATS_PAGES_PER_TURN = 64;

/**
 * What $collStats gives for the collection `name` (`info` on `snapshot`): `{ns, host, localTime}`,
 * and when asked MongoDB's storageStats (sizes divided by `scale`, whole numbers) and count. The
 * collection's documents and its `_id` index are one B+tree (clustered, as a MongoDB clustered
 * collection): its leaf pages and the overflow pages of large documents are its storageSize, its
 * branch pages the `_id_` index's size; every other index is its own tree. `size` is the
 * documents' stored bytes (MessagePack), summed from every leaf as its pages are counted
 * (MongoDB keeps it as metadata); pages are counted in slices between turns of the event loop,
 * on the snapshot.
 * @throws NOT_FOUND for storageStats or count of a collection that does not exist
 */
async function collStatsOf(name: string, info: CollectionInfo | undefined, snapshot: Snapshot | undefined, spec: CollStatsSpec, interrupt: Interrupt): Promise<Doc> {
  const ns = `${TENANT_DATABASE}.${name}`;
  const out: Doc = { ns, host: hostname(), localTime: new Date() };
  if (spec.storageStats === undefined && !spec.count) return out;
  if (info === undefined || snapshot === undefined) {
    fail('NOT_FOUND', `Unable to retrieve ${spec.storageStats !== undefined ? 'storageStats' : 'count'} in $collStats stage :: caused by :: Collection [${ns}] not found.`, { collection: name });
  }
  const tree = docsTree(info);
  const count = snapshot.count(tree);
  if (spec.storageStats !== undefined) {
    const { scale } = spec.storageStats;
    const scaled = (bytes: number): number => Math.trunc(bytes / scale);
    const pagesOf = async (t: string): Promise<TreePageStats> => {
      const stats = emptyPageStats();
      for (const _ of snapshot.pageStatsSteps(t, stats, COLL_STATS_PAGES_PER_TURN)) {
        await nextTurn();
        interrupt.check();
      }
      return stats;
    };
    const docs = await pagesOf(tree);
    // Each stored document is a format byte, then its MessagePack.
    const size = docs.valueBytes - count;
    const indexSizes: Doc = { _id_: scaled(docs.branches * PAGE_SIZE) };
    let totalIndexBytes = docs.branches * PAGE_SIZE;
    for (const index of info.indexes) {
      const pages = await pagesOf(indexTree(info, index));
      const bytes = (pages.leaves + pages.branches + pages.overflowPages) * PAGE_SIZE;
      indexSizes[index.name] = scaled(bytes);
      totalIndexBytes += bytes;
    }
    const storageBytes = (docs.leaves + docs.overflowPages) * PAGE_SIZE;
    const storageStats: Doc = { size: scaled(size), count };
    if (count > 0) storageStats['avgObjSize'] = Math.trunc(size / count);
    Object.assign(storageStats, {
      numOrphanDocs: 0,
      storageSize: scaled(storageBytes),
      freeStorageSize: 0,
      capped: false,
      nindexes: 1 + info.indexes.length,
      indexBuilds: info.indexes.filter((index) => (index as { building?: boolean }).building === true).map((index) => index.name),
      totalIndexSize: scaled(totalIndexBytes),
      totalSize: scaled(storageBytes + totalIndexBytes),
      indexSizes,
      scaleFactor: scale,
    });
    out['storageStats'] = storageStats;
  }
  if (spec.count) out['count'] = count;
  return out;
}

/** The indexes of a collection, `_id_` first. @throws NOT_FOUND when there is no such collection */
export function docsListIndexes(store: TenantStore, collection: unknown): IndexDescription[] {
  const name = validateCollectionName(collection);
  const info = readCollection(store, name);
  if (info === undefined) fail('NOT_FOUND', `collection ${name} does not exist`, { collection: name });
  return [{ name: '_id_', key: { _id: 1 }, unique: true }, ...info.indexes.map(describeIndex)];
}

function parseKeys(keys: unknown, field = 'keys'): IndexField[] {
  if (!isPlainObject(keys) || Object.keys(keys).length === 0) fail('VALIDATION_FAILED', `${field} must be a non-empty object such as {"field": 1}`, { field });
  const fields: IndexField[] = [];
  for (const [path, direction] of Object.entries(keys)) {
    if (direction !== 1 && direction !== -1) fail('VALIDATION_FAILED', `index key ${path} must be 1 or -1 (text, hashed and geo indexes are not supported)`, { field: `${field}.${path}` });
    // As MongoDB: no empty component and none starting with `$` (stored field names never do).
    if (path === '' || path.split('.').some((p) => p === '' || p.startsWith('$'))) fail('VALIDATION_FAILED', `invalid index key path '${path}'`, { field });
    fields.push({ path, direction });
  }
  if (fields.length > 32) fail('VALIDATION_FAILED', 'an index has at most 32 fields', { field });
  return fields;
}

/**
 * A hint as a key pattern (or `{$natural: 1 | -1}`), for a MongoDB that holds this collection's
 * indexes under other names (the mirror, server/mongo-mirror.ts); undefined without a hint.
 * @throws VALIDATION_FAILED for a malformed hint; QUERY_ERROR for an index name the collection does not have
 */
export function docsHintKeyPattern(store: TenantStore, collection: unknown, spec: unknown): Record<string, 1 | -1> | undefined {
  const hint = parseHint(spec);
  if (hint === undefined) return undefined;
  if (hint.kind === 'natural') return { $natural: hint.reverse ? -1 : 1 };
  const fields = hint.kind === 'keys' ? hint.fields : hint.name === '_id_' ? [{ path: ID, direction: 1 as const }] : readCollection(store, validateCollectionName(collection))?.indexes.find((i) => i.name === hint.name)?.fields;
  if (fields === undefined) fail('QUERY_ERROR', `hint provided does not correspond to an existing index: ${JSON.stringify(spec)} (no such index)`, { hint: JSON.stringify(spec) });
  return Object.fromEntries(fields.map((f) => [f.path, f.direction]));
}

/**
 * A request's `hint` (MongoDB's): an index name, an index key pattern, or `{$natural: 1 | -1}`;
 * undefined when absent. Which index it names is decided when the query is planned.
 * @throws VALIDATION_FAILED for a hint of another shape
 */
export function parseHint(spec: unknown): Hint | undefined {
  if (spec === undefined) return undefined;
  if (typeof spec === 'string') {
    if (spec === '') fail('VALIDATION_FAILED', 'hint must be an index name or a key pattern such as {"field": 1}', { field: 'hint' });
    return { kind: 'name', name: spec };
  }
  if (isPlainObject(spec) && Object.hasOwn(spec, '$natural')) {
    const direction = spec['$natural'];
    if (Object.keys(spec).length !== 1 || (direction !== 1 && direction !== -1)) fail('VALIDATION_FAILED', 'a $natural hint is {"$natural": 1} or {"$natural": -1}', { field: 'hint' });
    return { kind: 'natural', reverse: direction === -1 };
  }
  if (!isPlainObject(spec)) fail('VALIDATION_FAILED', 'hint must be an index name or a key pattern such as {"field": 1}', { field: 'hint' });
  return { kind: 'keys', fields: parseKeys(spec, 'hint') };
}

/** Options of createIndex. */
export interface CreateIndexOptions extends TextIndexOptions {
  name?: unknown;
  unique?: unknown;
  expireAfterSeconds?: unknown;
  sparse?: unknown;
  partialFilterExpression?: unknown;
  /** MongoDB 4.4's hidden index: maintained, never read by a query. */
  hidden?: unknown;
}

const MAX_TTL_SECONDS = 2_147_483_647;

/** createIndex's `hidden`. @throws VALIDATION_FAILED when not a boolean */
function hiddenOption(v: unknown): boolean {
  if (v !== undefined && typeof v !== 'boolean') fail('VALIDATION_FAILED', 'hidden must be a boolean', { field: 'hidden' });
  return v === true;
}

/** expireAfterSeconds as createIndex and collMod take it. @throws VALIDATION_FAILED otherwise */
function ttlSeconds(v: unknown, field = 'expireAfterSeconds'): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > MAX_TTL_SECONDS) fail('VALIDATION_FAILED', `expireAfterSeconds must be an integer between 0 and ${MAX_TTL_SECONDS}`, { field });
  return v;
}

/**
 * Creates an index (and the collection, when needed) and builds it from the documents already
 * there. An identical index already present is a no-op (`created: false`).
 * @throws VALIDATION_FAILED for a bad spec; CONFLICT when the name is taken by a different index or the collection has too many
 * @throws DUPLICATE_KEY when a unique index meets a repeated key in the data (the index is not created)
 */
export async function docsCreateIndex(store: TenantStore, collection: unknown, keys: unknown, options: CreateIndexOptions = {}): Promise<Written<{ name: string; created: boolean }>> {
  const name = validateCollectionName(collection);
  if (isTextKeyPattern(keys)) return createTextIndex(store, name, keys as Doc, options);
  const fields = parseKeys(keys);
  if (options.unique !== undefined && typeof options.unique !== 'boolean') fail('VALIDATION_FAILED', 'unique must be a boolean', { field: 'unique' });
  const unique = options.unique === true;
  let ttl: number | undefined;
  if (options.expireAfterSeconds !== undefined) {
    const v = ttlSeconds(options.expireAfterSeconds);
    if (fields.length !== 1) fail('VALIDATION_FAILED', 'a TTL index (expireAfterSeconds) has exactly one field', { field: 'expireAfterSeconds' });
    if (fields[0]!.path === ID) fail('VALIDATION_FAILED', 'the _id field cannot have a TTL index', { field: 'expireAfterSeconds' });
    ttl = v;
  }
  if (options.sparse !== undefined && typeof options.sparse !== 'boolean') fail('VALIDATION_FAILED', 'sparse must be a boolean', { field: 'sparse' });
  const sparse = options.sparse === true;
  const partial = options.partialFilterExpression === undefined ? undefined : validatePartialFilter(options.partialFilterExpression);
  if (sparse && partial !== undefined) fail('VALIDATION_FAILED', 'cannot mix "partialFilterExpression" and "sparse" options', { field: 'sparse' });
  const hidden = hiddenOption(options.hidden);
  if (fields.length === 1 && fields[0]!.path === ID) {
    if (hidden) fail('VALIDATION_FAILED', "can't hide _id index", { field: 'hidden' });
    if (unique || ttl !== undefined || sparse || partial !== undefined) fail('VALIDATION_FAILED', 'the _id index is built in, always unique and holds every document', { field: 'keys' });
    return { result: { name: '_id_', created: false }, durable: DONE };
  }
  const indexName = options.name === undefined ? fields.map((f) => `${f.path}_${f.direction}`).join('_') : options.name;
  if (typeof indexName !== 'string' || indexName.length === 0 || indexName.length > 128 || indexName === '_id_') fail('VALIDATION_FAILED', 'name must be a string of 1-128 characters other than _id_', { field: 'name' });

  // Register the index (writes maintain it from now on), then fill it from a snapshot taken in the same turn.
  const ops: BatchOp[] = [];
  const { info } = collectionForWrite(store, name, ops);
  const partialText = partial === undefined ? undefined : JSON.stringify(partial);
  const same = (i: IndexInfo): boolean => sameKeyPattern(i.fields, fields);
  const samePartial = (i: IndexInfo): boolean => (i.partialFilterExpression === undefined ? undefined : JSON.stringify(i.partialFilterExpression)) === partialText;
  // As MongoDB: one index per key pattern, except partial indexes whose filters differ (each under its own name).
  const clashes = (i: IndexInfo): boolean => same(i) && !(partial !== undefined && i.partialFilterExpression !== undefined && !samePartial(i));
  const existing = info.indexes.find((i) => i.name === indexName) ?? info.indexes.find(clashes);
  if (existing !== undefined) {
    const sameOptions = existing.unique === unique && existing.expireAfterSeconds === ttl && (existing.sparse === true) === sparse && samePartial(existing);
    if (existing.name === indexName && same(existing) && sameOptions) {
      if ((existing as { building?: boolean }).building !== true) return { result: { name: indexName, created: false }, durable: DONE };
    } else {
      fail('CONFLICT', existing.name === indexName ? `an index named ${indexName} with a different specification exists` : `an index with the same keys exists under the name ${existing.name}`, { index: existing.name });
    }
  }
  if (existing === undefined && info.indexes.length >= MAX_INDEXES) fail('CONFLICT', `a collection has at most ${MAX_INDEXES + 1} indexes`, { limit: MAX_INDEXES + 1 });
  const fresh: IndexInfo = { id: info.nextIndexId, name: indexName, fields, unique, multikey: false, lossy: false };
  if (ttl !== undefined) (fresh as { expireAfterSeconds?: number }).expireAfterSeconds = ttl;
  if (sparse) (fresh as { sparse?: boolean }).sparse = true;
  if (partial !== undefined) (fresh as { partialFilterExpression?: Doc }).partialFilterExpression = partial;
  // An equivalent index already there keeps its own hidden state (collMod changes it), as in MongoDB.
  if (hidden) (fresh as { hidden?: boolean }).hidden = true;
  return buildIndex(store, name, info, ops, existing ?? fresh, existing === undefined);
}

/**
 * Registers `index` (when `fresh`, in the batch `ops` that may create the collection) so that
 * writes maintain it from then on, then fills it from a snapshot taken in the same turn, a chunk
 * of documents per batch; its `building` mark goes once every document is in. A failed build
 * drops the index and nothing else. An index already registered and still `building` (an
 * interrupted build) is filled again: its entries are idempotent puts.
 * @throws DUPLICATE_KEY when a unique index meets a repeated key; CONFLICT when the collection or index is dropped meanwhile
 */
async function buildIndex(store: TenantStore, name: string, info: CollectionInfo, ops: BatchOp[], index: IndexInfo & { building?: boolean }, fresh: boolean): Promise<Written<{ name: string; created: boolean }>> {
  const indexName = index.name;
  if (fresh) {
    index.building = true;
    info.nextIndexId++;
    info.indexes.push(index);
    ops.push(putCollection(info));
    await store.write(ops);
  }
  const writes: Array<Promise<unknown>> = [];
  try {
    const snapshot = store.snapshot([docsTree(info)]);
    try {
      for await (const entries of snapshot.scanChunks(docsTree(info), {}, CHUNK)) {
        // One turn: index the live version of each document (a write since the snapshot already maintained it).
        const live = readCollection(store, name);
        const current = live?.indexes.find((i) => i.id === index.id);
        if (live === undefined || current === undefined) fail('CONFLICT', `collection ${name} or its index ${indexName} was dropped while the index was being built`);
        const flags = flagsOf(live);
        const batch: BatchOp[] = [];
        const tree = docsTree(live);
        // Keys this chunk claims: the batch applies after the loop, so the store cannot tell yet.
        const pending = new Map<string, Buffer>();
        for (const [pk] of entries) {
          const raw = store.get(tree, pk);
          if (raw === undefined) continue;
          const doc = decodeDocument(raw);
          const change = indexChanges(store, { ...live, indexes: [current] }, pk, undefined, doc, pending);
          pushIndexOps(batch, live, change);
        }
        if (flagsOf(live) !== flags) batch.unshift(putCollection(live));
        if (batch.length > 0) writes.push(store.write(batch));
      }
    } finally {
      snapshot.close();
    }
  } catch (err) {
    // The build failed (a duplicate in a unique index, most likely): the index goes, nothing else.
    const live = readCollection(store, name);
    if (live !== undefined && live.indexes.some((i) => i.id === index.id)) {
      live.indexes = live.indexes.filter((i) => i.id !== index.id);
      await store.write([putCollection(live), { op: 'dropTree', tree: indexTree(live, index) }]).catch(() => undefined);
    }
    if (isTetraError(err, 'DUPLICATE_KEY')) {
      fail('DUPLICATE_KEY', `index build failed: ${err.message}`, err.details);
    }
    throw err;
  }
  await Promise.all(writes);
  const live = readCollection(store, name);
  const built = live?.indexes.find((i) => i.id === index.id) as (IndexInfo & { building?: boolean }) | undefined;
  if (live === undefined || built === undefined) fail('CONFLICT', `collection ${name} or its index ${indexName} was dropped while the index was being built`);
  delete built.building;
  return { result: { name: indexName, created: true }, durable: durableOf(store.write([putCollection(live)])) };
}

/**
 * createIndex of a text index (`{title: "text", body: "text"}`, `{"$**": "text"}` for every
 * string field, or compound: `{category: 1, body: "text", views: -1}`), with its weights and
 * languages, and as MongoDB allows, a `partialFilterExpression`. One per collection, as in
 * MongoDB; the same one again is a no-op. Its catalog fields are MongoDB's key pattern
 * (`category`, `_fts`, `_ftsx`, `views`). Text indexes are sparse by nature (a document without
 * indexed text has no entry), so `sparse` is accepted and changes nothing; unique and TTL text
 * indexes are refused.
 * @throws VALIDATION_FAILED for a bad spec (MongoDB's messages), or a document with an array in a prefix or suffix field; CONFLICT for a second text index, a name taken, or too many indexes
 */
async function createTextIndex(store: TenantStore, name: string, keys: Doc, options: CreateIndexOptions): Promise<Written<{ name: string; created: boolean }>> {
  const { spec, prefix, suffix, defaultName } = parseTextIndex(keys, options);
  if (options.unique === true) fail('VALIDATION_FAILED', 'unsupported: a unique text index', { field: 'unique' });
  if (options.expireAfterSeconds !== undefined) fail('VALIDATION_FAILED', 'unsupported: a TTL text index (expireAfterSeconds)', { field: 'expireAfterSeconds' });
  if (options.sparse !== undefined && typeof options.sparse !== 'boolean') fail('VALIDATION_FAILED', 'sparse must be a boolean', { field: 'sparse' });
  const partial = options.partialFilterExpression === undefined ? undefined : validatePartialFilter(options.partialFilterExpression);
  if (options.sparse === true && partial !== undefined) fail('VALIDATION_FAILED', 'cannot mix "partialFilterExpression" and "sparse" options', { field: 'sparse' });
  const fields = textIndexFields(prefix, suffix);
  const indexName = options.name === undefined ? defaultName : options.name;
  if (typeof indexName !== 'string' || indexName.length === 0 || indexName.length > 128 || indexName === '_id_') fail('VALIDATION_FAILED', 'name must be a string of 1-128 characters other than _id_', { field: 'name' });
  const ops: BatchOp[] = [];
  const { info } = collectionForWrite(store, name, ops);
  const named = info.indexes.find((i) => i.name === indexName);
  const text = info.indexes.find((i) => i.text !== undefined);
  const same = (i: IndexInfo): boolean =>
    i.text !== undefined &&
    sameTextIndex(i.text, spec) &&
    JSON.stringify(i.fields) === JSON.stringify(fields) &&
    JSON.stringify(i.partialFilterExpression ?? null) === JSON.stringify(partial ?? null);
  if (named !== undefined && !same(named)) fail('CONFLICT', `an index named ${indexName} with a different specification exists`, { index: indexName });
  // MongoDB's message (index_catalog_impl.cpp).
  if (text !== undefined && text !== named) fail('CONFLICT', `only one text index per collection allowed, found existing text index "${text.name}"`, { index: text.name });
  if (named !== undefined && (named as { building?: boolean }).building !== true) return { result: { name: indexName, created: false }, durable: DONE };
  if (named === undefined && info.indexes.length >= MAX_INDEXES) fail('CONFLICT', `a collection has at most ${MAX_INDEXES + 1} indexes`, { limit: MAX_INDEXES + 1 });
  const fresh: IndexInfo = { id: info.nextIndexId, name: indexName, fields, unique: false, text: spec, multikey: false, lossy: false };
  if (partial !== undefined) (fresh as { partialFilterExpression?: Doc }).partialFilterExpression = partial;
  if (hiddenOption(options.hidden)) (fresh as { hidden?: boolean }).hidden = true;
  return buildIndex(store, name, info, ops, named ?? fresh, named === undefined);
}

/**
 * Drops an index by name (or key pattern). @throws NOT_FOUND when there is no such index; VALIDATION_FAILED for `_id_`
 */
export function docsDropIndex(store: TenantStore, collection: unknown, index: unknown): Written<{ dropped: string }> {
  const name = validateCollectionName(collection);
  const info = readCollection(store, name);
  if (info === undefined) fail('NOT_FOUND', `collection ${name} does not exist`, { collection: name });
  const target = indexNamed(info, index);
  info.indexes = info.indexes.filter((i) => i !== target);
  return { result: { dropped: target.name }, durable: durableOf(store.write([putCollection(info), { op: 'dropTree', tree: indexTree(info, target) }])) };
}

/**
 * Drops several indexes at once, all or none (MongoDB's dropIndexes): `"*"` every index but
 * `_id_`, an index name or key pattern, or a list of names. One atomic batch.
 * @throws as docsDropIndex, for any of them (nothing is dropped then)
 */
export function docsDropIndexes(store: TenantStore, collection: unknown, index: unknown): Written<{ nIndexesWas: number; dropped: string[] }> {
  const name = validateCollectionName(collection);
  const info = readCollection(store, name);
  if (info === undefined) fail('NOT_FOUND', `ns not found ${name}`, { collection: name });
  const was = info.indexes.length + 1;
  let targets: IndexInfo[];
  if (index === '*') targets = [...info.indexes];
  else if (Array.isArray(index)) {
    if (index.length === 0 || !index.every((n) => typeof n === 'string')) fail('VALIDATION_FAILED', 'index must be "*", an index name, a key pattern or a non-empty list of index names', { field: 'index' });
    targets = [...new Set(index.map((n) => indexNamed(info, n)))];
  } else targets = [indexNamed(info, index)];
  info.indexes = info.indexes.filter((i) => !targets.includes(i));
  const ops: BatchOp[] = [putCollection(info), ...targets.map((t): BatchOp => ({ op: 'dropTree', tree: indexTree(info, t) }))];
  return { result: { nIndexesWas: was, dropped: targets.map((t) => t.name) }, durable: durableOf(store.write(ops)) };
}

/** The index of `info` a dropIndex names: by name, key pattern (a text index by its own), never `_id_`. @throws VALIDATION_FAILED, NOT_FOUND, CONFLICT */
function indexNamed(info: CollectionInfo, index: unknown): IndexInfo {
  let target: IndexInfo | undefined;
  if (typeof index === 'string') {
    if (index === '_id_') fail('VALIDATION_FAILED', 'the _id index cannot be dropped', { field: 'index' });
    target = info.indexes.find((i) => i.name === index);
  } else if (isPlainObject(index) && (isTextKeyPattern(index) || Object.hasOwn(index, '_fts'))) {
    // A text index by its key pattern as created ({title: "text"}) or as listed ({_fts: "text", _ftsx: 1}).
    target = info.indexes.find((i) => i.text !== undefined);
  } else if (isPlainObject(index)) {
    const fields = parseKeys(index);
    if (fields.length === 1 && fields[0]!.path === ID) fail('VALIDATION_FAILED', 'the _id index cannot be dropped', { field: 'index' });
    const matching = info.indexes.filter((i) => sameKeyPattern(i.fields, fields));
    if (matching.length > 1) fail('CONFLICT', `${matching.length} indexes have the key pattern ${JSON.stringify(index)} (${matching.map((i) => i.name).join(', ')}): drop one by name`, { index });
    target = matching[0];
  } else {
    fail('VALIDATION_FAILED', 'index must be an index name or a key pattern', { field: 'index' });
  }
  if (target === undefined) fail('NOT_FOUND', `index not found: ${JSON.stringify(index)}`, { index });
  return target;
}

/** One index of createIndexes: MongoDB's `{key, name?, unique?, ...}`. */
export interface IndexModel extends CreateIndexOptions {
  key: unknown;
}

/**
 * Creates several indexes (MongoDB's createIndexes), all or none: each is built in turn as
 * createIndex builds it; should one fail (a bad spec, a duplicate key in a unique build), the ones
 * this request created are dropped again and the error names the failing one (`details.at`:
 * `indexes.<i>`). Equivalent indexes already there are kept as they are.
 * @throws VALIDATION_FAILED for a malformed list, and what createIndex throws
 */
export async function docsCreateIndexes(store: TenantStore, collection: unknown, indexes: unknown): Promise<Written<{ createdIndexes: string[]; numIndexesBefore: number; numIndexesAfter: number }>> {
  const name = validateCollectionName(collection);
  if (!Array.isArray(indexes) || indexes.length === 0 || indexes.length > MAX_INDEXES) fail('VALIDATION_FAILED', `indexes must be a list of 1 to ${MAX_INDEXES} index specifications`, { field: 'indexes' });
  indexes.forEach((spec, i) => {
    if (!isPlainObject(spec) || !isPlainObject(spec['key'])) fail('VALIDATION_FAILED', `indexes.${i} must be an object with a key pattern in "key"`, { field: `indexes.${i}` });
  });
  const before = (readCollection(store, name)?.indexes.length ?? 0) + 1;
  const created: string[] = [];
  const names: string[] = [];
  const writes: Array<Promise<void>> = [];
  for (let i = 0; i < indexes.length; i++) {
    const { key, ...options } = indexes[i] as IndexModel;
    try {
      const written = await docsCreateIndex(store, name, key, options);
      writes.push(written.durable);
      names.push(written.result.name);
      if (written.result.created) created.push(written.result.name);
    } catch (err) {
      if (created.length > 0) {
        const info = readCollection(store, name);
        const ours = info?.indexes.filter((ix) => created.includes(ix.name)) ?? [];
        if (info !== undefined && ours.length > 0) {
          info.indexes = info.indexes.filter((ix) => !ours.includes(ix));
          await store.write([putCollection(info), ...ours.map((t): BatchOp => ({ op: 'dropTree', tree: indexTree(info, t) }))]);
        }
      }
      if (isTetraError(err)) throw new TetraError(err.code, `indexes.${i}: ${err.message}`, { ...err.details, at: `indexes.${i}` }, { cause: err });
      throw err;
    }
  }
  const after = (readCollection(store, name)?.indexes.length ?? 0) + 1;
  return { result: { createdIndexes: created, numIndexesBefore: before, numIndexesAfter: after }, durable: Promise.all(writes).then(() => undefined) };
}

// ---- TTL ----------------------------------------------------------------------------------------------

/** The TTL indexes of every collection. */
function ttlIndexes(store: TenantStore, collection?: string): Array<{ info: CollectionInfo; index: IndexInfo; ttlMs: number }> {
  const out: Array<{ info: CollectionInfo; index: IndexInfo; ttlMs: number }> = [];
  // One collection (after a write, to wake the expiry service): its cached entry, read only.
  const infos = collection === undefined ? listCollectionInfos(store) : [readCollectionCached(store, store, collection)].filter((i) => i !== undefined);
  for (const info of infos) {
    for (const index of info.indexes) {
      if (index.expireAfterSeconds !== undefined && (index as { building?: boolean }).building !== true) out.push({ info, index, ttlMs: index.expireAfterSeconds * 1000 });
    }
  }
  return out;
}

// Where date keys start in an ascending index (dates are the highest bracket documents can hold).
const DATE_KEYS_START = entryKey([indexComponent(new Date(-8.64e15)).part], undefined);

/** Index entries of a TTL index that hold dates, earliest first (a descending index is read backwards). */
function dateEntries(store: TenantStore, info: CollectionInfo, index: IndexInfo): Generator<[Buffer, Buffer]> {
  return index.fields[0]!.direction === 1 ? store.scan(indexTree(info, index), { gte: DATE_KEYS_START }) : store.scan(indexTree(info, index), { reverse: true });
}

function earliestDate(doc: Doc, path: string): number | undefined {
  const values = collectValues(doc, parsePath(path), 'traverse-omit-array');
  let min: number | undefined;
  for (const v of values) if (v instanceof Date && (min === undefined || v.getTime() < min)) min = v.getTime();
  return min;
}

/**
 * Deletes up to `budget` documents whose TTL index date (the earliest, for an array) is at least
 * expireAfterSeconds old at `now`, in one batch per index, as MongoDB's TTL monitor does but
 * driven by the same expiry wheel as key-value expiry. `nextExpiryMs`: when the next one is due.
 */
export function docsExpireDue(store: TenantStore, now: number, budget: number): { deleted: number; durable: Promise<void>; nextExpiryMs: number | null } {
  let deleted = 0;
  let next: number | null = null;
  const writes: Array<Promise<unknown>> = [];
  const later = (at: number): void => {
    next = next === null ? at : Math.min(next, at);
  };
  for (const { info, index, ttlMs } of ttlIndexes(store)) {
    const ops: BatchOp[] = [];
    const gone = new Set<string>();
    const tree = docsTree(info);
    for (const [, pk] of dateEntries(store, info, index)) {
      if (deleted >= budget) {
        later(now); // more may be due: come back on the next tick
        break;
      }
      const id = pk.toString('latin1');
      if (gone.has(id)) continue;
      const raw = store.get(tree, pk);
      if (raw === undefined) continue;
      const doc = decodeDocument(raw);
      const earliest = earliestDate(doc, index.fields[0]!.path);
      if (earliest === undefined) continue;
      if (earliest + ttlMs > now) {
        later(earliest + ttlMs);
        break; // entries come earliest first: nothing further is due
      }
      gone.add(id);
      ops.push({ op: 'delete', tree, key: pk });
      pushIndexOps(ops, info, indexChanges(store, info, pk, doc, undefined, new Map()));
      deleted++;
    }
    if (ops.length > 0) writes.push(store.write(ops));
  }
  return { deleted, durable: Promise.all(writes).then(() => undefined), nextExpiryMs: next };
}

/** When the earliest TTL deletion is due (null: none), in every collection or in one. */
export function docsNextExpiry(store: TenantStore, collection?: string): number | null {
  let next: number | null = null;
  for (const { info, index, ttlMs } of ttlIndexes(store, collection)) {
    for (const [, pk] of dateEntries(store, info, index)) {
      const raw = store.get(docsTree(info), pk);
      const earliest = raw === undefined ? undefined : earliestDate(decodeDocument(raw), index.fields[0]!.path);
      if (earliest === undefined) continue;
      next = next === null ? earliest + ttlMs : Math.min(next, earliest + ttlMs);
      break;
    }
  }
  return next;
}

/** The document model's part of active expiry (see KvExpiryService's sweepers). */
export const docsExpiry = {
  sweep: docsExpireDue,
  next: (store: TenantStore): number | null => docsNextExpiry(store),
} as const;
