import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * API keys look like `tetra_<keyId>_<secret>`:
 * - keyId: 16 lowercase hex characters (64 random bits). It is not secret: it names the key in
 *   listings and revocation, and lets authenticate() find the key without scanning.
 * - secret: 32 random bytes (256 bits) in base64url without padding, always 43 characters.
 *
 * base64url may contain `_`, so the key is parsed by position, never by splitting on `_`: the
 * keyId has a fixed length, which makes the whole shape one fixed-length pattern.
 * Only SHA-256 of the whole key string is ever stored.
 */
export const API_KEY_PREFIX = 'tetra_';
export const KEY_ID_HEX_CHARS = 16;
export const SECRET_BYTES = 32;
const SECRET_CHARS = Math.ceil((SECRET_BYTES * 8) / 6); // 43, base64url without padding
export const API_KEY_LENGTH = API_KEY_PREFIX.length + KEY_ID_HEX_CHARS + 1 + SECRET_CHARS;
export const API_KEY_HASH_BYTES = 32;

const API_KEY_PATTERN = new RegExp(`^${API_KEY_PREFIX}([0-9a-f]{${KEY_ID_HEX_CHARS}})_[A-Za-z0-9_-]{${SECRET_CHARS}}$`);

/** A fresh random key id (16 lowercase hex characters). */
export function newKeyId(): string {
  return randomBytes(KEY_ID_HEX_CHARS / 2).toString('hex');
}

/** A new API key for `keyId` and the hash to store for it; the key itself must never be stored. */
export function generateApiKey(keyId: string): { apiKey: string; hash: Buffer } {
  const apiKey = `${API_KEY_PREFIX}${keyId}_${randomBytes(SECRET_BYTES).toString('base64url')}`;
  return { apiKey, hash: hashApiKey(apiKey) };
}

/** The key id of a well-formed API key, or undefined for anything else. */
export function parseApiKeyId(apiKey: unknown): string | undefined {
  // The length check first keeps hostile input (a megabyte header) away from the regex.
  if (typeof apiKey !== 'string' || apiKey.length !== API_KEY_LENGTH) return undefined;
  return API_KEY_PATTERN.exec(apiKey)?.[1];
}

/** SHA-256 of the whole key string. */
export function hashApiKey(apiKey: string): Buffer {
  return createHash('sha256').update(apiKey, 'utf8').digest();
}

/** Constant-time comparison of a presented key's hash with the stored one. */
export function hashesEqual(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}
