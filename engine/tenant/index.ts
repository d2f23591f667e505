// One tenant's store (named trees, atomic batches, snapshots, checkpoint, recovery, compaction)
// and the registry that keeps a bounded number of them open.
export { TenantStore, TENANT_STORE_DEFAULTS, isSecondaryIndexTree, type BatchOp, type StoreScanRange, type TenantStoreOptions } from './tenant-store.js';
export { Snapshot } from './tenant-snapshot.js';
export { TenantRegistry, type TenantRegistryOptions } from './tenant-registry.js';
