/**
 * Order-preserving binary encoding of typed key tuples.
 *
 * Comparing two encodings with plain unsigned byte comparison (Buffer.compare) gives the same
 * order as comparing the tuples logically, so the B-tree and every index can store and compare
 * keys as opaque bytes.
 *
 * Logical order: null < false < true < numbers < strings < byte arrays < nested tuples.
 * Numbers: NaN (one value) below every other number, then numeric order, -0 equal to 0.
 * Strings: by Unicode code point (= UTF-8 byte order). Byte arrays: unsigned lexicographic,
 * shorter prefix first. Tuples: element by element, a prefix before any extension.
 *
 * Layout of one element (tag byte, then payload):
 *   null / false / true / NaN   tag only
 *   number                      tag, 8 bytes big-endian IEEE754: positive with the sign bit
 *                               flipped, negative with all bits flipped
 *   string / byte array         tag, body with every 0x00 written as 0x00 0xFF, then 0x00
 *   nested tuple                tag, the elements' encodings, then 0x00
 * A top-level key is its elements' encodings concatenated, with no terminator.
 *
 * Why the terminators are unambiguous: every tag is >= 0x10 and < 0xFF, so after a body's
 * terminating 0x00 the next byte is a tag, a nested tuple's 0x00 or the end of the key, never
 * the 0xFF of an escape; and 0x00 as a tuple terminator cannot be mistaken for an element.
 */

import { TetraError } from '../errors.js';
import { KEY_MAX_DEPTH, KEY_TAG } from './format.js';

export { KEY_MAX_DEPTH, KEY_TAG };

/** One element of a key tuple. */
export type KeyPart = null | boolean | number | string | Uint8Array | readonly KeyPart[];

/**
 * Raised for a value that cannot be encoded or bytes that are not a valid key. A TetraError with
 * code VALIDATION_FAILED, so the server maps it like any catalogued error; the subclass lets
 * callers tell a key problem apart without parsing messages.
 */
export class KeyCodecError extends TetraError {
  constructor(message: string) {
    super('VALIDATION_FAILED', message);
    this.name = 'KeyCodecError';
  }
}

const NUMBER_PAYLOAD_BYTES = 8;
const SIGN_BIT_32 = 0x80000000;
const MAX_BYTE = 0xff;
const FIRST_NON_ASCII = 0x80;
// Up to these lengths (UTF-16 units, bytes) a JS loop beats the native call of Buffer.write
// (encoding) and TextDecoder (ASCII decoding); measured on Node 20.
const SHORT_STRING_WRITE = 32;
const SHORT_STRING_READ = 12;
const SURROGATE_FIRST = 0xd800;
const LOW_SURROGATE_FIRST = 0xdc00;
const SURROGATE_LAST = 0xdfff;

// One scratch word for float <-> bytes; the codec is synchronous, so sharing it is safe.
const scratch = new DataView(new ArrayBuffer(NUMBER_PAYLOAD_BYTES));
// fatal: invalid UTF-8 is corruption, not U+FFFD; ignoreBOM: a leading U+FEFF is data.
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

// String.prototype.isWellFormed is in Node 20 but in the ES2024 lib, newer than ours.
interface WellFormedCheck {
  isWellFormed(): boolean;
}

/** Encodes a key tuple as bytes whose unsigned byte order is the tuple order. @throws VALIDATION_FAILED */
export function encodeKey(parts: readonly KeyPart[]): Buffer {
  whereDepth = 0;
  const size = measureTuple(parts, 0);
  // allocUnsafe is safe here because writeTuple writes every byte; the check below guards that.
  const out = Buffer.allocUnsafe(size);
  const end = writeTuple(out, 0, parts);
  if (end !== size) {
    throw new Error(`key-codec internal error: measured ${size} bytes, wrote ${end}`);
  }
  return out;
}

/**
 * Encodes a tuple prefix: every key whose tuple starts with `parts` starts with these bytes.
 * A top-level key has no terminator, so this is exactly encodeKey(parts). The converse does not
 * hold when the last part is a string or byte array (["a\u0000"] starts with the bytes of
 * ["a"]); use keyPrefixRange for an exact scan. @throws VALIDATION_FAILED for an unsupported value
 */
export function encodeKeyPrefix(parts: readonly KeyPart[]): Buffer {
  return encodeKey(parts);
}

