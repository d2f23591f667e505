/**
 * Values as bytes in spill records that are read back by the query that wrote them (a spilled
 * $group's groups: aggregate/stages/group-runs.ts). Many small values are written one after
 * another into one large buffer and read back in place: msgpackr's set-up per call cost more than
 * the values did, for the one number a `$sum` keeps. Exactly the document model's values, as they
 * are: numbers (-0, NaN, every double), strings, booleans, null, dates (invalid ones too), arrays,
 * documents (a `__proto__` field comes back an own data property) and undefined.
 *
 * A value is a tag byte and what the tag says (little-endian; `varint`: unsigned LEB128):
 * NULL, FALSE, TRUE, UNDEFINED: nothing; a tag from SMALL_INT (0x80) on: the integer tag - 0x80
 * (0 to 127); INT32: i32 (another integer that fits, not -0); DOUBLE: f64 (any other number);
 * STRING: a string (below); DATE: f64 milliseconds (NaN for an invalid date); ARRAY: varint
 * count, then the elements; DOCUMENT: varint count, then each field's name (a string) and value.
 * A string: varint 2 * its length (UTF-16 code units), plus 1 when it is not ASCII; then a byte per
 * code unit when ASCII, else each code unit as u16 (UTF-16LE: lone surrogates too, as the string
 * held them, where UTF-8 would replace them).
 */

import { isPlainObject, setOwn, type Doc } from './values.js';

const TAG = { NULL: 0, FALSE: 1, TRUE: 2, UNDEFINED: 3, INT32: 4, DOUBLE: 5, STRING: 6, DATE: 7, ARRAY: 8, DOCUMENT: 9 } as const;
/** Tags from SMALL_INT on are the integers 0 to SMALL_INT_COUNT - 1 themselves (counts, ages, flags). */
const SMALL_INT = 0x80;
const SMALL_INT_COUNT = 0x80;

/** Strings this short are tried as ASCII first, in one pass: their header then takes one byte. */
const SHORT_STRING = 0x40;

/** Writes values one after another into a buffer that grows as needed. */
export class ValueWriter {
  #buf: Buffer;
  #pos = 0;

  constructor(initialBytes = 64 * 1024) {
    this.#buf = Buffer.allocUnsafe(initialBytes);
  }

  /** Bytes written since the last reset. */
  get length(): number {
    return this.#pos;
  }

  /** What was written since the last reset: a view valid until the next write or reset. */
  bytes(): Buffer {
    return this.#buf.subarray(0, this.#pos);
  }

  reset(): void {
    this.#pos = 0;
  }

  #room(n: number): void {
    if (this.#pos + n <= this.#buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(2 * this.#buf.length, this.#pos + n));
    this.#buf.copy(next, 0, 0, this.#pos);
    this.#buf = next;
  }

