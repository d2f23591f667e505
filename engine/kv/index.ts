// The key-value model with expiry: stateless functions over one tenant's store, and the service
// that deletes expired keys actively across tenants.
export { KV_LIMITS } from './kv-limits.js';
export {
  kvPut,
  kvGet,
  kvDelete,
  kvList,
  kvExpireDue,
  kvNextExpiry,
  kvPutCost,
  type KvEntry,
  type KvListItem,
  type KvListOptions,
} from './kv-model.js';
export { TimingWheel, type TimingWheelOptions } from './timing-wheel.js';
export { KvExpiryService, scheduleAllTenants, type ExpirySweeper, type KvExpiryServiceOptions } from './kv-expiry-service.js';
