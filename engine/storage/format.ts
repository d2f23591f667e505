/**
 * Every constant of the on-disk format, in one place. docs/storage-format.md describes the same
 * bytes in prose; change both together and bump the version numbers when the bytes change.
 * All integers are little-endian unless said otherwise; lsns are stored as float64 so any
 * safe integer (2^53) fits without BigInt on the hot path.
 */

// ---- Page file (data.tdb) -------------------------------------------------------------------

/** Name of a tenant's page file inside its directory. */
export const DATA_FILE = 'data.tdb';
/** Compaction writes here, then renames over DATA_FILE. A leftover one is deleted on open. */
export const COMPACT_TEMP_FILE = 'data.tdb.compact';
/**
 * A new page file is written under its name plus this suffix, fsynced, then renamed into place,
 * so DATA_FILE never exists without a valid header. A leftover one is deleted on open.
 */
export const CREATE_TEMP_SUFFIX = '.new';

/** Every page is this many bytes; page n starts at byte n * PAGE_SIZE. */
export const PAGE_SIZE = 8192;

/** Common page header: [u32 xxhash32 of bytes 4..PAGE_SIZE][u8 type][u8 reserved][u16 count]. */
export const PAGE_CHECKSUM_OFFSET = 0;
export const PAGE_TYPE_OFFSET = 4;
export const PAGE_COUNT_OFFSET = 6;
export const PAGE_HEADER_SIZE = 8;
/** Bytes of a page available to entries. */
export const PAGE_PAYLOAD = PAGE_SIZE - PAGE_HEADER_SIZE;

export const PAGE_TYPE = {
  LEAF: 1,
  BRANCH: 2,
  OVERFLOW: 3,
  HEADER: 4,
} as const;

/**
 * Leaf entry: [u16 keyLength][key][u8 valueKind][u32 valueLength] then, for an inline value, the
 * value bytes, for an overflow value [u32 firstOverflowPage] (the value's pages are contiguous).
 */
export const LEAF_ENTRY_FIXED = 2 + 1 + 4;
export const VALUE_INLINE = 0;
export const VALUE_OVERFLOW = 1;
export const OVERFLOW_REF_SIZE = 4;

/**
 * Branch page: `count` is the number of children. [u32 child0] then (count - 1) times
 * [u16 keyLength][key][u32 child]. Child i + 1 holds keys >= the key before it.
 */
export const BRANCH_CHILD_SIZE = 4;
export const BRANCH_ENTRY_FIXED = 2 + 4;

/** Overflow page: header (count = 0) then raw value bytes. */
export const OVERFLOW_PAYLOAD = PAGE_PAYLOAD;

/** Largest key in bytes: two maximal leaf entries must still fit in one page. */
export const MAX_KEY_BYTES = 2048;
/** A value goes to overflow pages when key + value exceed this, so any entry fits in 3 KiB. */
export const MAX_INLINE_ENTRY_BYTES = 3000;
/** Largest single value (documents, KV values, SQL rows and index entries all fit well below). */
export const MAX_VALUE_BYTES = 16 * 1024 * 1024;

/**
 * Header page, appended after each checkpoint's pages; the last one whose checksum holds is the
 * file's state. Page 0 is always a header (the empty state), so page id 0 means "no page".
 * After the common page header: [u32 magic][u16 version][u16 pageSize][f64 checkpointLsn]
 * [u32 catalogRoot][u32 pageCount][u32 livePages][f64 writtenAtMs].
 */
export const HEADER_MAGIC = 0x48424454; // "TDBH" read as little-endian bytes
export const FORMAT_VERSION = 1;
export const HEADER_MAGIC_OFFSET = 8;
export const HEADER_VERSION_OFFSET = 12;
export const HEADER_PAGE_SIZE_OFFSET = 14;
export const HEADER_CHECKPOINT_LSN_OFFSET = 16;
export const HEADER_CATALOG_ROOT_OFFSET = 24;
export const HEADER_PAGE_COUNT_OFFSET = 28;
export const HEADER_LIVE_PAGES_OFFSET = 32;
export const HEADER_WRITTEN_AT_OFFSET = 36;

