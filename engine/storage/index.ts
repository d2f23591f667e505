// The storage layer's public face: bytes on disk (WAL, page file, copy-on-write B+trees, page
// cache) and the order-preserving key codec. engine/tenant composes these into a tenant store.
export * from './format.js';
export { initChecksum, checksum32 } from './checksum.js';
export { failpoint } from './failpoint.js';
export { PageCache, DEFAULT_DIRTY_BYTES, type PageCacheOptions } from './page-cache.js';
export { DirtyBudget, type DirtyOwner } from './dirty-budget.js';
export { MemoryGovernor, type MemoryGovernorOptions, type MemoryGovernorState } from './memory-governor.js';
export { AckPacer, ackPacer } from './ack-pacer.js';
export { writeDerivedFile, readDerivedFile, removeDerivedFile, openDerivedWriter, type DerivedWriter } from './derived-file.js';
export { PageFile, fsyncDir, ensureDirDurable, type FileHeader, type PageFileTail } from './page-file.js';
export { BTree, emptyPageStats, TreeReader, type Entry, type ScanRange, type NodeStore, type NodeSource, type TreePageStats } from './btree.js';
export type { TreeNode } from './btree-node.js';
export { ValueRun } from './btree-node.js';
export { TreeSet, TreeSnapshot, MERGE_DELTA_MIN, BUFFER_FROM, type TreeSetOptions } from './tree-set.js';
export { MergedReader, deltaName, isDeltaName, type TreeView } from './buffered-tree.js';
export { WalWriter, FSYNC_MODES, type FsyncMode } from './wal-writer.js';
export { recoverWal, type WalRecovery } from './wal-reader.js';
export { allocFrame, listSegments, segmentName, type SegmentInfo } from './wal-segment.js';
export { encodeKey, decodeKey, compareKeys, prefixUpperBound, encodeKeyPrefix, keyPrefixRange, KeyCodecError, KEY_TAG, KEY_MAX_DEPTH, type KeyPart } from './key-codec.js';
export { SpillArea, SpillSpace, SpillFile, SpillRunReader, isSpillFileName, type SpillRun } from './spill-file.js';
