import type { Principal, SystemStore } from '../engine/system/index.js';

/** How long a verified key is taken on trust before SystemStore checks it again. */
export const VERIFIED_KEY_TTL_MS = 5_000;
/** Keys remembered at most; past this the least recently verified is dropped. */
export const VERIFIED_KEY_MAX = 10_000;

// `tetra_<16 hex keyId>_<secret>` (engine/system/api-key.ts): where the key id sits. Were the
// format to change, lookups would only miss (entries are stored under principal.keyId), never
// let a wrong key in: a hit still compares the whole key.
const KEY_ID_START = 'tetra_'.length;
const KEY_ID_END = KEY_ID_START + 16;

interface Verified {
  /** The whole key as presented when SystemStore accepted it. Never logged. */
  apiKey: string;
  principal: Principal;
  /** Date.now() after which SystemStore must verify the key again. */
  until: number;
}

/**
 * The authentication every request goes through: SystemStore.authenticate() (a map lookup and a
 * SHA-256 of the key), with the keys it accepted in the last VERIFIED_KEY_TTL_MS remembered by
 * key id. A request presenting the same key again is compared with the remembered one in constant
 * time instead of hashed. Revoking through revokeKey() forgets the key at once, so a revoked key is
 * refused from the moment of the call, as SystemStore does; a key revoked behind this cache's back
 * (SystemStore.revokeKey called directly) is still accepted for at most the TTL. lastUsedAt,
 * advisory and written once a minute anyway, is refreshed once per TTL instead of on every request.
 */
export class VerifiedKeyCache {
  readonly #system: SystemStore;
  readonly #entries = new Map<string, Verified>();
  readonly #ttlMs: number;
  readonly #max: number;

  constructor(system: SystemStore, options: { ttlMs?: number; maxEntries?: number } = {}) {
    this.#system = system;
    this.#ttlMs = options.ttlMs ?? VERIFIED_KEY_TTL_MS;
    this.#max = options.maxEntries ?? VERIFIED_KEY_MAX;
  }

  /**
   * The principal of a presented key, or undefined when it is malformed, unknown or revoked.
   * @throws UNAVAILABLE after the system store is closed
   */
  authenticate(apiKey: string, now = Date.now()): Principal | undefined {
    const keyId = apiKey.slice(KEY_ID_START, KEY_ID_END);
    const known = this.#entries.get(keyId);
    if (known !== undefined && known.until > now && sameKey(known.apiKey, apiKey)) return known.principal;
    // Unknown, stale, or a different secret for a known id: the store decides. A wrong secret
    // leaves the remembered key alone (it proves nothing about it).
    const principal = this.#system.authenticate(apiKey);
    if (principal === undefined) {
      if (known !== undefined && known.until <= now) this.#entries.delete(keyId);
      return undefined;
    }
    // Re-inserted at the end: the map's order is least recently verified first.
    this.#entries.delete(principal.keyId);
    if (this.#entries.size >= this.#max) this.#entries.delete(this.#entries.keys().next().value!);
    this.#entries.set(principal.keyId, { apiKey, principal, until: now + this.#ttlMs });
    return principal;
  }

  /**
   * Revokes a key (SystemStore.revokeKey) and forgets it first, so no request is let in by this
   * cache once the call is made.
   * @throws NOT_FOUND when the tenant has no such active key
   * @throws UNAVAILABLE when the store is closed or failed
   */
  revokeKey(tenantId: string, keyId: string): Promise<void> {
    this.#entries.delete(keyId);
    // Forgotten again once revoked: a request verified while the revocation was being written
    // must not keep the key trusted for another TTL.
    return this.#system.revokeKey(tenantId, keyId).finally(() => this.#entries.delete(keyId));
  }
}

/**
 * Whether two keys are equal, in time that depends on their length only (which is public: every
 * key has the same length), never on where they first differ.
 */
function sameKey(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}