  raw(src: Buffer, start: number, end: number): void {
    this.#room(end - start);
    src.copy(this.#buf, this.#pos, start, end);
    this.#pos += end - start;
  }

  /** Bytes [start, end) of `src`, as they are (bytes another writer wrote). */
  copy(src: Buffer, start: number, end: number): void {
    const n = end - start;
    this.#room(n);
    const buf = this.#buf;
    // A record's few bytes cost less copied here than through a call into the runtime.
    if (n <= 32) for (let i = 0; i < n; i++) buf[this.#pos + i] = src[start + i]!;
    else src.copy(buf, this.#pos, start, end);
    this.#pos += n;
  }

  u8(v: number): void {
    this.#room(1);
    this.#buf[this.#pos++] = v;
  }

  varint(n: number): void {
    this.#room(5);
    const buf = this.#buf;
    while (n >= 0x80) {
      buf[this.#pos++] = (n & 0x7f) | 0x80;
      n >>>= 7;
    }
    buf[this.#pos++] = n;
  }

  string(s: string): void {
    const n = s.length;
    this.#room(5 + 2 * n);
    const buf = this.#buf;
    if (n < SHORT_STRING) {
      // A byte per character while they are ASCII (most keys), its header one byte: no encoder call.
      const start = this.#pos + 1;
      let i = 0;
      for (; i < n; i++) {
        const c = s.charCodeAt(i);
        if (c >= 0x80) break;
        buf[start + i] = c;
      }
      if (i === n) {
        buf[this.#pos] = n * 2;
        this.#pos = start + n;
        return;
      }
    }
    let ascii = n >= SHORT_STRING;
    for (let i = 0; ascii && i < n; i++) if (s.charCodeAt(i) >= 0x80) ascii = false;
    this.varint(n * 2 + (ascii ? 0 : 1));
    this.#pos += buf.write(s, this.#pos, ascii ? 'latin1' : 'utf16le');
  }

  value(v: unknown): void {
    switch (typeof v) {
      case 'number':
        if ((v | 0) === v && (v !== 0 || 1 / v > 0)) {
          if (v >= 0 && v < SMALL_INT_COUNT) return this.u8(SMALL_INT + v);
          this.#room(5);
          this.#buf[this.#pos] = TAG.INT32;
          this.#buf.writeInt32LE(v, this.#pos + 1);
          this.#pos += 5;
        } else this.#double(TAG.DOUBLE, v);
        return;
      case 'string':
        this.u8(TAG.STRING);
        this.string(v);
        return;
      case 'boolean':
        this.u8(v ? TAG.TRUE : TAG.FALSE);
        return;
      case 'undefined':
        this.u8(TAG.UNDEFINED);
        return;
      case 'object':
        if (v === null) this.u8(TAG.NULL);
        else if (Array.isArray(v)) {
          this.u8(TAG.ARRAY);
          this.varint(v.length);
          for (const el of v) this.value(el);
        } else if (v instanceof Date) this.#double(TAG.DATE, v.getTime());
        else if (isPlainObject(v)) {
          const keys = Object.keys(v);
          this.u8(TAG.DOCUMENT);
          this.varint(keys.length);
          for (const k of keys) {
            this.string(k);
            this.value(v[k]);
          }
        } else throw new Error('a spill record cannot hold this object');
        return;
      default:
        throw new Error(`a spill record cannot hold a ${typeof v}`);
    }
  }

  #double(tag: number, v: number): void {
    this.#room(9);
    this.#buf[this.#pos] = tag;
    this.#buf.writeDoubleLE(v, this.#pos + 1);
    this.#pos += 9;
  }
}

/** Reads what a ValueWriter wrote, in the same order, from bytes [pos, end) of a buffer. */
export class ValueReader {
  #buf: Buffer = Buffer.alloc(0);
  #pos = 0;
  #end = 0;

  /** Reads `buf` from `start` (to `end`) from now on. */
  reset(buf: Buffer, start = 0, end = buf.length): void {
    this.#buf = buf;
    this.#pos = start;
    this.#end = end;
  }

  /** True once every byte was read. */
  get done(): boolean {
    return this.#pos >= this.#end;
  }

  #need(n: number): void {
    if (this.#pos + n > this.#end) throw new Error('a spill record ends inside a value');
  }

  u8(): number {
    this.#need(1);
    return this.#buf[this.#pos++]!;
  }

  varint(): number {
    let n = 0;
    let shift = 0;
    for (;;) {
      const b = this.u8();
      n += (b & 0x7f) * 2 ** shift;
      if (b < 0x80) return n;
      shift += 7;
    }
  }

  string(): string {
    const header = this.varint();
    const n = Math.floor(header / 2);
    const bytes = header % 2 === 0 ? n : 2 * n;
    this.#need(bytes);
    const start = this.#pos;
    this.#pos += bytes;
    return this.#buf.toString(header % 2 === 0 ? 'latin1' : 'utf16le', start, start + bytes);
  }

  value(): unknown {
    const tag = this.u8();
    if (tag >= SMALL_INT) return tag - SMALL_INT;
    switch (tag) {
      case TAG.NULL:
        return null;
      case TAG.FALSE:
        return false;
      case TAG.TRUE:
        return true;
      case TAG.UNDEFINED:
        return undefined;
      case TAG.INT32:
        this.#need(4);
        this.#pos += 4;
        return this.#buf.readInt32LE(this.#pos - 4);
      case TAG.DOUBLE:
        return this.#double();
      case TAG.STRING:
        return this.string();
      case TAG.DATE:
        return new Date(this.#double());
      case TAG.ARRAY: {
        const n = this.varint();
        const out: unknown[] = [];
        for (let i = 0; i < n; i++) out.push(this.value());
        return out;
      }
      case TAG.DOCUMENT: {
        const n = this.varint();
        const out: Doc = {};
        for (let i = 0; i < n; i++) {
          const k = this.string();
          setOwn(out, k, this.value());
        }
        return out;
      }
      default:
        throw new Error(`a spill record holds an unknown value tag ${tag}`);
    }
  }

  #double(): number {
    this.#need(8);
    this.#pos += 8;
    return this.#buf.readDoubleLE(this.#pos - 8);
  }
}
