import { fail } from '../errors.js';
import type { FsyncMode, PageCache, TreeNode } from '../storage/index.js';
import { TenantStore, type BatchOp } from '../tenant/index.js';
import { generateApiKey, hashApiKey, hashesEqual, newKeyId, parseApiKeyId } from './api-key.js';
import { normalizeEmail } from './email.js';
import { newId, TENANT_ID_PREFIX, USER_ID_PREFIX } from './ids.js';
import { normalizeKeyName, normalizeOrgName } from './names.js';
import {
  idKey,
  META_VERSION_KEY,
  pack,
  SYSTEM_FORMAT_VERSION,
  TREES,
  unpackKey,
  unpackTenant,
  unpackVersion,
  type KeyRecord,
  type TenantRecord,
  type UserRecord,
} from './system-records.js';

/** Who an authenticated request acts as. */
export interface Principal {
  tenantId: string;
  userId: string;
  keyId: string;
}

export interface UserInfo {
  id: string;
  email: string;
  /** ISO-8601 */
  createdAt: string;
}

export interface TenantInfo {
  id: string;
  name: string;
  /** ISO-8601 */
  createdAt: string;
}

export interface ApiKeyInfo {
  id: string;
  name: string | null;
  /** ISO-8601 */
  createdAt: string;
  /** The user id that created the key. */
  createdBy: string;
  /** ISO-8601; recorded in memory on use and written in batches (see LAST_USED_FLUSH_MS). */
  lastUsedAt: string | null;
}

export interface SystemStoreOptions {
  /** The system store's own directory (e.g. `<dataDir>/system`). */
  dir: string;
  cache: PageCache<TreeNode>;
  fsync?: FsyncMode;
}

/**
 * How often lastUsedAt changes are written. Using a key never costs a durable write of its own:
 * authenticate() only notes the time in memory; one batch per interval (and one at close) writes
 * every key used since. A crash loses at most one interval of lastUsedAt, which is advisory.
 */
const LAST_USED_FLUSH_MS = 60_000;

interface KeyEntry {
  record: KeyRecord;
  /** Frozen and shared: authenticate() returns it without allocating. */
  principal: Principal;
  /** Last successful authenticate(), not yet folded into record.lastUsedAt. */
  lastUsedMs: number | undefined;
}

/**
 * The registry of users, tenants and API keys, in a tenant store of its own. Every API key is
 * held in memory (keyId -> hash and principal), loaded at open and kept current by every change,
 * so authenticate() is a map lookup and one SHA-256 with no I/O. Writes apply synchronously and
 * resolve when durable.
 */
export class SystemStore {
  readonly #store: TenantStore;
  readonly #keys = new Map<string, KeyEntry>();
  /** Active (unrevoked) key ids per tenant. */
  readonly #tenantKeys = new Map<string, Set<string>>();
  readonly #usedSinceFlush = new Set<string>();
  readonly #flushTimer: NodeJS.Timeout;
  #nextSeq = 1;
  #closed = false;

