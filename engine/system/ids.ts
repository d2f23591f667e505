import { randomBytes } from 'node:crypto';

export const TENANT_ID_PREFIX = 't_';
export const USER_ID_PREFIX = 'u_';
const ID_RANDOM_BYTES = 10;

/**
 * A random id: the prefix and 20 lowercase hex characters (80 bits). Safe as a directory name
 * (the tenant registry accepts /^[A-Za-z0-9_-]{1,64}$/) and in URLs, on every file system.
 */
export function newId(prefix: string): string {
  return prefix + randomBytes(ID_RANDOM_BYTES).toString('hex');
}
