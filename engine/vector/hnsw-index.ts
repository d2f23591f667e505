import { fail } from '../errors.js';
import {
  ChunkReader,
  ChunkWriter,
  DEFAULT_CHUNK_BYTES,
  FORMAT_MAGIC,
  FORMAT_VERSION,
  HEADER_BYTES,
  HEADER_CLEANUP_RATIO,
  HEADER_DELETED,
  HEADER_DIMS,
  HEADER_EF_CONSTRUCTION,
  HEADER_EF_SEARCH,
  HEADER_ENTRY,
  HEADER_FREE_COUNT,
  HEADER_LIVE,
  HEADER_M,
  HEADER_MAGIC,
  HEADER_MAX_LEVEL,
  HEADER_NODE_COUNT,
  HEADER_RNG_STATE,
  HEADER_UPPER_INTS,
  HEADER_VERSION,
  MIN_CHUNK_BYTES,
  TRAILER_BYTES,
  assertLittleEndian,
  bytesOf,
} from './hnsw-codec.js';
import { MinHeap } from './hnsw-heap.js';
import { MAX_WASM_PAGES, WASM_PAGE_BYTES, createDotKernel, type DotKernel } from './simd-kernel.js';

/** Construction options of an HnswIndex. */
export interface HnswOptions {
  /** Vector length; every inserted vector and query must have exactly this many floats. */
  dims: number;
  /** Links per node on the upper layers (and for a new node on every layer); layer 0 keeps up to 2*M. Default 16. */
  M?: number;
  /** Candidate list size while inserting. Default 200. */
  efConstruction?: number;
  /** Candidate list size while searching; 0 (default) = adaptive to k, see adaptiveEf(). */
  efSearch?: number;
  /** Seed of the PRNG that draws node levels, so a build is reproducible. Default fixed. */
  seed?: number;
  /** delete() runs cleanup() once tombstones exceed this fraction of the occupied slots. 0 = never automatically. Default 0.1. */
  cleanupRatio?: number;
  /**
   * false runs the portable JavaScript twin of the dot-product kernel instead of WebAssembly
   * SIMD: the same scores bit for bit and so the same graph, ~20x slower per dot. Default
   * true; without WebAssembly SIMD in the runtime the twin runs anyway.
   */
  simd?: boolean;
  /**
   * Most bytes the index's WebAssembly memory may grow to (default, and at most, 4 GiB: a 32-bit
   * memory). An insert past it throws QUOTA_EXCEEDED and changes nothing.
   */
  maxMemoryBytes?: number;
}

/** One search result: score = dot product of normalised vectors = cosine similarity. */
export interface HnswHit {
  node: number;
  score: number;
}

/** Options of HnswIndex.search(). */
export interface HnswSearchOptions {
  /** Candidate list size for this search (raised to k when smaller); 0 or absent = efSearch / adaptive. */
  ef?: number;
  /**
   * Only nodes it returns true for are returned; the others are still traversed. Called at most
   * once per live node visited; it must not call back into the index (scratch is shared).
   */
  accept?: (node: number) => boolean;
}

const DEFAULT_M = 16;
const DEFAULT_EF_CONSTRUCTION = 200;
const DEFAULT_SEED = 0x5eed_4e5f;
const DEFAULT_CLEANUP_RATIO = 0.1;
const MAX_M = 1024;
// Adaptive efSearch: at least ADAPTIVE_EF_MIN, otherwise ADAPTIVE_EF_FACTOR * k, capped at
// ADAPTIVE_EF_CAP unless k itself is larger (ef never drops below k). Measured recall@10 at
// ef 100 (M 16, efConstruction 200): 0.99 on 10k uniform 32-dim vectors, 0.91-1.0 on the
// synthetic clustered 384-dim sets of 3k-10k (64 gave 0.82-0.96). Near-isotropic 384-dim data
// is the worst case and needs ef 150-200 for 0.95; real text embeddings are far easier.
const ADAPTIVE_EF_MIN = 100;
const ADAPTIVE_EF_FACTOR = 2;
const ADAPTIVE_EF_CAP = 1024;
// Levels above this would need more than 2^60 nodes at M = 2; it only guards the u8 level array.
const MAX_LEVEL = 60;

// Layer-0 links live in arenas of CHUNK nodes, so growth never copies what exists; the vector
// memory grows by CHUNK nodes at a time (in place: 64-bit V8 reserves a WebAssembly.Memory's
// address space up front; growing 1 GiB by a page measured ~8 ms, no copy).
const CHUNK_SHIFT = 10;
/** Bytes of vectors serializeSteps() copies per step. */
const SERIALIZE_STEP_BYTES = 1 << 20;
const CHUNK = 1 << CHUNK_SHIFT;
const CHUNK_MASK = CHUNK - 1;

// The query's place in the kernel's memory (see the class comment for the whole layout).
const QUERY_PTR = 0;

// Slot states.
const LIVE = 0;
const DELETED = 1;
const FREE = 2;

// What the layer search may put in its result heap.
const MODE_LIVE = 1;
const MODE_ACCEPT = 2;

// A repaired link list chooses among at most this many (times its capacity) best candidates,
// which bounds the heuristic's quadratic cost when a node had several tombstoned neighbours.
const REPAIR_CANDIDATE_FACTOR = 3;

/** efSearch used when none is configured: max(k, min(1024, max(100, 2k))). */
export function adaptiveEf(k: number): number {
  return Math.max(k, Math.min(ADAPTIVE_EF_CAP, Math.max(ADAPTIVE_EF_MIN, ADAPTIVE_EF_FACTOR * k)));
}

function checkInt(name: string, value: number, min: number, max: number): number {
  if (!Number.isInteger(value) || value < min || value > max) {
    fail('VALIDATION_FAILED', `hnsw index: ${name} must be an integer in [${min}, ${max}], got ${String(value)}`);
  }
  return value;
}

/**
 * A Hierarchical Navigable Small World graph (Malkov & Yashunin, 2016) over L2-normalised
 * Float32 vectors, scored by dot product (= cosine similarity). Nodes are small integers the
 * caller maps to its own ids.
 *
 * Layout: vectors in one WebAssembly.Memory per index, read in place by the SIMD dot-product
 * kernel (simd-kernel.ts):
 *
 *   [0, vlen)                 the query of the running search (copied in once per search)
 *   [vlen, +4 * BATCH)        batch ids: i32 node numbers to score against the query
 *   [.., +4 * BATCH)          batch scores: f32, written by the kernel
 *   [vbase, ..)               vector of node n at vbase + n * vlen, vlen = dims rounded up
 *                             to a multiple of 4 floats (zero padding, so the kernel needs no
 *                             scalar tail); the memory grows by CHUNK nodes
 *
 * Layer-0 links in Int32Array arenas of CHUNK nodes, per node a count then 2M slots; the rare
 * upper layers in one Int32Array per node with level > 0 ((M + 1) ints per layer); levels and
 * slot states in Uint8Arrays. Deletes leave tombstones that searches traverse but never
 * return; cleanup() repairs their neighbours' links with the selection heuristic and frees
 * the slots for reuse.
 */
