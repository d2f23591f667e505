// The system registry: users, tenants and API keys, in a tenant store of its own. The server
// authenticates every request through SystemStore.authenticate().
export { SystemStore, type ApiKeyInfo, type Principal, type SystemStoreOptions, type TenantInfo, type UserInfo } from './system-store.js';
