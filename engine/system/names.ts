import { fail } from '../errors.js';

export const MAX_ORG_NAME_CHARS = 200;
export const MAX_KEY_NAME_CHARS = 100;

/**
 * A trimmed organisation name of 1 to 200 characters (code points, so emoji count once).
 * @throws VALIDATION_FAILED naming orgName
 */
export function normalizeOrgName(input: unknown): string {
  const name = typeof input === 'string' ? input.trim() : undefined;
  if (name === undefined || !lengthBetween(name, 1, MAX_ORG_NAME_CHARS)) {
    fail('VALIDATION_FAILED', `orgName must be a string of 1 to ${MAX_ORG_NAME_CHARS} characters`, { field: 'orgName' });
  }
  return name;
}

/**
 * A trimmed API key name of 1 to 100 characters, or null when none is given (undefined or null).
 * @throws VALIDATION_FAILED naming name
 */
export function normalizeKeyName(input: unknown): string | null {
  if (input === undefined || input === null) return null;
  const name = typeof input === 'string' ? input.trim() : undefined;
  if (name === undefined || !lengthBetween(name, 1, MAX_KEY_NAME_CHARS)) {
    fail('VALIDATION_FAILED', `name must be a string of 1 to ${MAX_KEY_NAME_CHARS} characters`, { field: 'name' });
  }
  return name;
}

function lengthBetween(s: string, min: number, max: number): boolean {
  let count = 0;
  for (const _ of s) if (++count > max) return false;
  return count >= min;
}