export class HnswIndex {
  readonly dims: number;
  readonly M: number;
  readonly efConstruction: number;
  /** Candidate list size of search(); 0 = adaptiveEf(k). */
  efSearch: number;
  /** See HnswOptions.cleanupRatio. */
  cleanupRatio: number;

  readonly #maxM0: number;
  readonly #stride0: number;
  readonly #strideU: number;
  readonly #mL: number;
  #rng: number;

  // The kernel and its memory; #f32 / #i32 view the whole memory and are rebuilt after every
  // grow (which detaches the old buffer). Addresses below are byte offsets into it.
  readonly #kernel: DotKernel;
  readonly #maxPages: number;
  #f32: Float32Array;
  #i32: Int32Array;
  /** Bytes per stored vector (dims padded to a multiple of 4 floats). */
  readonly #vlen: number;
  /** How many ids one kernel call may score (the size of the batch regions). */
  readonly #batch: number;
  readonly #idsPtr: number;
  readonly #outPtr: number;
  readonly #vbase: number;
  #links0: Int32Array[] = [];
  #upper: (Int32Array | undefined)[] = [];
  #levels = new Uint8Array(0);
  #flags = new Uint8Array(0);
  #visited = new Uint32Array(0);
  #visitGen = 0;
  #capacity = 0;
  #nodeCount = 0;
  #live = 0;
  #deleted = 0;
  #free: number[] = [];
  #entry = -1;
  #maxLevel = -1;

  // Scratch reused by every operation (the index is single-threaded, operations do not nest).
  readonly #cand = new MinHeap(256);
  readonly #res = new MinHeap(256);
  #entries = new Int32Array(256);
  #entryCount = 0;
  #ids = new Int32Array(256);
  #scores = new Float64Array(256);
  #pruned = new Int32Array(256);
  readonly #selected: Int32Array;
  readonly #shIds: Int32Array;
  readonly #shScores: Float64Array;
  readonly #shOut: Int32Array;
  readonly #hop: Int32Array;
  // Result of #locate(): the array holding a node's link list on one layer and its offset.
  #la: Int32Array = new Int32Array(0);
  #lb = 0;

  /** @throws VALIDATION_FAILED on out-of-range options. */
  constructor(options: HnswOptions) {
    this.dims = checkInt('dims', options.dims, 1, 65536);
    this.M = checkInt('M', options.M ?? DEFAULT_M, 2, MAX_M);
    this.efConstruction = checkInt('efConstruction', options.efConstruction ?? DEFAULT_EF_CONSTRUCTION, 1, 1 << 20);
    this.efSearch = checkInt('efSearch', options.efSearch ?? 0, 0, 1 << 20);
    const ratio = options.cleanupRatio ?? DEFAULT_CLEANUP_RATIO;
    if (!(ratio >= 0 && ratio <= 1)) fail('VALIDATION_FAILED', `hnsw index: cleanupRatio must be in [0, 1], got ${String(ratio)}`);
    this.cleanupRatio = ratio;
    this.#rng = (options.seed ?? DEFAULT_SEED) >>> 0;
    this.#maxM0 = 2 * this.M;
    this.#stride0 = this.#maxM0 + 1;
    this.#strideU = this.M + 1;
    this.#mL = 1 / Math.log(this.M);
    const small = this.#maxM0 + 1;
    this.#selected = new Int32Array(small);
    this.#shIds = new Int32Array(small);
    this.#shScores = new Float64Array(small);
    this.#shOut = new Int32Array(small);
    this.#hop = new Int32Array(small * small);
    this.#vlen = 16 * Math.ceil(this.dims / 4);
    // A whole layer-0 list plus one (addLink scores node + its full list), and a chunk for exact().
    this.#batch = 4 * Math.ceil(Math.max(CHUNK, this.#maxM0 + 1) / 4);
    this.#idsPtr = QUERY_PTR + this.#vlen;
    this.#outPtr = this.#idsPtr + 4 * this.#batch;
    this.#vbase = this.#outPtr + 4 * this.#batch;
    this.#maxPages = Math.min(MAX_WASM_PAGES, Math.floor((options.maxMemoryBytes ?? MAX_WASM_PAGES * WASM_PAGE_BYTES) / WASM_PAGE_BYTES));
    this.#kernel = createDotKernel(Math.ceil(this.#vbase / WASM_PAGE_BYTES), options.simd ?? true);
    this.#f32 = new Float32Array(this.#kernel.memory.buffer);
    this.#i32 = new Int32Array(this.#kernel.memory.buffer);
  }

  /** True when this index scores with the WebAssembly SIMD kernel (false: the JavaScript twin). */
  get simd(): boolean {
    return this.#kernel.simd;
  }

  /** Inserted minus deleted. */
  get liveCount(): number {
    return this.#live;
  }

  /** Tombstones not yet reclaimed by cleanup(). */
  get deletedCount(): number {
    return this.#deleted;
  }

  /** One past the highest node number in use (live, tombstoned or free). */
  get nodeLimit(): number {
    return this.#nodeCount;
  }

  /** True when node is a live (inserted, not deleted) node. */
  isLive(node: number): boolean {
    return Number.isInteger(node) && node >= 0 && node < this.#nodeCount && this.#flags[node] === LIVE;
  }

  /**
   * A copy of the stored vector of a live or tombstoned node (a copy because a view into the
   * kernel's memory would be detached by the next insert that grows it).
   * @throws NOT_FOUND when node is not a live or tombstoned node.
   */
  vector(node: number): Float32Array {
    if (!Number.isInteger(node) || node < 0 || node >= this.#nodeCount || this.#flags[node] === FREE) {
      fail('NOT_FOUND', `hnsw index: no node ${String(node)}`);
    }
    const at = this.#addr(node) >>> 2;
    return this.#f32.slice(at, at + this.dims);
  }

