import { fail } from '../errors.js';
import type { BatchOp, TenantStore } from '../tenant/index.js';
import { HNSW_LIMITS, VECTOR_LIMITS } from './vector-limits.js';
import { decodeNamespaceInfo, encodeNamespaceInfo, NAMESPACES_TREE, type NamespaceInfo } from './vector-codec.js';

// Namespace names never contain NUL, so this key cannot collide with one.
const NEXT_NUMBER_KEY = Buffer.from('\u0000next', 'utf8');

/** Checks a namespace name: 0-64 UTF-8 bytes ('' is the default), no control characters. @throws VALIDATION_FAILED */
export function validateNamespace(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value !== 'string') fail('VALIDATION_FAILED', 'namespace must be a string', { field: 'namespace' });
  if (Buffer.byteLength(value) > VECTOR_LIMITS.maxNamespaceBytes) {
    fail('VALIDATION_FAILED', `namespace must be at most ${VECTOR_LIMITS.maxNamespaceBytes} bytes`, { field: 'namespace' });
  }
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(value) || !(value as unknown as { isWellFormed(): boolean }).isWellFormed()) {
    fail('VALIDATION_FAILED', 'namespace must not contain control characters or lone surrogates', { field: 'namespace' });
  }
  return value;
}

export function readNamespace(store: TenantStore, name: string): NamespaceInfo | undefined {
  const bytes = store.get(NAMESPACES_TREE, Buffer.from(name, 'utf8'));
  return bytes === undefined ? undefined : decodeNamespaceInfo(bytes);
}

export function namespaceOp(name: string, info: NamespaceInfo): BatchOp & { op: 'put' } {
  return { op: 'put', tree: NAMESPACES_TREE, key: Buffer.from(name, 'utf8'), value: encodeNamespaceInfo(info) };
}

export function listNamespaces(store: TenantStore): Array<{ name: string; info: NamespaceInfo }> {
  const out: Array<{ name: string; info: NamespaceInfo }> = [];
  for (const [key, value] of store.scan(NAMESPACES_TREE)) {
    if (key[0] === 0) continue;
    out.push({ name: key.toString('utf8'), info: decodeNamespaceInfo(value) });
  }
  return out;
}

export interface HnswSettings {
  M?: unknown;
  efConstruction?: unknown;
  efSearch?: unknown;
}

function setting(value: unknown, name: keyof typeof HNSW_LIMITS, current: number): number {
  if (value === undefined || value === null) return current;
  const { min, max } = HNSW_LIMITS[name];
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    fail('VALIDATION_FAILED', `${name} must be an integer between ${min} and ${max}`, { field: name });
  }
  return value;
}

/** The parameters `settings` asks for, over `base` (defaults for a new namespace). @throws VALIDATION_FAILED */
export function hnswSettings(settings: HnswSettings, base?: Pick<NamespaceInfo, 'M' | 'efConstruction' | 'efSearch'>): Pick<NamespaceInfo, 'M' | 'efConstruction' | 'efSearch'> {
  return {
    M: setting(settings.M, 'M', base?.M ?? HNSW_LIMITS.M.default),
    efConstruction: setting(settings.efConstruction, 'efConstruction', base?.efConstruction ?? HNSW_LIMITS.efConstruction.default),
    efSearch: setting(settings.efSearch, 'efSearch', base?.efSearch ?? HNSW_LIMITS.efSearch.default),
  };
}

/**
 * The ops that create namespace `name` (in one batch with whatever else the caller writes) and
 * its info. @throws VALIDATION_FAILED past the namespace limit
 */
export function createNamespaceOps(store: TenantStore, name: string, params: Pick<NamespaceInfo, 'M' | 'efConstruction' | 'efSearch'>): { ops: BatchOp[]; info: NamespaceInfo } {
  if (store.count(NAMESPACES_TREE) - 1 >= VECTOR_LIMITS.maxNamespaces) {
    fail('VALIDATION_FAILED', `at most ${VECTOR_LIMITS.maxNamespaces} namespaces per tenant`, { limit: VECTOR_LIMITS.maxNamespaces });
  }
  const next = store.get(NAMESPACES_TREE, NEXT_NUMBER_KEY);
  const number = next === undefined ? 1 : next.readUInt32LE(0);
  const counter = Buffer.allocUnsafe(4);
  counter.writeUInt32LE(number + 1);
  const info: NamespaceInfo = { number, ...params, prunedThrough: 0 };
  return { ops: [{ op: 'put', tree: NAMESPACES_TREE, key: NEXT_NUMBER_KEY, value: counter }, namespaceOp(name, info)], info };
}
