/**
 * The order of strings both models use: by Unicode code point, which is the order of their UTF-8
 * bytes (MongoDB's binary comparison, PostgreSQL's C collation). UTF-16 code units order astral
 * characters (surrogates, 0xD800-0xDFFF) below 0xE000-0xFFFF; shifting the unit ranges at the
 * first difference gives code point order without decoding or encoding anything.
 */

function fixUnit(c: number): number {
  return c >= 0xe000 ? c - 0x800 : c >= 0xd800 ? c + 0x2000 : c;
}

/**
 * Negative, 0 or positive as `a` sorts before, with or after `b` by code point. For well-formed
 * strings that is the order of their UTF-8 bytes; a lone surrogate sorts as its code unit (UTF-8
 * would have replaced it with U+FFFD first: see toWellFormedText).
 */
export function compareCodePoints(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return x >= 0xd800 && y >= 0xd800 ? fixUnit(x) - fixUnit(y) : x - y;
  }
  return a.length - b.length;
}

// String.prototype.isWellFormed / toWellFormed are in Node 20 but in the ES2024 lib, newer than ours.
interface WellFormed {
  isWellFormed(): boolean;
  toWellFormed(): string;
}

/** `s` as its UTF-8 bytes hold it: each lone surrogate replaced by U+FFFD (what Buffer.from(s, 'utf8') writes). */
export function toWellFormedText(s: string): string {
  const w = s as unknown as WellFormed;
  return w.isWellFormed() ? s : w.toWellFormed();
}
