import type { Token } from './sql-rewrite.js';
import { sqlFail } from './sql-types.js';

/**
 * Literals node-sql-parser would misread, made safe before it parses and put back after.
 *
 * Strings. The parser's single-quoted strings take JSON-like backslash escapes (\n, \t, \uXXXX,
 * and \' which ends nothing), but PostgreSQL (standard_conforming_strings on) reads a backslash in
 * '...' as itself. A string whose value has a backslash is therefore replaced by a marker string
 * ('__tetra_literal:0') and its value is put back into the AST by restoreLiterals: every string in
 * the tree equal to a marker, whatever node holds it (a plain literal, DATE '...', a DEFAULT, an
 * ESCAPE). The marker's prefix is one the statement's text does not contain, so no literal of the
 * user's can be taken for one. E'...', U&'...' and $$...$$ strings, which the parser cannot read
 * (or reads as something else), are decoded here into a plain string, or a marker when the value
 * has a backslash. Restored values keep the parser's form: a quote doubled, as in the source.
 *
 * Quoted identifiers. The parser unescapes `\n` and `\t` in "..." too, and cannot read a doubled
 * quote in one; an identifier with a backslash or a doubled quote is replaced by a marker
 * identifier the same way, and its name (quotes undoubled) put back.
 *
 * Numbers. The parser folds a sign into the number after it and keeps an integer below 2^53 or a
 * decimal without exponent as a JS double, so `-9007199254740993` and `1.00000000000000000001`
 * lose digits, and `-2147483648::int4` casts the negative number where PostgreSQL casts
 * 2147483648 first. A decimal with more digits than a double holds gets `e0` appended (the parser
 * keeps a number with an exponent as its text, and `e0` leaves value and scale alone); a sign is
 * spaced off an integer of more than 15 digits and off any number followed by `::`, so the parser
 * builds a unary minus over the exact literal. The evaluator folds a minus over a literal into one
 * negative literal as PostgreSQL's grammar does (so -9223372036854775808 is still a bigint).
 *
 * Only statements that have such a literal are changed; the parse cache makes all this a
 * once-per-distinct-text cost.
 */

/** Marker strings -> the values to put back (in the parser's form: quotes doubled). */
export type LiteralValues = ReadonlyMap<string, string>;