/**
 * Byte range [start, end) holding exactly the keys whose tuple starts with `parts`; end is
 * undefined (no upper bound) for the empty prefix. @throws VALIDATION_FAILED for an unsupported value
 */
export function keyPrefixRange(parts: readonly KeyPart[]): { start: Buffer; end: Buffer | undefined } {
  const start = encodeKey(parts);
  if (start.length === 0) return { start, end: undefined };
  // A key extending the tuple is `start` itself or `start` followed by a tag (< 0xFF). A byte
  // string that starts with `start` and goes on with 0xFF continues the last string or byte
  // array with an escaped 0x00, so it is a different tuple; `start` + 0xFF excludes exactly those.
  const end = Buffer.allocUnsafe(start.length + 1);
  start.copy(end, 0);
  end[start.length] = MAX_BYTE;
  return { start, end };
}

/** Decodes encodeKey output; byte arrays come back as Uint8Array copies. @throws VALIDATION_FAILED */
export function decodeKey(buf: Uint8Array): KeyPart[] {
  const reader = new KeyReader(buf);
  return reader.readTuple(false, 0);
}

/** Orders two encoded keys: -1, 0 or 1, as unsigned byte strings. */
export function compareKeys(a: Uint8Array, b: Uint8Array): number {
  const n = a.length < b.length ? a.length : b.length;
  // Keys are short and usually differ early: a JS loop beats Buffer.compare's native call
  // (~190 ns on Node 20) by an order of magnitude; long keys still go native.
  if (n > COMPARE_INLINE_MAX) {
    return Buffer.compare(a, b);
  }
  for (let i = 0; i < n; i++) {
    const d = a[i]! - b[i]!;
    if (d !== 0) return d < 0 ? -1 : 1;
  }
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
}

// Up to this many bytes compareKeys loops in JS.
const COMPARE_INLINE_MAX = 256;

/**
 * Smallest byte string greater than every byte string starting with `prefix`, or undefined when
 * there is none (prefix empty or all 0xFF), i.e. the exclusive end of a byte-prefix scan.
 */
export function prefixUpperBound(prefix: Uint8Array): Buffer | undefined {
  for (let i = prefix.length - 1; i >= 0; i--) {
    const byte = prefix[i] as number;
    if (byte !== MAX_BYTE) {
      const out = Buffer.allocUnsafe(i + 1);
      out.set(prefix.subarray(0, i), 0);
      out[i] = byte + 1;
      return out;
    }
  }
  return undefined;
}

// ---- encoding ----------------------------------------------------------------------------

// Where measureTuple is inside the key, the index at each level, for error messages: numbers in one
// reused array (its first `whereDepth` slots), made into a string (`[1][0]`) only for an error.
// Building that string for every nested tuple cost an allocation per index key, and so did
// emptying the array for each key (V8 frees an emptied array's store, and the next push makes one).
const where: number[] = [];
let whereDepth = 0;

function pathOf(): string {
  let path = '';
  for (let d = 0; d < whereDepth; d++) path += `[${where[d]!}]`;
  return path;
}

// First pass: validate every part and compute the exact size, so the second pass writes into a
// single buffer. `where` holds the position of this tuple inside the key.
function measureTuple(parts: readonly KeyPart[], depth: number): number {
  let size = 0;
  for (let i = 0; i < parts.length; i++) {
    const part: unknown = parts[i];
    switch (typeof part) {
      case 'number':
        size += part !== part ? 1 : 1 + NUMBER_PAYLOAD_BYTES;
        break;
      case 'boolean':
        size += 1;
        break;
      case 'string':
        size += 2 + measureString(part, i);
        break;
      case 'object':
        if (part === null) {
          size += 1;
        } else if (part instanceof Uint8Array) {
          size += 2 + part.length + countZeroBytes(part);
        } else if (Array.isArray(part)) {
          if (depth >= KEY_MAX_DEPTH) {
            throw new KeyCodecError(
              `key tuple at position ${pathOf()}[${i}] is nested deeper than ${KEY_MAX_DEPTH} levels (or is cyclic)`,
            );
          }
          where[whereDepth++] = i;
          size += 2 + measureTuple(part as readonly KeyPart[], depth + 1);
          whereDepth--;
        } else {
          throw unsupported(part, i);
        }
        break;
      default:
        throw unsupported(part, i);
    }
  }
  return size;
}