  /**
   * Inserts a copy of vector (which the caller has L2-normalised; a zero vector is accepted and
   * scores 0 against everything) and returns its node number, possibly a reclaimed one.
   * @throws VALIDATION_FAILED when vector is not a Float32Array of length dims.
   * @throws QUOTA_EXCEEDED when the vectors would outgrow the index's 4 GiB WebAssembly memory.
   */
  insert(vector: Float32Array): number {
    this.#checkVector(vector, 'vector');
    let node: number;
    if (this.#free.length > 0) {
      node = this.#free.pop()!;
    } else {
      node = this.#nodeCount;
      this.#ensureCapacity(node + 1);
      this.#nodeCount = node + 1;
    }
    // Only the first dims floats: the padding after them is zero from the memory's allocation.
    this.#f32.set(vector, this.#addr(node) >>> 2);
    const level = this.#randomLevel();
    this.#levels[node] = level;
    this.#flags[node] = LIVE;
    this.#links0[node >> CHUNK_SHIFT]![(node & CHUNK_MASK) * this.#stride0] = 0;
    this.#upper[node] = level > 0 ? new Int32Array(level * this.#strideU) : undefined;
    this.#live++;
    if (this.#entry < 0 || this.#live === 1) {
      // First live node (any others are tombstones, left for cleanup to reclaim).
      this.#entry = node;
      this.#maxLevel = level;
      return node;
    }
    this.#connect(node, level, true);
    if (level > this.#maxLevel) {
      this.#entry = node;
      this.#maxLevel = level;
    }
    return node;
  }

  /**
   * Tombstones a live node: never returned again, still traversed until cleanup(), which runs
   * automatically once tombstones exceed cleanupRatio of the occupied slots.
   * @throws NOT_FOUND when node is not live.
   */
  delete(node: number): void {
    if (!this.isLive(node)) fail('NOT_FOUND', `hnsw index: node ${String(node)} is not live`);
    this.#flags[node] = DELETED;
    this.#live--;
    this.#deleted++;
    if (this.shouldCleanup()) this.cleanup();
  }

  /** True when tombstones exceed cleanupRatio of the occupied slots (and cleanupRatio > 0). */
  shouldCleanup(): boolean {
    return this.cleanupRatio > 0 && this.#deleted > 0 && this.#deleted > this.cleanupRatio * (this.#live + this.#deleted);
  }