/** Reference meaning "no page" (page 0 is a header, never a tree node). */
export const NO_PAGE = 0;

// ---- Write-ahead log (wal-<first lsn as 16 hex digits>.log) -----------------------------------

export const WAL_FILE_PREFIX = 'wal-';
export const WAL_FILE_SUFFIX = '.log';
/** Segment header: [u32 magic][u16 version][u16 reserved][f64 firstLsn]. */
export const WAL_MAGIC = 0x4c415754; // "TWAL" read as little-endian bytes
/** Version every new segment is written with: frames carry syncedThrough. */
export const WAL_VERSION = 2;
/** Frames without syncedThrough; such segments are still read and replayed, never appended to. */
export const WAL_VERSION_1 = 1;
export const WAL_MAGIC_OFFSET = 0;
export const WAL_VERSION_OFFSET = 4;
export const WAL_FIRST_LSN_OFFSET = 8;
export const WAL_SEGMENT_HEADER_SIZE = 16;
/**
 * Record frame (version 2): [u32 payloadLength][u32 xxhash32][u32 syncedThrough][payload]. The
 * checksum covers the length bytes, the syncedThrough bytes and the payload, in that order.
 * syncedThrough is the byte offset in the segment up to which the log was durable (an fdatasync
 * covering it had completed) when the writer formed the group this frame belongs to; recovery
 * uses it to tell a never-synced group that landed out of order from damaged synced data.
 */
export const WAL_FRAME_LENGTH_OFFSET = 0;
export const WAL_FRAME_CHECKSUM_OFFSET = 4;
export const WAL_FRAME_SYNCED_OFFSET = 8;
export const WAL_FRAME_HEADER_SIZE = 12;
/** Record frame (version 1): [u32 payloadLength][u32 xxhash32 over the length bytes and payload][payload]. */
export const WAL_V1_FRAME_HEADER_SIZE = 8;
/**
 * Both versions checksum the length bytes followed by the frame from this byte to its end
 * (version 2: syncedThrough and payload; version 1: payload).
 */
export const WAL_FRAME_HASHED_FROM = 8;
/** Largest syncedThrough a frame can hold (u32); segments never get near it (see segmentBytes). */
export const WAL_MAX_SYNCED_OFFSET = 0xffffffff;
/** Largest record payload; a length above this is treated as a bad frame. */
export const WAL_MAX_RECORD_BYTES = 256 * 1024 * 1024;
/** WAL groups up to this size are written with a synchronous write (a page-cache copy). */
export const WAL_SYNC_WRITE_MAX_BYTES = 256 * 1024;
/** A lone writer's fsync runs inline while recent fsyncs take less than this (µs). */
export const WAL_INLINE_FSYNC_MAX_MICROS = 400;
/** xxhash32 seed for WAL frames and pages. */
export const CHECKSUM_SEED = 0x7e7a;

// ---- Operations inside a WAL record payload (msgpackr {lsn, ops: [[op, tree, key, value?]]}) --

export const OP = {
  PUT: 1,
  DELETE: 2,
  DROP_TREE: 3,
} as const;

/** Tree names are UTF-8, 1..MAX_TREE_NAME_BYTES; the catalog maps name -> {root, count}. */
export const MAX_TREE_NAME_BYTES = 512;

/** Catalog value: [u32 rootPage][f64 keyCount]; the key is the tree name in UTF-8. */
export const CATALOG_ENTRY_BYTES = 12;

/**
 * A checkpoint writes its pages in chunks, yielding to the event loop between them: a chunk is
 * encoded, checksummed and cached in one synchronous stretch. A chunk ends at this many bytes, or
 * once its stretch has run CHECKPOINT_CHUNK_MS, whichever comes first: on an idle loop a
 * checkpoint moves 256 KiB per turn, on a busy one it stays within its time slice (a fixed 256
 * KiB cost the stalls bench 40-45 ms of p99 at 500k keys; a fixed 32 KiB bounded the stall but
 * capped checkpoints at a chunk per busy turn, and writers waited longer for dirty-budget room).
 */