// UTF-8 body length including escapes. Short strings are measured in JS, long ones natively.
function measureString(s: string, index: number): number {
  const length = s.length;
  if (length <= SHORT_STRING_WRITE) {
    let bytes = 0;
    for (let i = 0; i < length; i++) {
      const c = s.charCodeAt(i);
      if (c < 0x80) {
        bytes += c === 0 ? 2 : 1;
      } else if (c < 0x800) {
        bytes += 2;
      } else if (c < SURROGATE_FIRST || c > SURROGATE_LAST) {
        bytes += 3;
      } else {
        const next = s.charCodeAt(i + 1); // NaN past the end
        if (c >= LOW_SURROGATE_FIRST || !(next >= LOW_SURROGATE_FIRST && next <= SURROGATE_LAST)) {
          throw loneSurrogate(index);
        }
        bytes += 4;
        i++;
      }
    }
    return bytes;
  }
  const bytes = Buffer.byteLength(s, 'utf8');
  // Equal lengths mean pure ASCII, which cannot hold a lone surrogate.
  if (bytes !== length && !(s as unknown as WellFormedCheck).isWellFormed()) {
    throw loneSurrogate(index);
  }
  let zeros = 0;
  for (let at = s.indexOf('\u0000'); at !== -1; at = s.indexOf('\u0000', at + 1)) zeros++;
  return bytes + zeros;
}

// A lone surrogate has no UTF-8 form: Buffer would write U+FFFD, breaking round trip and order.
function loneSurrogate(index: number): KeyCodecError {
  return new KeyCodecError(
    `key part at position ${pathOf()}[${index}] is a string with a lone UTF-16 surrogate`,
  );
}

function countZeroBytes(bytes: Uint8Array): number {
  let zeros = 0;
  for (let at = bytes.indexOf(0); at !== -1; at = bytes.indexOf(0, at + 1)) zeros++;
  return zeros;
}

function unsupported(part: unknown, index: number): KeyCodecError {
  const kind = typeof part === 'object' && part !== null ? describeObject(part) : typeof part;
  return new KeyCodecError(
    `key part at position ${pathOf()}[${index}] is ${kind}; expected null, boolean, number, string, Uint8Array or array`,
  );
}

function describeObject(part: object): string {
  const name = (part as { constructor?: { name?: unknown } }).constructor?.name;
  return typeof name === 'string' && name !== '' ? `an object (${name})` : 'an object';
}

// Second pass: parts were validated by measureTuple, so the casts below are known to hold.
function writeTuple(out: Buffer, pos: number, parts: readonly KeyPart[]): number {
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i] as KeyPart;
    switch (typeof part) {
      case 'number':
        pos = part !== part ? writeTag(out, pos, KEY_TAG.NAN) : writeNumber(out, pos, part);
        break;
      case 'boolean':
        pos = writeTag(out, pos, part ? KEY_TAG.TRUE : KEY_TAG.FALSE);
        break;
      case 'string':
        out[pos] = KEY_TAG.STRING;
        pos = writeString(out, pos + 1, part);
        out[pos++] = KEY_TAG.END;
        break;
      default:
        if (part === null) {
          pos = writeTag(out, pos, KEY_TAG.NULL);
        } else if (part instanceof Uint8Array) {
          out[pos] = KEY_TAG.BYTES;
          pos = writeBytes(out, pos + 1, part);
          out[pos++] = KEY_TAG.END;
        } else {
          out[pos] = KEY_TAG.TUPLE;
          pos = writeTuple(out, pos + 1, part);
          out[pos++] = KEY_TAG.END;
        }
    }
  }
  return pos;
}

function writeTag(out: Buffer, pos: number, tag: number): number {
  out[pos] = tag;
  return pos + 1;
}

