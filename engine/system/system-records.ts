import { Packr } from 'msgpackr';
import { fail } from '../errors.js';
import { API_KEY_HASH_BYTES } from './api-key.js';

/**
 * The system store's trees and the records in them. Keys are the UTF-8 bytes of the id (or of
 * the normalised email); values are msgpack maps.
 *
 *   meta     "version"  -> { version }                              format of this store
 *   users    userId     -> UserRecord
 *   emails   email      -> userId (UTF-8 bytes)                     uniqueness index
 *   tenants  tenantId   -> TenantRecord
 *   keys     keyId      -> KeyRecord                                 hash only, never the key
 */
export const TREES = { meta: 'meta', users: 'users', emails: 'emails', tenants: 'tenants', keys: 'keys' } as const;
export const META_VERSION_KEY = Buffer.from('version');
export const SYSTEM_FORMAT_VERSION = 1;

export interface UserRecord {
  id: string;
  email: string;
  tenantId: string;
  createdAt: string;
}

export interface TenantRecord {
  id: string;
  name: string;
  createdAt: string;
  createdBy: string;
}

export interface KeyRecord {
  id: string;
  /** SHA-256 of the whole key string. */
  hash: Buffer;
  tenantId: string;
  userId: string;
  name: string | null;
  createdAt: string;
  /** Creation order across the store: orders listings when createdAt ties (same millisecond). */
  seq: number;
  revokedAt: string | null;
  lastUsedAt: string | null;
}

const packr = new Packr({ useRecords: false });

export function idKey(id: string): Buffer {
  return Buffer.from(id, 'utf8');
}

export function pack(record: object): Buffer {
  return packr.pack(record);
}

/** @throws CORRUPTION when the stored bytes are not a tenant record */
export function unpackTenant(bytes: Buffer): TenantRecord {
  const r = unpackMap(bytes, TREES.tenants);
  if (!isString(r.id) || !isString(r.name) || !isString(r.createdAt) || !isString(r.createdBy)) corrupt(TREES.tenants);
  return { id: r.id, name: r.name, createdAt: r.createdAt, createdBy: r.createdBy };
}

/** @throws CORRUPTION when the stored bytes are not a key record */
export function unpackKey(bytes: Buffer): KeyRecord {
  const r = unpackMap(bytes, TREES.keys);
  if (
    !isString(r.id) ||
    !(r.hash instanceof Uint8Array) ||
    r.hash.length !== API_KEY_HASH_BYTES ||
    !isString(r.tenantId) ||
    !isString(r.userId) ||
    !(r.name === null || isString(r.name)) ||
    !isString(r.createdAt) ||
    typeof r.seq !== 'number' ||
    !(r.revokedAt === null || isString(r.revokedAt)) ||
    !(r.lastUsedAt === null || isString(r.lastUsedAt))
  ) {
    corrupt(TREES.keys);
  }
  return {
    id: r.id,
    // A copy: the unpacked bytes may be a view into a page buffer.
    hash: Buffer.from(r.hash),
    tenantId: r.tenantId,
    userId: r.userId,
    name: r.name,
    createdAt: r.createdAt,
    seq: r.seq,
    revokedAt: r.revokedAt,
    lastUsedAt: r.lastUsedAt,
  };
}

/** @throws CORRUPTION when the stored bytes are not a meta record */
export function unpackVersion(bytes: Buffer): number {
  const r = unpackMap(bytes, TREES.meta);
  if (typeof r.version !== 'number') corrupt(TREES.meta);
  return r.version;
}

function unpackMap(bytes: Buffer, tree: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = packr.unpack(bytes);
  } catch (err) {
    return fail('CORRUPTION', `system store: undecodable record in tree ${tree}`, undefined, err);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) corrupt(tree);
  return value as Record<string, unknown>;
}

function isString(v: unknown): v is string {
  return typeof v === 'string';
}

function corrupt(tree: string): never {
  return fail('CORRUPTION', `system store: malformed record in tree ${tree}`);
}