export const CHECKPOINT_CHUNK_BYTES = 256 * 1024;
export const CHECKPOINT_CHUNK_MS = 1;

/** Compaction copies pages in chunks of this many bytes between awaits. */
export const COMPACT_CHUNK_BYTES = 1024 * 1024;

// ---- Keys (order-preserving tuple encoding; layout described in key-codec.ts) --------------

/**
 * Type tags and escape bytes of the key encoding. These values are the on-disk format: changing
 * one makes existing files unreadable. Gaps are left so that types can be added in order later.
 */
export const KEY_TAG = {
  /** Terminates a nested tuple and the body of a string or byte array. */
  END: 0x00,
  NULL: 0x10,
  FALSE: 0x20,
  TRUE: 0x21,
  /** NaN has its own tag (below NUMBER) so that all NaN bit patterns are one value. */
  NAN: 0x2f,
  NUMBER: 0x30,
  STRING: 0x40,
  BYTES: 0x50,
  TUPLE: 0x60,
  /** Follows a 0x00 that is data inside a string or byte array body, not its terminator. */
  ESCAPE: 0xff,
} as const;

/**
 * Deepest nesting of tuples accepted by encodeKey and decodeKey. The codec recurses once per
 * level; the limit turns a cyclic array or a hostile key into VALIDATION_FAILED instead of a
 * stack overflow.
 */
export const KEY_MAX_DEPTH = 32;

// ---- Derived files (derived/<name>.bin): snapshots of structures rebuilt from the trees -------

/** Directory of a tenant's derived files (the vector index's graph). */
export const DERIVED_DIR = 'derived';
export const DERIVED_FILE_SUFFIX = '.bin';
/** Written under this suffix, fsynced, then renamed over the old file. */
export const DERIVED_TEMP_SUFFIX = '.tmp';
/**
 * Derived file: [u32 magic][u16 version][u16 reserved][f64 payloadLength][u32 xxhash32 of the
 * payload][u32 reserved][payload]. A file that is short, has another magic or version, or whose
 * checksum does not match is ignored: its owner rebuilds from the trees.
 */
export const DERIVED_MAGIC = 0x56524454; // "TDRV" read as little-endian bytes
export const DERIVED_VERSION = 1;
export const DERIVED_HEADER_SIZE = 24;
export const DERIVED_LENGTH_OFFSET = 8;
export const DERIVED_CHECKSUM_OFFSET = 16;

// ---- Spill files (<spill dir>/query-<pid>-<n>-<k>.spill) ---------------------------------------

/** The spill directory's default name inside the data directory (TETRA_SPILL_DIR overrides it). */
export const SPILL_DIR = 'spill';
/**
 * A spill file's name: SPILL_FILE_PREFIX, the process id, the query's number and the file's, then
 * SPILL_FILE_SUFFIX. Spill files live only as long as their query: any file with this prefix and
 * suffix found at start-up is a leftover of a process that died mid-query, and is deleted.
 */
export const SPILL_FILE_PREFIX = 'query-';
export const SPILL_FILE_SUFFIX = '.spill';
/**
 * A spill file is a sequence of runs, each a sequence of records `[u32 length][payload]`. No
 * checksum and no header: a spill file is read back only by the query that wrote it, in the same
 * process, never after a crash.
 */
export const SPILL_RECORD_HEADER_SIZE = 4;
/** Records are gathered into writes of this size (large sequential writes). */
export const SPILL_WRITE_BUFFER_BYTES = 1024 * 1024;
/** The most and the fewest bytes a run's reader holds (a merge of many runs gives each less). */
export const SPILL_READ_BUFFER_MAX_BYTES = 1024 * 1024;
export const SPILL_READ_BUFFER_MIN_BYTES = 16 * 1024;