  /**
   * Approximate k nearest live nodes (accepted by options.accept when given), best first.
   * Returns fewer than k only when fewer such nodes are reachable.
   * @throws VALIDATION_FAILED on a query of the wrong length or a bad k / ef.
   */
  search(query: Float32Array, k: number, options?: HnswSearchOptions): HnswHit[] {
    this.#checkVector(query, 'query');
    checkInt('k', k, 0, 0x7fffffff);
    const accept = options?.accept;
    // ef 0 (or absent) means "not set", as for efSearch: fall back to efSearch, then adaptive.
    let ef = options?.ef || (this.efSearch > 0 ? this.efSearch : adaptiveEf(k));
    checkInt('ef', ef, 0, 0x7fffffff);
    if (k === 0 || this.#live === 0) return [];
    if (ef < k) ef = k;
    // The padding after the query's dims floats stays zero: nothing else writes there.
    this.#f32.set(query, QUERY_PTR >>> 2);
    let ep = this.#entry;
    for (let l = this.#maxLevel; l > 0; l--) ep = this.#greedy(QUERY_PTR, ep, l);
    this.#entries[0] = ep;
    this.#entryCount = 1;
    this.#searchLayer(QUERY_PTR, ef, 0, accept === undefined ? MODE_LIVE : MODE_ACCEPT, accept, -1);
    return this.#takeHits(k);
  }

  /** Brute force over all live nodes (accepted by accept when given), best first. */
  exact(query: Float32Array, k: number, accept?: (node: number) => boolean): HnswHit[] {
    this.#checkVector(query, 'query');
    checkInt('k', k, 0, 0x7fffffff);
    const res = this.#res;
    res.clear();
    if (k === 0) return [];
    this.#f32.set(query, QUERY_PTR >>> 2);
    const flags = this.#flags;
    const kernel = this.#kernel;
    const f32 = this.#f32;
    const i32 = this.#i32;
    const len = this.#vlen;
    const batch = this.#batch;
    const idsAt = this.#idsPtr >>> 2;
    const outAt = this.#outPtr >>> 2;
    const nodeCount = this.#nodeCount;
    // Without a filter, score whole runs of slots in place (tombstones and free slots too:
    // cheaper than gathering ids); with one, score only the accepted live nodes, so a
    // selective filter costs what it selects.
    for (let first = 0; first < nodeCount; ) {
      let cnt = 0;
      // First node of the contiguous run scored, or -1 when the ids were gathered.
      let run = -1;
      if (accept === undefined) {
        run = first;
        cnt = Math.min(batch, nodeCount - first);
        kernel.dotRange(QUERY_PTR, this.#addr(first), cnt, len, this.#outPtr);
        first += cnt;
      } else {
        for (; first < nodeCount && cnt < batch; first++) {
          if (flags[first] === LIVE && accept(first)) i32[idsAt + cnt++] = first;
        }
        if (cnt > 0) kernel.dotMany(QUERY_PTR, this.#idsPtr, cnt, this.#vbase, len, this.#outPtr);
      }
      for (let i = 0; i < cnt; i++) {
        const n = run >= 0 ? run + i : i32[idsAt + i]!;
        if (flags[n] !== LIVE) continue;
        const s = f32[outAt + i]!;
        if (res.size < k) res.push(s, n);
        else if (s > res.topKey) {
          res.pop();
          res.push(s, n);
        }
      }
    }
    return this.#takeHits(k);
  }

  /**
   * Estimated fraction of live nodes accept() takes, from an evenly spaced sample of at most
   * `sample` live nodes (1 when the index is empty). Cheap enough to choose search vs exact.
   */
  estimateSelectivity(accept: (node: number) => boolean, sample = 256): number {
    if (this.#live === 0) return 1;
    const step = Math.max(1, Math.floor(this.#nodeCount / Math.max(1, sample)));
    let seen = 0;
    let taken = 0;
    for (let n = 0; n < this.#nodeCount && seen < sample; n += step) {
      if (this.#flags[n] !== LIVE) continue;
      seen++;
      if (accept(n)) taken++;
    }
    return seen === 0 ? 1 : taken / seen;
  }

  /**
   * Reconnects the live neighbours of every tombstone (heuristic over their live links plus the
   * tombstones' live links), relinks nodes left without in- or out-links, moves the entry point
   * to a live node of the highest level, and frees the tombstones' slots. Returns how many
   * slots were reclaimed.
   */
  cleanup(): number {
    const steps = this.cleanupSteps();
    for (;;) {
      const step = steps.next();
      if (step.done === true) return step.value;
    }
  }

  /**
   * cleanup() in steps (a few hundred nodes repaired per step), for callers that yield to the
   * event loop between steps: at 100k vectors a cleanup takes seconds. Between steps the graph
   * is valid (repaired lists point at live nodes, the others still at tombstones, which searches
   * traverse); the slots are freed in the last step. Nothing else may change the index until
   * the generator is done.
   */
  *cleanupSteps(): Generator<void, number> {
    if (this.#deleted === 0) return 0;
    const flags = this.#flags;
    const levels = this.#levels;
    const nodeCount = this.#nodeCount;
    for (let n = 0; n < nodeCount; n++) {
      if (flags[n] !== LIVE) continue;
      const top = levels[n]!;
      for (let l = 0; l <= top; l++) this.#repair(n, l);
      if ((n & 255) === 255) yield;
    }
    if (this.#entry < 0 || flags[this.#entry] !== LIVE) {
      let best = -1;
      let bestLevel = -1;
      for (let n = 0; n < nodeCount; n++) {
        if (flags[n] === LIVE && levels[n]! > bestLevel) {
          best = n;
          bestLevel = levels[n]!;
        }
      }
      this.#entry = best;
      this.#maxLevel = bestLevel;
    }
    let reclaimed = 0;
    // Pushed from the top down, so the lowest free numbers are reused first.
    for (let n = nodeCount - 1; n >= 0; n--) {
      if (flags[n] !== DELETED) continue;
      flags[n] = FREE;
      levels[n] = 0;
      this.#upper[n] = undefined;
      this.#links0[n >> CHUNK_SHIFT]![(n & CHUNK_MASK) * this.#stride0] = 0;
      this.#free.push(n);
      reclaimed++;
    }
    this.#deleted = 0;
    if (this.#live > 1) this.#relinkOrphans();
    return reclaimed;
  }

  /**
   * Bytes held by vectors, links and bookkeeping (allocated capacity, not just what is used):
   * the whole WebAssembly memory (vectors, their padding, the query and batch scratch) counts.
   */
  memoryBytes(): number {
    let bytes = this.#kernel.memory.buffer.byteLength;
    for (const l of this.#links0) bytes += l.byteLength;
    // A JS array slot per node for the upper-layer lists (8 bytes) plus the lists themselves.
    bytes += this.#upper.length * 8;
    for (let n = 0; n < this.#nodeCount; n++) {
      const u = this.#upper[n];
      if (u !== undefined) bytes += u.byteLength;
    }
    bytes += this.#levels.byteLength + this.#flags.byteLength + this.#visited.byteLength;
    bytes += this.#free.length * 8;
    bytes += this.#cand.byteLength + this.#res.byteLength;
    bytes += this.#entries.byteLength + this.#ids.byteLength + this.#scores.byteLength + this.#pruned.byteLength;
    bytes += this.#selected.byteLength + this.#shIds.byteLength + this.#shScores.byteLength + this.#shOut.byteLength + this.#hop.byteLength;
    return bytes;
  }

  /** The whole index as chunks of at most chunkBytes (default 1 MiB); see hnsw-codec.ts. */
  serialize(chunkBytes = DEFAULT_CHUNK_BYTES): Uint8Array[] {
    const steps = this.serializeSteps(chunkBytes);
    const chunks: Uint8Array[] = [];
    for (;;) {
      const step = steps.next();
      chunks.push(...step.value);
      if (step.done === true) return chunks;
    }
  }

  /**
   * serialize() in steps of at most about a megabyte of copying each, for callers that yield to
   * the event loop between steps (a large index takes hundreds of milliseconds to copy) and
   * write the chunks out as they come: each step yields the chunks it completed, the return
   * value is the rest. The index must not change until the generator is done: the caller
   * pauses its writers.
   */
  *serializeSteps(chunkBytes = DEFAULT_CHUNK_BYTES): Generator<Uint8Array[], Uint8Array[]> {
    assertLittleEndian();
    checkInt('chunkBytes', chunkBytes, MIN_CHUNK_BYTES, 0x7fffffff);
    const n = this.#nodeCount;
    let upperInts = 0;
    for (let i = 0; i < n; i++) {
      const u = this.#upper[i];
      if (u !== undefined) upperInts += u.length;
    }
    const pad = (4 - ((2 * n) % 4)) % 4;
    const total =
      HEADER_BYTES + 2 * n + pad + 4 * (n * this.dims + n * this.#stride0 + this.#free.length + upperInts) + TRAILER_BYTES;
    const header = new DataView(new ArrayBuffer(HEADER_BYTES));
    header.setUint32(HEADER_MAGIC, FORMAT_MAGIC, true);
    header.setUint32(HEADER_VERSION, FORMAT_VERSION, true);
    header.setUint32(HEADER_DIMS, this.dims, true);
    header.setUint32(HEADER_M, this.M, true);
    header.setUint32(HEADER_EF_CONSTRUCTION, this.efConstruction, true);
    header.setUint32(HEADER_EF_SEARCH, this.efSearch, true);
    header.setUint32(HEADER_RNG_STATE, this.#rng, true);
    header.setUint32(HEADER_NODE_COUNT, n, true);
    header.setUint32(HEADER_LIVE, this.#live, true);
    header.setUint32(HEADER_DELETED, this.#deleted, true);
    header.setInt32(HEADER_ENTRY, this.#entry, true);
    header.setInt32(HEADER_MAX_LEVEL, this.#maxLevel, true);
    header.setUint32(HEADER_FREE_COUNT, this.#free.length, true);
    header.setUint32(HEADER_UPPER_INTS, upperInts, true);
    header.setFloat64(HEADER_CLEANUP_RATIO, this.cleanupRatio, true);
    const w = new ChunkWriter(total, chunkBytes);
    w.write(new Uint8Array(header.buffer));
    w.write(this.#levels.subarray(0, n));
    w.write(this.#flags.subarray(0, n));
    w.zeros(pad);
    // The format stores dims floats per vector, without the in-memory padding.
    for (const rows of this.#vectorRows(n)) {
      // Contiguous vectors come as one view: copy them a step at a time.
      for (let at = 0; at < rows.byteLength; at += SERIALIZE_STEP_BYTES) {
        w.write(rows.subarray(at, Math.min(rows.byteLength, at + SERIALIZE_STEP_BYTES)));
        yield w.take();
      }
    }
    for (let c = 0; c < this.#links0.length; c++) {
      const inChunk = Math.min(CHUNK, n - (c << CHUNK_SHIFT));
      if (inChunk <= 0) break;
      w.write(bytesOf(this.#links0[c]!, inChunk * this.#stride0));
      if ((c & 7) === 7) yield w.take();
    }
    w.write(bytesOf(Int32Array.from(this.#free)));
    for (let i = 0; i < n; i++) {
      const u = this.#upper[i];
      if (u !== undefined) w.write(bytesOf(u));
      if ((i & 16383) === 16383) yield w.take();
    }
    return w.finish();
  }

  /**
   * Rebuilds an index from serialize()'s chunks.
   * @throws CORRUPTION on a wrong magic or version, a truncated or overlong input, a checksum
   * mismatch or inconsistent contents.
   * @throws QUOTA_EXCEEDED when the vectors do not fit one index's 4 GiB WebAssembly memory.
   */
  static deserialize(chunks: readonly Uint8Array[]): HnswIndex {
    const steps = HnswIndex.deserializeSteps(chunks);
    for (;;) {
      const step = steps.next();
      if (step.done === true) return step.value;
    }
  }

  /**
   * deserialize() in steps of about a megabyte each (checksum, copies), for callers that yield
   * to the event loop between steps: a 100k-vector graph takes ~300 ms to load.
   */
  static *deserializeSteps(chunks: readonly Uint8Array[]): Generator<void, HnswIndex> {
    assertLittleEndian();
    const r = new ChunkReader(chunks);
    const bad = (why: string): never => fail('CORRUPTION', `hnsw index: ${why}`);
    if (r.totalBytes < HEADER_BYTES + TRAILER_BYTES) bad(`serialized form is truncated (${r.totalBytes} bytes)`);
    const headerBytes = new Uint8Array(HEADER_BYTES);
    r.read(headerBytes);
    const h = new DataView(headerBytes.buffer);
    if (h.getUint32(HEADER_MAGIC, true) !== FORMAT_MAGIC) bad('not a serialized HNSW index (bad magic)');
    const version = h.getUint32(HEADER_VERSION, true);
    if (version !== FORMAT_VERSION) bad(`unsupported format version ${version} (expected ${FORMAT_VERSION})`);
    const dims = h.getUint32(HEADER_DIMS, true);
    const M = h.getUint32(HEADER_M, true);
    const n = h.getUint32(HEADER_NODE_COUNT, true);
    const freeCount = h.getUint32(HEADER_FREE_COUNT, true);
    const upperInts = h.getUint32(HEADER_UPPER_INTS, true);
    if (dims < 1 || dims > 65536 || M < 2 || M > MAX_M) bad(`bad parameters dims=${dims} M=${M}`);
    const stride0 = 2 * M + 1;
    const pad = (4 - ((2 * n) % 4)) % 4;
    const expected = HEADER_BYTES + 2 * n + pad + 4 * (n * dims + n * stride0 + freeCount + upperInts) + TRAILER_BYTES;
    if (r.totalBytes < expected) bad(`serialized form is truncated (${r.totalBytes} of ${expected} bytes)`);
    if (r.totalBytes > expected) bad(`serialized form has ${r.totalBytes - expected} unexpected trailing bytes`);
    const crc: number = yield* r.crcOfPrefixSteps(expected - TRAILER_BYTES);

    let index: HnswIndex;
    try {
      index = new HnswIndex({
        dims,
        M,
        efConstruction: h.getUint32(HEADER_EF_CONSTRUCTION, true),
        efSearch: h.getUint32(HEADER_EF_SEARCH, true),
        cleanupRatio: h.getFloat64(HEADER_CLEANUP_RATIO, true),
        seed: h.getUint32(HEADER_RNG_STATE, true),
      });
    } catch (err) {
      return bad(`bad parameters in header (${(err as Error).message})`);
    }
    index.#ensureCapacity(n);
    index.#nodeCount = n;
    r.read(index.#levels.subarray(0, n));
    r.read(index.#flags.subarray(0, n));
    r.skip(pad);
    for (const rows of index.#vectorRows(n)) {
      for (let at = 0; at < rows.byteLength; at += SERIALIZE_STEP_BYTES) {
        r.read(rows.subarray(at, Math.min(rows.byteLength, at + SERIALIZE_STEP_BYTES)));
        yield;
      }
    }
    for (let c = 0; c << CHUNK_SHIFT < n; c++) {
      const inChunk = Math.min(CHUNK, n - (c << CHUNK_SHIFT));
      r.read(bytesOf(index.#links0[c]!, inChunk * stride0));
      if ((c & 7) === 7) yield;
    }
    const free = new Int32Array(freeCount);
    r.read(bytesOf(free));
    index.#free = Array.from(free);
    const strideU = M + 1;
    let upperLeft = upperInts;
    for (let i = 0; i < n; i++) {
      const level = index.#levels[i]!;
      if (level === 0) continue;
      if (level > MAX_LEVEL) bad(`node ${i} has level ${level}`);
      const len = level * strideU;
      if (len > upperLeft) bad('upper-layer links are shorter than the levels require');
      const u = new Int32Array(len);
      r.read(bytesOf(u));
      index.#upper[i] = u;
      upperLeft -= len;
    }
    if (upperLeft !== 0) bad('upper-layer links are longer than the levels require');
    const stored = r.u32();
    if (stored !== crc) bad(`checksum mismatch (stored ${stored.toString(16)}, computed ${crc.toString(16)})`);
    index.#live = h.getUint32(HEADER_LIVE, true);
    index.#deleted = h.getUint32(HEADER_DELETED, true);
    index.#entry = h.getInt32(HEADER_ENTRY, true);
    index.#maxLevel = h.getInt32(HEADER_MAX_LEVEL, true);
    const problem = index.#checkConsistency();
    if (problem !== undefined) bad(problem);
    return index;
  }

  // ---- internals -------------------------------------------------------------------------

  #checkVector(v: Float32Array, what: string): void {
    if (!(v instanceof Float32Array)) fail('VALIDATION_FAILED', `hnsw index: ${what} must be a Float32Array`);
    if (v.length !== this.dims) {
      fail('VALIDATION_FAILED', `hnsw index: ${what} has ${v.length} dimensions, the index has ${this.dims}`);
    }
  }

  /** mulberry32 step, then level = floor(-ln(U) * mL) with U in (0, 1]. */
  #randomLevel(): number {
    const a = (this.#rng = (this.#rng + 0x6d2b79f5) >>> 0);
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    const u = 1 - ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    const level = Math.floor(-Math.log(u) * this.#mL);
    return level > MAX_LEVEL ? MAX_LEVEL : level;
  }

  /** Byte address of node's vector in the kernel's memory. */
  #addr(node: number): number {
    return this.#vbase + node * this.#vlen;
  }

  /**
   * The stored bytes of vectors 0..n) as views into the kernel's memory, in node order: one
   * view when there is no padding, else one per vector (its dims floats).
   */
  *#vectorRows(n: number): Generator<Uint8Array> {
    const buffer = this.#kernel.memory.buffer;
    const rowBytes = 4 * this.dims;
    if (rowBytes === this.#vlen) {
      if (n > 0) yield new Uint8Array(buffer, this.#vbase, n * rowBytes);
      return;
    }
    for (let i = 0; i < n; i++) yield new Uint8Array(buffer, this.#addr(i), rowBytes);
  }

  /** @throws QUOTA_EXCEEDED when the vectors of `nodes` slots do not fit the 4 GiB memory. */
  #ensureCapacity(nodes: number): void {
    if (this.#capacity < nodes) {
      const capacity = CHUNK * Math.ceil(nodes / CHUNK);
      const bytes = this.#vbase + capacity * this.#vlen;
      const pages = Math.ceil(bytes / WASM_PAGE_BYTES);
      if (pages > this.#maxPages) {
        const most = CHUNK * Math.floor((this.#maxPages * WASM_PAGE_BYTES - this.#vbase) / this.#vlen / CHUNK);
        fail('QUOTA_EXCEEDED', `hnsw index: at ${this.dims} dims one index holds at most ${most} vectors (${this.#maxPages * WASM_PAGE_BYTES} bytes of WebAssembly memory)`);
      }
      const memory = this.#kernel.memory;
      const have = memory.buffer.byteLength / WASM_PAGE_BYTES;
      if (pages > have) {
        try {
          memory.grow(pages - have);
        } catch (err) {
          fail('QUOTA_EXCEEDED', `hnsw index: could not grow the vector memory to ${bytes} bytes (${(err as Error).message})`, undefined, err);
        }
        this.#f32 = new Float32Array(memory.buffer);
        this.#i32 = new Int32Array(memory.buffer);
      }
      while (this.#capacity < capacity) {
        this.#links0.push(new Int32Array(CHUNK * this.#stride0));
        this.#capacity += CHUNK;
      }
    }
    if (this.#levels.length < this.#capacity) {
      // The per-node byte arrays grow by doubling: cheap to copy and at most 6 bytes of slack per node.
      const len = Math.max(this.#capacity, 2 * this.#levels.length);
      const levels = new Uint8Array(len);
      levels.set(this.#levels);
      this.#levels = levels;
      const flags = new Uint8Array(len);
      flags.set(this.#flags);
      this.#flags = flags;
      // Fresh markers are all older than the current generation.
      this.#visited = new Uint32Array(len);
      this.#visitGen = 0;
      while (this.#upper.length < len) this.#upper.push(undefined);
    }
  }

  #nextGen(): number {
    if (this.#visitGen === 0xffffffff) {
      this.#visited.fill(0);
      this.#visitGen = 0;
    }
    return ++this.#visitGen;
  }

  /** Points #la / #lb at node's link list on layer l (count at #lb, links after it). */
  #locate(node: number, l: number): void {
    if (l === 0) {
      this.#la = this.#links0[node >> CHUNK_SHIFT]!;
      this.#lb = (node & CHUNK_MASK) * this.#stride0;
    } else {
      this.#la = this.#upper[node]!;
      this.#lb = (l - 1) * this.#strideU;
    }
  }

  /** Greedy walk on layer l from ep towards the vector at byte address q: the ef = 1 search of the upper layers. */
  #greedy(q: number, ep: number, l: number): number {
    const kernel = this.#kernel;
    const len = this.#vlen;
    const f32 = this.#f32;
    const i32 = this.#i32;
    const idsAt = this.#idsPtr >>> 2;
    const outAt = this.#outPtr >>> 2;
    let cur = ep;
    let best = kernel.dot(q, this.#addr(cur), len);
    for (;;) {
      this.#locate(cur, l);
      const a = this.#la;
      const b = this.#lb;
      const cnt = a[b]!;
      for (let j = 0; j < cnt; j++) i32[idsAt + j] = a[b + 1 + j]!;
      kernel.dotMany(q, this.#idsPtr, cnt, this.#vbase, len, this.#outPtr);
      let next = cur;
      for (let j = 0; j < cnt; j++) {
        const s = f32[outAt + j]!;
        if (s > best) {
          best = s;
          next = i32[idsAt + j]!;
        }
      }
      if (next === cur) return cur;
      cur = next;
    }
  }

  /**
   * Algorithm 2 of the paper on layer l from #entries, leaving the best ef admissible nodes in
   * #res (worst on top). Every node is traversed; only live ones (and, in MODE_ACCEPT, accepted
   * ones) enter the results, and the search only stops once the results are full, so a filter
   * still yields ef results when that many admissible nodes are reachable.
   */
  #searchLayer(
    q: number,
    ef: number,
    l: number,
    mode: number,
    accept: ((node: number) => boolean) | undefined,
    exclude: number,
  ): void {
    const kernel = this.#kernel;
    const len = this.#vlen;
    const vbase = this.#vbase;
    const idsPtr = this.#idsPtr;
    const outPtr = this.#outPtr;
    const idsAt = idsPtr >>> 2;
    const outAt = outPtr >>> 2;
    const batch = this.#batch;
    const f32 = this.#f32;
    const i32 = this.#i32;
    const flags = this.#flags;
    const visited = this.#visited;
    const cand = this.#cand;
    const res = this.#res;
    const links0 = this.#links0;
    const upper = this.#upper;
    const stride0 = this.#stride0;
    const upperBase = (l - 1) * this.#strideU;
    cand.clear();
    res.clear();
    const gen = this.#nextGen();
    if (exclude >= 0) visited[exclude] = gen;
    // The entry points in batches: the unvisited ones gathered, scored in one kernel call,
    // then taken in their order (the same outcome as scoring them one by one).
    const entries = this.#entries;
    const entryCount = this.#entryCount;
    for (let i = 0; i < entryCount; ) {
      let cnt = 0;
      for (; i < entryCount && cnt < batch; i++) {
        const e = entries[i]!;
        if (visited[e] === gen) continue;
        visited[e] = gen;
        i32[idsAt + cnt++] = e;
      }
      if (cnt === 0) continue;
      kernel.dotMany(q, idsPtr, cnt, vbase, len, outPtr);
      for (let j = 0; j < cnt; j++) {
        const e = i32[idsAt + j]!;
        const s = f32[outAt + j]!;
        cand.push(-s, e);
        if (flags[e] === LIVE && (mode !== MODE_ACCEPT || accept!(e))) {
          res.push(s, e);
          if (res.size > ef) res.pop();
        }
      }
    }
    let lower = res.size > 0 ? res.topKey : -Infinity;
    while (cand.size > 0) {
      if (-cand.topKey < lower && res.size >= ef) break;
      const c = cand.pop();
      let a: Int32Array;
      let b: number;
      if (l === 0) {
        a = links0[c >> CHUNK_SHIFT]!;
        b = (c & CHUNK_MASK) * stride0;
      } else {
        a = upper[c]!;
        b = upperBase;
      }
      // The unvisited neighbours, scored in one kernel call (a list never exceeds the batch).
      const end = b + 1 + a[b]!;
      let cnt = 0;
      for (let j = b + 1; j < end; j++) {
        const nb = a[j]!;
        if (visited[nb] === gen) continue;
        visited[nb] = gen;
        i32[idsAt + cnt++] = nb;
      }
      if (cnt === 0) continue;
      kernel.dotMany(q, idsPtr, cnt, vbase, len, outPtr);
      for (let j = 0; j < cnt; j++) {
        const nb = i32[idsAt + j]!;
        const s = f32[outAt + j]!;
        if (res.size < ef || s > lower) {
          cand.push(-s, nb);
          if (flags[nb] === LIVE && (mode !== MODE_ACCEPT || accept!(nb))) {
            res.push(s, nb);
            if (res.size > ef) res.pop();
            lower = res.topKey;
          }
        }
      }
    }
  }

  /** Empties #res into hits, best first, keeping at most k. */
  #takeHits(k: number): HnswHit[] {
    const res = this.#res;
    while (res.size > k) res.pop();
    const hits: HnswHit[] = new Array<HnswHit>(res.size);
    for (let i = res.size - 1; i >= 0; i--) {
      const score = res.topKey;
      hits[i] = { node: res.pop(), score };
    }
    return hits;
  }

  /** Empties #res into #ids / #scores, best first; returns the count. */
  #drainResults(): number {
    const res = this.#res;
    const n = res.size;
    if (this.#ids.length < n) {
      this.#ids = new Int32Array(2 * n);
      this.#scores = new Float64Array(2 * n);
    }
    for (let i = n - 1; i >= 0; i--) {
      this.#scores[i] = res.topKey;
      this.#ids[i] = res.pop();
    }
    return n;
  }

  /**
   * Algorithm 4 of the paper (without extendCandidates, with keepPrunedConnections): from
   * candidates sorted best first, keep one when it is closer to the base than to every node
   * kept so far, then fill up to maxOut with the closest discarded ones. Writes into out and
   * returns the count. Ties prune, so a pile of duplicates does not crowd out other directions.
   */
  #selectNeighbours(ids: Int32Array, scores: Float64Array, count: number, maxOut: number, out: Int32Array): number {
    const kernel = this.#kernel;
    const len = this.#vlen;
    if (this.#pruned.length < count) this.#pruned = new Int32Array(2 * count);
    const pruned = this.#pruned;
    let r = 0;
    let p = 0;
    for (let i = 0; i < count && r < maxOut; i++) {
      const e = ids[i]!;
      const se = scores[i]!;
      const ea = this.#addr(e);
      let keep = true;
      // One kernel call per pair, not a batch: the loop stops at the first kept node closer to
      // e than the base is, and scoring all kept nodes in one dotMany built ~15-25% slower.
      for (let j = 0; j < r; j++) {
        if (kernel.dot(ea, this.#addr(out[j]!), len) >= se) {
          keep = false;
          break;
        }
      }
      if (keep) out[r++] = e;
      else pruned[p++] = e;
    }
    for (let i = 0; i < p && r < maxOut; i++) out[r++] = pruned[i]!;
    return r;
  }

  /**
   * Links node into layers min(level, maxLevel)..0: search each layer
   * with efConstruction, choose M neighbours by the heuristic, set node's links when linkOut,
   * and add node to each neighbour's list (shrinking it by the heuristic when full).
   */
  #connect(node: number, level: number, linkOut: boolean): void {
    // The node's stored vector is the query: no copy into the query slot needed.
    const q = this.#addr(node);
    let ep = this.#entry;
    for (let l = this.#maxLevel; l > level; l--) ep = this.#greedy(q, ep, l);
    this.#entries[0] = ep;
    this.#entryCount = 1;
    const selected = this.#selected;
    for (let l = Math.min(level, this.#maxLevel); l >= 0; l--) {
      this.#searchLayer(q, this.efConstruction, l, MODE_LIVE, undefined, node);
      const found = this.#drainResults();
      if (found === 0) continue;
      const count = this.#selectNeighbours(this.#ids, this.#scores, found, this.M, selected);
      if (linkOut) {
        this.#locate(node, l);
        const a = this.#la;
        const b = this.#lb;
        a[b] = count;
        for (let i = 0; i < count; i++) a[b + 1 + i] = selected[i]!;
      }
      for (let i = 0; i < count; i++) this.#addLink(selected[i]!, l, node);
      // All of this layer's results seed the next layer down.
      if (this.#entries.length < found) this.#entries = new Int32Array(2 * found);
      this.#entries.set(this.#ids.subarray(0, found));
      this.#entryCount = found;
    }
  }

  /** Adds a link e -> node on layer l; a full list is re-chosen by the heuristic over its links + node. */
  #addLink(e: number, l: number, node: number): void {
    this.#locate(e, l);
    const a = this.#la;
    const b = this.#lb;
    const cnt = a[b]!;
    const cap = l === 0 ? this.#maxM0 : this.M;
    for (let j = b + 1; j <= b + cnt; j++) if (a[j] === node) return;
    if (cnt < cap) {
      a[b + 1 + cnt] = node;
      a[b] = cnt + 1;
      return;
    }
    // node then the list, scored against e in one kernel call (cnt + 1 <= 2M + 1 <= the batch).
    const i32 = this.#i32;
    const f32 = this.#f32;
    const idsAt = this.#idsPtr >>> 2;
    const outAt = this.#outPtr >>> 2;
    i32[idsAt] = node;
    for (let j = 0; j < cnt; j++) i32[idsAt + 1 + j] = a[b + 1 + j]!;
    this.#kernel.dotMany(this.#addr(e), this.#idsPtr, cnt + 1, this.#vbase, this.#vlen, this.#outPtr);
    const ids = this.#shIds;
    const scores = this.#shScores;
    // Insertion sort, best first: at most 2M + 1 entries.
    let m = 0;
    for (let j = 0; j <= cnt; j++) {
      const x = i32[idsAt + j]!;
      const s = f32[outAt + j]!;
      let i = m++;
      while (i > 0 && scores[i - 1]! < s) {
        scores[i] = scores[i - 1]!;
        ids[i] = ids[i - 1]!;
        i--;
      }
      scores[i] = s;
      ids[i] = x;
    }
    const out = this.#shOut;
    const kept = this.#selectNeighbours(ids, scores, m, cap, out);
    a[b] = kept;
    for (let i = 0; i < kept; i++) a[b + 1 + i] = out[i]!;
  }

  /**
   * Rebuilds live node n's links on layer l when they include a tombstone: candidates are its
   * live links plus the live links of its tombstoned ones (and, when that gives fewer than
   * the list's capacity, of the tombstones those lead to), chosen by the heuristic.
   */
  #repair(n: number, l: number): void {
    this.#locate(n, l);
    const a = this.#la;
    const b = this.#lb;
    const cnt = a[b]!;
    const flags = this.#flags;
    let dirty = false;
    for (let j = b + 1; j <= b + cnt; j++) {
      if (flags[a[j]!] !== LIVE) {
        dirty = true;
        break;
      }
    }
    if (!dirty) return;
    const kernel = this.#kernel;
    const len = this.#vlen;
    const visited = this.#visited;
    const cap = l === 0 ? this.#maxM0 : this.M;
    const na = this.#addr(n);
    const heap = this.#cand;
    heap.clear();
    const gen = this.#nextGen();
    visited[n] = gen;
    const hop = this.#hop;
    let hops = 0;
    for (let j = b + 1; j <= b + cnt; j++) {
      const x = a[j]!;
      if (visited[x] === gen) continue;
      visited[x] = gen;
      if (flags[x] === LIVE) {
        heap.push(-kernel.dot(na, this.#addr(x), len), x);
        continue;
      }
      this.#locate(x, l);
      const xa = this.#la;
      const xb = this.#lb;
      for (let i = xb + 1; i <= xb + xa[xb]!; i++) {
        const y = xa[i]!;
        if (visited[y] === gen) continue;
        visited[y] = gen;
        if (flags[y] === LIVE) heap.push(-kernel.dot(na, this.#addr(y), len), y);
        else if (hops < hop.length) hop[hops++] = y;
      }
    }
    if (heap.size < cap) {
      for (let h = 0; h < hops; h++) {
        this.#locate(hop[h]!, l);
        const ya = this.#la;
        const yb = this.#lb;
        for (let i = yb + 1; i <= yb + ya[yb]!; i++) {
          const z = ya[i]!;
          if (visited[z] === gen) continue;
          visited[z] = gen;
          if (flags[z] === LIVE) heap.push(-kernel.dot(na, this.#addr(z), len), z);
        }
      }
    }
    const take = Math.min(heap.size, REPAIR_CANDIDATE_FACTOR * cap);
    if (this.#ids.length < take) {
      this.#ids = new Int32Array(2 * take);
      this.#scores = new Float64Array(2 * take);
    }
    const ids = this.#ids;
    const scores = this.#scores;
    for (let i = 0; i < take; i++) {
      scores[i] = -heap.topKey;
      ids[i] = heap.pop();
    }
    const out = this.#shOut;
    const kept = this.#selectNeighbours(ids, scores, take, cap, out);
    a[b] = kept;
    for (let i = 0; i < kept; i++) a[b + 1 + i] = out[i]!;
  }

  /**
   * After a cleanup, gives every live node that no layer-0 link reaches (other than the entry
   * point) in-links again, and every live node left without layer-0 links out-links, by
   * linking it as an insert would. Keeps deletes from cutting nodes off the graph.
   */
  #relinkOrphans(): void {
    const flags = this.#flags;
    const visited = this.#visited;
    const gen = this.#nextGen();
    const n = this.#nodeCount;
    for (let c = 0; c < n; c++) {
      if (flags[c] !== LIVE) continue;
      this.#locate(c, 0);
      const a = this.#la;
      const b = this.#lb;
      for (let j = b + 1; j <= b + a[b]!; j++) visited[a[j]!] = gen;
    }
    visited[this.#entry] = gen;
    const orphans: number[] = [];
    const noLinks: boolean[] = [];
    for (let c = 0; c < n; c++) {
      if (flags[c] !== LIVE) continue;
      const empty = this.#links0[c >> CHUNK_SHIFT]![(c & CHUNK_MASK) * this.#stride0] === 0;
      if (visited[c] !== gen || empty) {
        orphans.push(c);
        noLinks.push(empty);
      }
    }
    for (let i = 0; i < orphans.length; i++) this.#connect(orphans[i]!, 0, noLinks[i]!);
  }

  /** Cross-checks a deserialized index; returns what is wrong, or undefined. */
  #checkConsistency(): string | undefined {
    const n = this.#nodeCount;
    const flags = this.#flags;
    const levels = this.#levels;
    let live = 0;
    let deleted = 0;
    let free = 0;
    for (let i = 0; i < n; i++) {
      const f = flags[i]!;
      if (f === LIVE) live++;
      else if (f === DELETED) deleted++;
      else if (f === FREE) free++;
      else return `node ${i} has an unknown state ${f}`;
      if (f === FREE && levels[i] !== 0) return `free node ${i} has a level`;
      for (let l = 0; l <= levels[i]!; l++) {
        this.#locate(i, l);
        const a = this.#la;
        const b = this.#lb;
        const cnt = a[b]!;
        if (cnt < 0 || cnt > (l === 0 ? this.#maxM0 : this.M)) return `node ${i} has ${cnt} links on layer ${l}`;
        if (f === FREE && cnt !== 0) return `free node ${i} has links`;
        for (let j = b + 1; j <= b + cnt; j++) {
          const x = a[j]!;
          if (x < 0 || x >= n || flags[x] === FREE || levels[x]! < l) return `node ${i} links to an invalid node ${x} on layer ${l}`;
        }
      }
    }
    if (live !== this.#live || deleted !== this.#deleted) return 'live / deleted counts do not match the node states';
    if (free !== this.#free.length) return 'the free list does not match the node states';
    const seen = new Set<number>();
    for (const x of this.#free) {
      if (x < 0 || x >= n || flags[x] !== FREE || seen.has(x)) return `the free list holds an invalid node ${x}`;
      seen.add(x);
    }
    if (live + deleted === 0) {
      if (this.#entry !== -1 || this.#maxLevel !== -1) return 'an empty index has an entry point';
    } else if (this.#entry < 0 || this.#entry >= n || flags[this.#entry] === FREE || levels[this.#entry] !== this.#maxLevel) {
      return `invalid entry point ${this.#entry}`;
    }
    return undefined;
  }
}
