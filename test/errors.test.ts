import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES, fail, isTetraError, refusal, TetraError } from '../engine/errors.js';

const doc = readFileSync(new URL('../docs/errors.md', import.meta.url), 'utf8');
const documented = new Map([...doc.matchAll(/^\| `([A-Z_]+)` \| (\d{3}) \|/gm)].map((m) => [m[1]!, Number(m[2])]));

describe('error catalogue', () => {
  it('documents every code with its status in docs/errors.md, and no stale one', () => {
    const catalogue = new Map(Object.entries(ERROR_CODES).map(([code, { status }]) => [code, status]));
    expect(documented).toEqual(catalogue);
  });

  it('raises TetraErrors carrying code, status and details through fail()', () => {
    let caught: unknown;
    try {
      fail('QUOTA_EXCEEDED', 'tenant over quota', { limit: 10 });
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(TetraError);
    expect(isTetraError(caught, 'QUOTA_EXCEEDED')).toBe(true);
    expect(caught).toMatchObject({ code: 'QUOTA_EXCEEDED', status: 507, message: 'tenant over quota', details: { limit: 10 } });
  });

  it('uses the catalogue message when none is given', () => {
    expect(new TetraError('UNAUTHORIZED').message).toBe(ERROR_CODES.UNAUTHORIZED.message);
  });

  it('makes refusals (bad keys, rate limits) without a stack trace, and leaves the stack limit as it was', () => {
    const before = Error.stackTraceLimit;
    const err = refusal('UNAUTHORIZED', 'invalid or revoked API key', { why: 'test' });
    expect(isTetraError(err, 'UNAUTHORIZED')).toBe(true);
    expect(err.status).toBe(401);
    expect(err.message).toBe('invalid or revoked API key');
    expect(err.details).toStrictEqual({ why: 'test' });
    expect(err.stack).not.toMatch(/\n\s+at /);
    expect(Error.stackTraceLimit).toBe(before);
    // Other errors keep their stack.
    expect(new TetraError('INTERNAL').stack).toMatch(/\n\s+at /);
  });
});