  private constructor(store: TenantStore, keys: KeyRecord[]) {
    this.#store = store;
    for (const record of keys) {
      this.#remember(record);
      if (record.seq >= this.#nextSeq) this.#nextSeq = record.seq + 1;
    }
    this.#flushTimer = setInterval(() => {
      // A failed write breaks the store; the next request's write reports it.
      this.#flushLastUsed().catch(() => undefined);
    }, LAST_USED_FLUSH_MS);
    this.#flushTimer.unref();
  }

  /**
   * Opens (creating if needed) the system store in `dir` and loads every API key into memory.
   * @throws CORRUPTION when the files or a record are damaged, or the format is unknown
   * @throws VALIDATION_FAILED for bad options
   */
  static async open(options: SystemStoreOptions): Promise<SystemStore> {
    const store = await TenantStore.open(options.dir, { cache: options.cache, fsync: options.fsync });
    try {
      const stored = store.get(TREES.meta, META_VERSION_KEY);
      const version = stored === undefined ? undefined : unpackVersion(stored);
      if (version === undefined) {
        await store.write([{ op: 'put', tree: TREES.meta, key: META_VERSION_KEY, value: pack({ version: SYSTEM_FORMAT_VERSION }) }]);
      } else if (version !== SYSTEM_FORMAT_VERSION) {
        fail('CORRUPTION', `system store in ${options.dir} has format version ${version}; this build reads version ${SYSTEM_FORMAT_VERSION}`);
      }
      const keys: KeyRecord[] = [];
      for (const [, value] of store.scan(TREES.keys)) keys.push(unpackKey(value));
      return new SystemStore(store, keys);
    } catch (err) {
      await store.close().catch(() => undefined);
      throw err;
    }
  }

  /**
   * Creates a user, their tenant and a first API key in one atomic, durable batch.
   * @throws VALIDATION_FAILED for a bad email or orgName (the message names the field)
   * @throws CONFLICT when the email is already registered
   * @throws UNAVAILABLE when the store is closed or failed
   */
  async signup(input: { orgName: unknown; email: unknown }): Promise<{ apiKey: string; user: UserInfo; tenant: TenantInfo; key: ApiKeyInfo }> {
    this.#assertOpen();
    const body: Partial<Record<'orgName' | 'email', unknown>> = typeof input === 'object' && input !== null ? input : {};
    const orgName = normalizeOrgName(body.orgName);
    const email = normalizeEmail(body.email);
    // From the uniqueness check to write() there is no await: write() applies synchronously, so a
    // concurrent signup with the same email sees this one's index entry and gets CONFLICT.
    const emailKey = idKey(email);
    if (this.#store.has(TREES.emails, emailKey)) {
      // The signup that took the email may not be durable yet: say so only once it is.
      await this.whenDurable();
      fail('CONFLICT', 'email is already registered', { field: 'email' });
    }
    const now = new Date().toISOString();
    const userId = this.#freshId(USER_ID_PREFIX, TREES.users);
    const tenantId = this.#freshId(TENANT_ID_PREFIX, TREES.tenants);
    const user: UserRecord = { id: userId, email, tenantId, createdAt: now };
    const tenant: TenantRecord = { id: tenantId, name: orgName, createdAt: now, createdBy: userId };
    const { apiKey, record } = this.#newKey(tenant.id, user.id, null, now);
    const durable = this.#store.write([
      { op: 'put', tree: TREES.users, key: idKey(user.id), value: pack(user) },
      { op: 'put', tree: TREES.emails, key: emailKey, value: idKey(user.id) },
      { op: 'put', tree: TREES.tenants, key: idKey(tenant.id), value: pack(tenant) },
      keyPut(record),
    ]);
    const entry = this.#remember(record);
    await this.#untilDurable(durable, record.id);
    return {
      apiKey,
      user: { id: user.id, email: user.email, createdAt: user.createdAt },
      tenant: tenantInfo(tenant),
      key: keyInfo(entry),
    };
  }

  /**
   * The principal of a presented key, or undefined when it is malformed, unknown, tampered with
   * or revoked. Synchronous, no I/O: it runs on every request.
   * @throws UNAVAILABLE after close()
   */
  authenticate(apiKey: string): Principal | undefined {
    this.#assertOpen();
    const keyId = parseApiKeyId(apiKey);
    if (keyId === undefined) return undefined;
    const entry = this.#keys.get(keyId);
    if (entry === undefined || entry.record.revokedAt !== null) return undefined;
    if (!hashesEqual(hashApiKey(apiKey), entry.record.hash)) return undefined;
    entry.lastUsedMs = Date.now();
    this.#usedSinceFlush.add(keyId);
    return entry.principal;
  }

  /**
   * Creates another API key for the principal's tenant, created by the principal's user.
   * @throws VALIDATION_FAILED when name is given and is not a string of 1 to 100 characters
   * @throws UNAUTHORIZED when the principal's own key has been revoked meanwhile
   * @throws UNAVAILABLE when the store is closed or failed
   */
  async createKey(principal: Principal, name?: unknown): Promise<{ apiKey: string; key: ApiKeyInfo }> {
    this.#assertOpen();
    // The principal came from authenticate(), but its key may have been revoked since (a leaked
    // key revoked while its holder's request is in flight must not mint a successor).
    const issuer = typeof principal?.keyId === 'string' ? this.#keys.get(principal.keyId) : undefined;
    if (issuer === undefined || issuer.record.revokedAt !== null || issuer.record.tenantId !== principal.tenantId || issuer.record.userId !== principal.userId) {
      fail('UNAUTHORIZED', 'the API key has been revoked');
    }
    const keyName = normalizeKeyName(name);
    const { apiKey, record } = this.#newKey(principal.tenantId, principal.userId, keyName, new Date().toISOString());
    const durable = this.#store.write([keyPut(record)]);
    const entry = this.#remember(record);
    await this.#untilDurable(durable, record.id);
    return { apiKey, key: keyInfo(entry) };
  }

  /**
   * Undefined when every change made so far is durable, else a promise that resolves when it is.
   * What a caller read (listKeys, getTenant) is shown to a client only after this: a key created
   * or revoked by a request still in flight must not appear, or vanish, in a response that a
   * crash could then contradict.
   */
  whenDurable(): Promise<void> | undefined {
    return this.#store.whenDurable();
  }

  /**
   * The tenant's active API keys, newest first, without secrets or hashes; show them once
   * whenDurable() has resolved. @throws UNAVAILABLE after close()
   */
  listKeys(tenantId: string): ApiKeyInfo[] {
    this.#assertOpen();
    const ids = this.#tenantKeys.get(tenantId);
    if (ids === undefined) return [];
    const entries = [...ids].map((id) => this.#keys.get(id)!);
    entries.sort((a, b) => b.record.seq - a.record.seq);
    return entries.map(keyInfo);
  }

  /**
   * Revokes a key: authenticate() refuses it from the moment this is called; resolves when the
   * revocation is durable.
   * @throws NOT_FOUND when the tenant has no such active key (another tenant's key included)
   * @throws UNAVAILABLE when the store is closed or failed
   */
  async revokeKey(tenantId: string, keyId: string): Promise<void> {
    this.#assertOpen();
    const entry = typeof keyId === 'string' ? this.#keys.get(keyId) : undefined;
    // Another tenant's key is reported exactly like a missing one, so key ids cannot be probed.
    if (entry === undefined || entry.record.tenantId !== tenantId || entry.record.revokedAt !== null) {
      await this.whenDurable(); // a revocation still in flight must not be reported as done
      fail('NOT_FOUND', 'API key not found');
    }
    foldLastUsed(entry);
    entry.record.revokedAt = new Date().toISOString();
    this.#usedSinceFlush.delete(keyId);
    const active = this.#tenantKeys.get(tenantId);
    active?.delete(keyId);
    if (active?.size === 0) this.#tenantKeys.delete(tenantId);
    // If this write fails the store is failed and must be reopened; the key stays revoked in
    // memory meanwhile, which is the safe side.
    await this.#store.write([keyPut(entry.record)]);
  }

  /** The tenant, or undefined. @throws UNAVAILABLE after close(); CORRUPTION for a damaged record */
  getTenant(tenantId: string): TenantInfo | undefined {
    this.#assertOpen();
    if (typeof tenantId !== 'string' || tenantId.length === 0) return undefined;
    const bytes = this.#store.get(TREES.tenants, idKey(tenantId));
    return bytes === undefined ? undefined : tenantInfo(unpackTenant(bytes));
  }

  /** Every tenant id, in byte order. @throws UNAVAILABLE after close() */
  listTenantIds(): string[] {
    this.#assertOpen();
    return Array.from(this.#store.keys(TREES.tenants), (key) => key.toString('utf8'));
  }

  /** Writes pending lastUsedAt times, checkpoints and closes the files. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#flushTimer);
    try {
      await this.#flushLastUsed();
    } finally {
      await this.#store.close();
    }
  }

  // ---- Internals ------------------------------------------------------------------------------

  #newKey(tenantId: string, userId: string, name: string | null, now: string): { apiKey: string; record: KeyRecord } {
    let keyId = newKeyId();
    while (this.#keys.has(keyId)) keyId = newKeyId();
    const { apiKey, hash } = generateApiKey(keyId);
    const record: KeyRecord = { id: keyId, hash, tenantId, userId, name, createdAt: now, seq: this.#nextSeq++, revokedAt: null, lastUsedAt: null };
    return { apiKey, record };
  }

  #freshId(prefix: string, tree: string): string {
    let id = newId(prefix);
    while (this.#store.has(tree, idKey(id))) id = newId(prefix);
    return id;
  }

  /** Adds a key record to the in-memory indexes. */
  #remember(record: KeyRecord): KeyEntry {
    const principal: Principal = Object.freeze({ tenantId: record.tenantId, userId: record.userId, keyId: record.id });
    const entry: KeyEntry = { record, principal, lastUsedMs: undefined };
    this.#keys.set(record.id, entry);
    if (record.revokedAt === null) {
      let active = this.#tenantKeys.get(record.tenantId);
      if (active === undefined) this.#tenantKeys.set(record.tenantId, (active = new Set()));
      active.add(record.id);
    }
    return entry;
  }

  /** Awaits a write that created key `keyId`; if it fails, the key leaves memory too. */
  async #untilDurable(durable: Promise<unknown>, keyId: string): Promise<void> {
    try {
      await durable;
    } catch (err) {
      const entry = this.#keys.get(keyId);
      this.#keys.delete(keyId);
      if (entry !== undefined) this.#tenantKeys.get(entry.record.tenantId)?.delete(keyId);
      throw err;
    }
  }

  #flushLastUsed(): Promise<void> {
    if (this.#usedSinceFlush.size === 0) return Promise.resolve();
    const ops: BatchOp[] = [];
    for (const keyId of this.#usedSinceFlush) {
      const entry = this.#keys.get(keyId);
      if (entry === undefined || entry.record.revokedAt !== null) continue;
      foldLastUsed(entry);
      ops.push(keyPut(entry.record));
    }
    this.#usedSinceFlush.clear();
    return this.#store.write(ops).then(() => undefined);
  }

  #assertOpen(): void {
    if (this.#closed) fail('UNAVAILABLE', 'system store is closed');
  }
}

function keyPut(record: KeyRecord): BatchOp {
  return { op: 'put', tree: TREES.keys, key: idKey(record.id), value: pack(record) };
}

function foldLastUsed(entry: KeyEntry): void {
  if (entry.lastUsedMs === undefined) return;
  entry.record.lastUsedAt = new Date(entry.lastUsedMs).toISOString();
  entry.lastUsedMs = undefined;
}

function tenantInfo(tenant: TenantRecord): TenantInfo {
  return { id: tenant.id, name: tenant.name, createdAt: tenant.createdAt };
}

function keyInfo(entry: KeyEntry): ApiKeyInfo {
  const { record } = entry;
  const lastUsedAt = entry.lastUsedMs === undefined ? record.lastUsedAt : new Date(entry.lastUsedMs).toISOString();
  return { id: record.id, name: record.name, createdAt: record.createdAt, createdBy: record.userId, lastUsedAt };
}
