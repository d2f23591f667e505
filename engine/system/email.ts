import { fail } from '../errors.js';

export const MAX_EMAIL_CHARS = 254;
export const MAX_EMAIL_LOCAL_CHARS = 64;
const MAX_DOMAIN_LABEL_CHARS = 63;

// A deliberately plain subset of RFC 5322 addr-spec: a dot-atom local part (no quoted strings,
// no comments) and a DNS host name with at least two labels. ASCII only, so the address is at
// most 254 bytes wherever it is used as a key. Anything this rejects is a typo far more often
// than a real mailbox.
const LOCAL_PART = /^[a-z0-9!#$%&'*+/=?^_`{|}~-]+(\.[a-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;
const DOMAIN_LABEL = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/;

/**
 * The canonical form of an email address: trimmed and lower-cased.
 * @throws VALIDATION_FAILED when it is not a string holding a plausible address
 */
export function normalizeEmail(input: unknown): string {
  const invalid = (): never => fail('VALIDATION_FAILED', 'email must be a valid email address', { field: 'email' });
  if (typeof input !== 'string') return invalid();
  const email = input.trim().toLowerCase();
  if (email.length === 0 || email.length > MAX_EMAIL_CHARS) return invalid();
  const at = email.indexOf('@');
  if (at <= 0 || at !== email.lastIndexOf('@')) return invalid();
  const local = email.slice(0, at);
  const domain = email.slice(at + 1);
  if (local.length > MAX_EMAIL_LOCAL_CHARS || !LOCAL_PART.test(local)) return invalid();
  const labels = domain.split('.');
  if (labels.length < 2) return invalid();
  for (const label of labels) {
    if (label.length > MAX_DOMAIN_LABEL_CHARS || !DOMAIN_LABEL.test(label)) return invalid();
  }
  // The top-level domain is never all digits ("a@1.2" is an IP address typed wrong).
  if (/^[0-9]+$/.test(labels[labels.length - 1]!)) return invalid();
  return email;
}