/** Digits a double carries exactly through the parser's parseFloat/toFixed round trip. */
const SAFE_DIGITS = 15;
const NUMBER = /^(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

/** Rewrites the literals of one statement's tokens (see the module comment); same array when nothing changed. */
export function protectLiterals(tokens: Token[]): { tokens: Token[]; literals: LiteralValues | undefined } {
  let out = tokens;
  const copy = (): Token[] => (out === tokens ? (out = tokens.map((t) => ({ ...t }))) : out);
  let literals: Map<string, string> | undefined;
  let prefix = '';
  const key = (value: string): string => {
    if (literals === undefined) {
      literals = new Map();
      prefix = '__tetra_literal';
      while (tokens.some((t) => t.text.includes(prefix) || t.space.includes(prefix))) prefix += '_';
    }
    const k = `${prefix}:${literals.size}`;
    literals.set(k, value);
    return k;
  };
  const mark = (value: string): string => `'${key(value)}'`;
  /** A decoded string value as a literal the parser reads back unchanged. */
  const quote = (value: string): string => {
    const doubled = value.replace(/'/g, "''");
    return value.includes('\\') ? mark(doubled) : `'${doubled}'`;
  };
  for (let i = 0; i < out.length; i++) {
    const t = out[i]!;
    const text = t.text;
    const c = text[0];
    if (c === "'") {
      if (text.includes('\\') && closedAt(text, 0, false)) copy()[i] = { ...t, text: mark(text.slice(1, -1)) };
    } else if (c === '"') {
      // A quoted identifier: the parser would unescape \n in it, and cannot read "" at all.
      const body = text.slice(1, -1);
      if (text.length >= 2 && text.endsWith('"') && (body.includes('\\') || body.includes('""'))) copy()[i] = { ...t, text: `"${key(body.replace(/""/g, '"'))}"` };
    } else if ((c === 'e' || c === 'E') && text[1] === "'") {
      if (closedAt(text, 1, true)) copy()[i] = { ...t, text: quote(unescapeE(text.slice(2, -1))) };
    } else if ((c === 'u' || c === 'U') && text[1] === '&' && text[2] === "'") {
      if (!closedAt(text, 2, false)) continue;
      let escape = '\\';
      const o = copy();
      if (out[i + 1]?.word === 'uescape') {
        const e = out[i + 2]?.text ?? '';
        escape = e.length === 3 && e.startsWith("'") && e.endsWith("'") ? e[1]! : '';
        if (escape === '' || /[0-9a-fA-F+'"\s]/.test(escape)) sqlFail('42601', 'invalid Unicode escape character');
        o[i + 1] = { text: '', space: '' };
        o[i + 2] = { text: '', space: o[i + 2]!.space };
      }
      o[i] = { ...t, text: quote(decodeUnicode(text.slice(3, -1), escape)) };
    } else if (c === '$') {
      const tag = /^\$(?:[A-Za-z_][A-Za-z0-9_]*)?\$/.exec(text)?.[0];
      if (tag !== undefined && text.length >= 2 * tag.length && text.endsWith(tag)) copy()[i] = { ...t, text: quote(text.slice(tag.length, -tag.length)) };
    } else if (c !== undefined && /[0-9.]/.test(c) && NUMBER.test(text)) {
      if (/\.(?![0-9])/.test(text)) {
        // `1.` and `1.e5`, which the parser cannot read: the same numeric value and scale.
        copy()[i] = { ...t, text: /[eE]/.test(text) ? text.replace('.', '') : `${text.slice(0, -1)}e0` };
        continue;
      }
      const exponent = /[eE]/.test(text);
      const digits = text.length - (text.includes('.') ? 1 : 0);
      if (text.includes('.') && !exponent && digits > SAFE_DIGITS) copy()[i] = { ...t, text: `${text}e0` };
      const sign = out[i - 1];
      if (sign !== undefined && (sign.text === '-' || sign.text === '+') && sign.space === '') {
        const longInteger = !exponent && !text.includes('.') && digits > SAFE_DIGITS;
        const cast = out[i + 1]?.text === ':' && out[i + 1]!.space === '' && out[i + 2]?.text === ':';
        if (longInteger || cast) copy()[i - 1] = { ...sign, space: ' ' };
      }
    }
  }
  return { tokens: out === tokens ? tokens : out.filter((t) => t.text !== '' || t.space !== ''), literals };
}

/** Puts the values of marker strings back into a parsed tree, in place. */
export function restoreLiterals(node: unknown, literals: LiteralValues): void {
  if (node === null || typeof node !== 'object') return;
  const o = node as Record<string, unknown>;
  for (const k of Object.keys(o)) {
    const v = o[k];
    if (typeof v === 'string') {
      const value = literals.get(v);
      if (value !== undefined) o[k] = value;
    } else if (v !== null && typeof v === 'object') restoreLiterals(v, literals);
  }
}

/**
 * Whether the quoted string starting at `quote` (the index of its opening quote) ends exactly at
 * the token's end; an unterminated one is left for the parser to report.
 */
function closedAt(text: string, quote: number, backslash: boolean): boolean {
  let i = quote + 1;
  while (i < text.length) {
    if (backslash && text[i] === '\\') i += 2;
    else if (text[i] === "'" && text[i + 1] === "'") i += 2;
    else if (text[i] === "'") return i === text.length - 1;
    else i++;
  }
  return false;
}

/** The value of an E'...' string body: PostgreSQL's backslash escapes and doubled quotes. */
export function unescapeE(body: string): string {
  let out = '';
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c === "'" && body[i + 1] === "'") {
      out += "'";
      i++;
      continue;
    }
    if (c !== '\\' || i + 1 >= body.length) {
      out += c;
      continue;
    }
    const n = body[++i]!;
    const simple: Record<string, string> = { b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };
    if (n in simple) out += simple[n];
    else if (n === 'x' && /^[0-9a-fA-F]{1,2}/.test(body.slice(i + 1))) {
      const hex = /^[0-9a-fA-F]{1,2}/.exec(body.slice(i + 1))![0];
      out += String.fromCharCode(parseInt(hex, 16));
      i += hex.length;
    } else if (/[0-7]/.test(n)) {
      const oct = /^[0-7]{1,3}/.exec(body.slice(i))![0];
      out += String.fromCharCode(parseInt(oct, 8) & 0xff);
      i += oct.length - 1;
    } else if ((n === 'u' && /^[0-9a-fA-F]{4}/.test(body.slice(i + 1))) || (n === 'U' && /^[0-9a-fA-F]{8}/.test(body.slice(i + 1)))) {
      const len = n === 'u' ? 4 : 8;
      out += String.fromCodePoint(parseInt(body.slice(i + 1, i + 1 + len), 16));
      i += len;
    } else out += n;
  }
  if (out.includes('\0')) sqlFail('22021', 'invalid byte sequence for encoding "UTF8": 0x00');
  return out;
}

/**
 * The value of a U&'...' string body: `<escape>XXXX` and `<escape>+XXXXXX` code points (a UTF-16
 * surrogate pair as two escapes), `<escape><escape>` the escape itself, doubled quotes.
 * @throws SQL_ERROR 42601 for a malformed escape, as PostgreSQL
 */
function decodeUnicode(body: string, escape: string): string {
  let out = '';
  let high = 0;
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    let code = -1;
    if (c === escape && body[i + 1] === escape) i++;
    else if (c === escape) {
      const six = body[i + 1] === '+';
      const hex = body.slice(i + (six ? 2 : 1), i + (six ? 8 : 5));
      if (!/^[0-9a-fA-F]+$/.test(hex) || hex.length !== (six ? 6 : 4)) sqlFail('42601', 'invalid Unicode escape');
      code = parseInt(hex, 16);
      i += hex.length + (six ? 1 : 0);
    } else if (c === "'" && body[i + 1] === "'") i++;
    if (high !== 0) {
      if (code < 0xdc00 || code > 0xdfff) sqlFail('42601', 'invalid Unicode surrogate pair');
      out += String.fromCodePoint(0x10000 + ((high - 0xd800) << 10) + (code - 0xdc00));
      high = 0;
      continue;
    }
    if (code < 0) out += c;
    else if (code >= 0xd800 && code <= 0xdbff) high = code;
    else if (code >= 0xdc00 && code <= 0xdfff) sqlFail('42601', 'invalid Unicode surrogate pair');
    else if (code === 0 || code > 0x10ffff) sqlFail('42601', 'invalid Unicode escape value');
    else out += String.fromCodePoint(code);
  }
  if (high !== 0) sqlFail('42601', 'invalid Unicode surrogate pair');
  return out;
}