// Flipping the sign bit of a positive double and all bits of a negative one makes the bit
// patterns sort as unsigned integers in numeric order, -Infinity first and +Infinity last.
function writeNumber(out: Buffer, pos: number, value: number): number {
  out[pos] = KEY_TAG.NUMBER;
  // -0 === 0, so this writes -0 as +0: the two are one key.
  scratch.setFloat64(0, value === 0 ? 0 : value);
  let hi = scratch.getUint32(0);
  let lo = scratch.getUint32(4);
  if (hi & SIGN_BIT_32) {
    hi = ~hi;
    lo = ~lo;
  } else {
    hi ^= SIGN_BIT_32;
  }
  out[pos + 1] = hi >>> 24;
  out[pos + 2] = hi >>> 16;
  out[pos + 3] = hi >>> 8;
  out[pos + 4] = hi;
  out[pos + 5] = lo >>> 24;
  out[pos + 6] = lo >>> 16;
  out[pos + 7] = lo >>> 8;
  out[pos + 8] = lo;
  return pos + 1 + NUMBER_PAYLOAD_BYTES;
}

// Short strings are UTF-8 encoded in JS (the native call costs more than it saves); measureString
// has checked that every surrogate is paired.
function writeString(out: Buffer, pos: number, s: string): number {
  const length = s.length;
  if (length > SHORT_STRING_WRITE) {
    const written = out.write(s, pos, 'utf8');
    return s.indexOf('\u0000') === -1 ? pos + written : escapeZerosInPlace(out, pos, written);
  }
  let p = pos;
  for (let i = 0; i < length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) {
      out[p++] = c;
      if (c === 0) out[p++] = KEY_TAG.ESCAPE;
    } else if (c < 0x800) {
      out[p++] = 0xc0 | (c >> 6);
      out[p++] = 0x80 | (c & 0x3f);
    } else if (c < SURROGATE_FIRST || c > SURROGATE_LAST) {
      out[p++] = 0xe0 | (c >> 12);
      out[p++] = 0x80 | ((c >> 6) & 0x3f);
      out[p++] = 0x80 | (c & 0x3f);
    } else {
      const cp = 0x10000 + ((c - SURROGATE_FIRST) << 10) + (s.charCodeAt(++i) - LOW_SURROGATE_FIRST);
      out[p++] = 0xf0 | (cp >> 18);
      out[p++] = 0x80 | ((cp >> 12) & 0x3f);
      out[p++] = 0x80 | ((cp >> 6) & 0x3f);
      out[p++] = 0x80 | (cp & 0x3f);
    }
  }
  return p;
}

function writeBytes(out: Buffer, pos: number, bytes: Uint8Array): number {
  out.set(bytes, pos);
  return bytes.indexOf(0) === -1 ? pos + bytes.length : escapeZerosInPlace(out, pos, bytes.length);
}

// Rewrites out[start, start + length) with every 0x00 followed by an ESCAPE byte and returns the
// new end. Works from the back so each byte is moved before anything overwrites it; the room for
// the escapes was counted by measureTuple.
function escapeZerosInPlace(out: Buffer, start: number, length: number): number {
  let zeros = 0;
  for (let i = start; i < start + length; i++) if (out[i] === 0) zeros++;
  let src = start + length - 1;
  let dst = src + zeros;
  const end = dst + 1;
  while (zeros > 0) {
    const byte = out[src--] as number;
    if (byte === 0) {
      out[dst--] = KEY_TAG.ESCAPE;
      zeros--;
    }
    out[dst--] = byte;
  }
  return end;
}

// ---- decoding ----------------------------------------------------------------------------

class KeyReader {
  readonly #buf: Uint8Array;
  #pos = 0;
  // Escaped 0x00 bytes in the body last found by #scanBody.
  #escapes = 0;

  constructor(buf: Uint8Array) {
    this.#buf = buf;
  }

  readTuple(nested: boolean, depth: number): KeyPart[] {
    const buf = this.#buf;
    const start = this.#pos - 1;
    const parts: KeyPart[] = [];
    for (;;) {
      const at = this.#pos;
      if (at >= buf.length) {
        if (nested) throw malformed(`nested tuple starting at offset ${start} has no terminator`);
        return parts;
      }
      const tag = buf[at] as number;
      this.#pos = at + 1;
      switch (tag) {
        case KEY_TAG.END:
          if (nested) return parts;
          throw malformed(`unexpected end-of-tuple byte at offset ${at} in a top-level key`);
        case KEY_TAG.NULL:
          parts.push(null);
          break;
        case KEY_TAG.FALSE:
          parts.push(false);
          break;
        case KEY_TAG.TRUE:
          parts.push(true);
          break;
        case KEY_TAG.NAN:
          parts.push(NaN);
          break;
        case KEY_TAG.NUMBER:
          parts.push(this.#readNumber(at));
          break;
        case KEY_TAG.STRING:
          parts.push(this.#readString(at));
          break;
        case KEY_TAG.BYTES: {
          const end = this.#scanBody(at);
          // Always a copy, so the value neither aliases nor pins the page the key was read from.
          parts.push(unescapeBody(buf, at + 1, end, this.#escapes));
          break;
        }
        case KEY_TAG.TUPLE:
          if (depth >= KEY_MAX_DEPTH) {
            throw malformed(`nested tuple at offset ${at} is deeper than ${KEY_MAX_DEPTH} levels`);
          }
          parts.push(this.readTuple(true, depth + 1));
          break;
        default:
          throw malformed(`unknown type tag 0x${tag.toString(16).padStart(2, '0')} at offset ${at}`);
      }
    }
  }

  #readNumber(tagAt: number): number {
    const buf = this.#buf;
    const p = tagAt + 1;
    if (p + NUMBER_PAYLOAD_BYTES > buf.length) {
      throw malformed(`number at offset ${tagAt} is truncated`);
    }
    let hi = readUint32BE(buf, p);
    let lo = readUint32BE(buf, p + 4);
    // Inverse of writeNumber: a set top bit marks an encoded positive number.
    if (hi & SIGN_BIT_32) {
      hi ^= SIGN_BIT_32;
    } else {
      hi = ~hi;
      lo = ~lo;
    }
    scratch.setUint32(0, hi >>> 0);
    scratch.setUint32(4, lo >>> 0);
    const value = scratch.getFloat64(0);
    // encodeKey never writes these; accepting them would give one value two encodings.
    if (value !== value) throw malformed(`number at offset ${tagAt} encodes NaN; NaN has its own tag`);
    if (value === 0 && 1 / value < 0) throw malformed(`number at offset ${tagAt} encodes -0`);
    this.#pos = p + NUMBER_PAYLOAD_BYTES;
    return value;
  }

  #readString(tagAt: number): string {
    const buf = this.#buf;
    const start = tagAt + 1;
    const end = this.#scanBody(tagAt);
    const escapes = this.#escapes;
    if (escapes === 0 && end - start <= SHORT_STRING_READ) {
      let s = '';
      let i = start;
      for (; i < end; i++) {
        const c = buf[i] as number;
        if (c >= FIRST_NON_ASCII) break;
        s += String.fromCharCode(c);
      }
      if (i === end) return s;
    }
    const body = escapes === 0 ? buf.subarray(start, end) : unescapeBody(buf, start, end, escapes);
    try {
      return utf8.decode(body);
    } catch {
      throw malformed(`string at offset ${tagAt} is not valid UTF-8`);
    }
  }

  // Finds the 0x00 that terminates the string or byte array body after tagAt, counts the escaped
  // 0x00 bytes before it into #escapes, moves past the terminator and returns its offset.
  // A JS loop, because keys are short and the native indexOf costs more to call than it saves.
  #scanBody(tagAt: number): number {
    const buf = this.#buf;
    const length = buf.length;
    let escapes = 0;
    let i = tagAt + 1;
    for (;;) {
      if (i >= length) throw malformed(`value at offset ${tagAt} has no terminator`);
      if (buf[i] === KEY_TAG.END) {
        if (buf[i + 1] !== KEY_TAG.ESCAPE) break;
        escapes++;
        i += 2;
      } else {
        i++;
      }
    }
    this.#escapes = escapes;
    this.#pos = i + 1;
    return i;
  }
}

// The caller has checked that the four bytes are in range.
function readUint32BE(buf: Uint8Array, at: number): number {
  return (
    (((buf[at] as number) << 24) |
      ((buf[at + 1] as number) << 16) |
      ((buf[at + 2] as number) << 8) |
      (buf[at + 3] as number)) >>>
    0
  );
}

// Copies buf[start, end) into a fresh array, dropping the ESCAPE after each data 0x00.
function unescapeBody(buf: Uint8Array, start: number, end: number, escapes: number): Uint8Array {
  const body = new Uint8Array(end - start - escapes);
  let o = 0;
  for (let i = start; i < end; i++) {
    const byte = buf[i] as number;
    body[o++] = byte;
    if (byte === 0) i++;
  }
  return body;
}

function malformed(detail: string): KeyCodecError {
  return new KeyCodecError(`malformed key: ${detail}`);
}
