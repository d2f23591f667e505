import { createHash } from 'node:crypto';
import type { CompiledExpr } from '../compiled-expr.js';
import type { FunctionDef } from './function-def.js';
import { noFunction, strict } from './function-def.js';
import { checkBitIndex } from '../bit-string.js';
import { typeDisplay } from '../sql-cast.js';
import { sqlFail, toText, type NonNullSqlValue, type SqlValue } from '../sql-types.js';
import { asciiCaseOnly, asciiLower, asciiUpper, collationChecked } from '../collation.js';

const str = (v: NonNullSqlValue): string => v.value as string;
const int = (v: NonNullSqlValue): number => v.value as number;
const text = (value: string): SqlValue => ({ type: 'text', value });
/** Strings are handled as code points, as PostgreSQL counts characters in UTF-8. */
const chars = (s: string): string[] => [...s];

/** substring(s, start [, count]) with PostgreSQL's rules for start < 1 and negative counts. */
function substring(s: string, start: number, count?: number): string {
  const cs = chars(s);
  if (count !== undefined && count < 0) sqlFail('22011', 'negative substring length not allowed');
  const from = Math.max(start, 1);
  const end = count === undefined ? cs.length + 1 : start + count;
  if (end <= from) return '';
  return cs.slice(from - 1, end - 1).join('');
}

function trimChars(s: string, set: string, leading: boolean, trailing: boolean): string {
  const cs = chars(s);
  const drop = new Set(chars(set));
  let i = 0;
  let j = cs.length;
  if (leading) while (i < j && drop.has(cs[i]!)) i++;
  if (trailing) while (j > i && drop.has(cs[j - 1]!)) j--;
  return cs.slice(i, j).join('');
}

/**
 * to_hex(integer | bigint): a negative number's two's complement digits (to_hex(-1) is ffffffff,
 * of a bigint ffffffffffffffff). Neither is preferred, so a smallint or an untyped literal fits
 * both, which PostgreSQL refuses as ambiguous.
 * @throws SQL_ERROR 42725 for smallint or unknown, 42883 for other types
 */
const toHex: FunctionDef = {
  compile(name, args) {
    const only = args.length === 1 ? args[0]!.type : undefined;
    if (only === 'int2' || only === 'unknown') sqlFail('42725', `function ${name}(${typeDisplay(only)}) is not unique`);
    return strict(
      { args: ['int4'], returns: 'text', impl: ([n]) => text((int(n!) >>> 0).toString(16)) },
      { args: ['int8'], returns: 'text', impl: ([n]) => text(BigInt.asUintN(64, n!.value as bigint).toString(16)) },
    ).compile(name, args);
  },
};

const substr = strict(
  { args: ['text', 'int4'], returns: 'text', impl: ([s, f]) => text(substring(str(s!), int(f!))) },
  { args: ['text', 'int4', 'int4'], returns: 'text', impl: ([s, f, c]) => text(substring(str(s!), int(f!), int(c!))) },
);

const trimFamily = (leading: boolean, trailing: boolean): FunctionDef =>
  strict(
    { args: ['text'], returns: 'text', impl: ([s]) => text(trimChars(str(s!), ' ', leading, trailing)) },
    { args: ['text', 'text'], returns: 'text', impl: ([s, set]) => text(trimChars(str(s!), str(set!), leading, trailing)) },
  );

/** A value as its type's output function prints it (booleans t/f, unlike boolean::text). */
const outputText = (v: NonNullSqlValue): string => (v.type === 'boolean' ? (v.value ? 't' : 'f') : toText(v));

/** concat(): NULLs are skipped; any type is printed with its output form (booleans as t/f). */
const concat: FunctionDef = {
  compile(name, args) {
    if (args.length === 0) return noFunction(name, args);
    return {
      type: 'text',
      evaluate: (ctx) => text(args.map((a) => a.evaluate(ctx)).map((v) => (v.value === null ? '' : outputText(v as NonNullSqlValue))).join('')),
    };
  },
};

/** concat_ws(sep, ...): NULL separator gives NULL; NULL arguments are skipped. */
const concatWs: FunctionDef = {
  compile(name, args) {
    if (args.length < 2) return noFunction(name, args);
    const [sep, ...rest] = args as [CompiledExpr, ...CompiledExpr[]];
    return {
      type: 'text',
      evaluate(ctx) {
        const s = sep.evaluate(ctx);
        const parts = rest.map((a) => a.evaluate(ctx)).filter((v) => v.value !== null).map((v) => outputText(v as NonNullSqlValue));
        return s.value === null ? { type: 'text', value: null } : text(parts.join(toText(s as NonNullSqlValue)));
      },
    };
  },
};

function pad(s: string, len: number, fill: string, left: boolean): string {
  const cs = chars(s);
  if (len <= 0) return '';
  if (cs.length >= len) return cs.slice(0, len).join('');
  const fs = chars(fill);
  if (fs.length === 0) return s;
  const padding: string[] = [];
  for (let i = 0; padding.length < len - cs.length; i++) padding.push(fs[i % fs.length]!);
  return left ? padding.join('') + s : s + padding.join('');
}

function splitPart(s: string, delim: string, n: number): string {
  if (n === 0) sqlFail('22023', 'field position must not be zero');
  const fields = delim === '' ? (s === '' ? [] : [s]) : s === '' ? [] : s.split(delim);
  const i = n > 0 ? n - 1 : fields.length + n;
  return fields[i] ?? '';
}

/** initcap: the first letter or digit of each alphanumeric run upper-cased, the rest lower. */
function initcap(s: string): string {
  let out = '';
  let inWord = false;
  for (const c of s) {
    out += inWord ? c.toLowerCase() : c.toUpperCase();
    inWord = /[\p{L}\p{N}]/u.test(c);
  }
  return out;
}

/** initcap under "C" and its kind: only ASCII letters and digits make words, only ASCII letters change case. */
function asciiInitcap(s: string): string {
  let out = '';
  let inWord = false;
  for (const c of s) {
    out += inWord ? asciiLower(c) : asciiUpper(c);
    inWord = /[A-Za-z0-9]/.test(c);
  }
  return out;
}

/**
 * A function that maps case: `ascii` under "C", "POSIX" and "ucs_basic" (PostgreSQL's C ctype),
 * `full` under "default"; a conflict of collations fails when it runs, as PostgreSQL's does
 * (42P22 naming `what`).
 */
function byCollation(what: string, full: FunctionDef, ascii: FunctionDef): FunctionDef {
  return {
    compile(name, args, collation) {
      return collationChecked((asciiCaseOnly(collation) ? ascii : full).compile(name, args, collation), collation, what);
    },
  };
}

function translate(s: string, from: string, to: string): string {
  const f = chars(from);
  const t = chars(to);
  const map = new Map<string, string | null>();
  f.forEach((c, i) => {
    if (!map.has(c)) map.set(c, t[i] ?? null);
  });
  return chars(s)
    .map((c) => (map.has(c) ? (map.get(c) ?? '') : c))
    .join('');
}

function chr(n: number): string {
  if (n === 0) sqlFail('54000', 'null character not permitted');
  if (n < 0) sqlFail('22023', 'character number must be positive');
  if (n > 0x10ffff || (n >= 0xd800 && n <= 0xdfff)) sqlFail('54000', `requested character too large for encoding: ${n}`);
  return String.fromCodePoint(n);
}

/**
 * Compiles a PostgreSQL (ARE) regular expression as a JavaScript one; the common syntax is the
 * same. Flags: g (all matches), i (case-insensitive), c (case-sensitive, the default).
 * @throws SQL_ERROR 2201B invalid pattern, 22023 invalid flag
 */
export function sqlRegExp(pattern: string, flags: string, allowGlobal: boolean, asciiCase = false): RegExp {
  // No `u` flag: PostgreSQL accepts identity escapes (`\-`) that unicode mode rejects.
  let js = '';
  for (const f of flags) {
    if (f === 'g' && allowGlobal) js += 'g';
    else if (f === 'i') js = js.replace('i', '') + 'i';
    else if (f === 'c') js = js.replace('i', '');
    else sqlFail('22023', `invalid regular expression option: "${f}"`);
  }
  // Case-insensitive under "C" and its kind matches only ASCII letters across cases; JavaScript's
  // `i` folds other letters too, so the pattern spells the two cases out instead.
  if (asciiCase && js.includes('i')) {
    pattern = asciiCaseless(pattern);
    js = js.replace('i', '');
  }
  try {
    return new RegExp(pattern, js);
  } catch (err) {
    return sqlFail('2201B', `invalid regular expression: ${(err as Error).message}`);
  }
}

const isAsciiLetter = (code: number): boolean => (code >= 65 && code <= 90) || (code >= 97 && code <= 122);
const otherCase = (code: number): string => String.fromCharCode(code ^ 32);

/**
 * A pattern that matches without `i` as `pattern` matches case-insensitively under PostgreSQL's
 * C ctype, where only ASCII letters have two cases: an ASCII letter outside a bracket expression
 * becomes `[xX]` (also one written as an escape, `\x41`), a bracket expression gets the other case
 * of the ASCII letters in it and in its ranges.
 * @throws SQL_ERROR 0A000 for a back reference, whose case-insensitive match is not spelled out
 */
function asciiCaseless(pattern: string): string {
  let out = '';
  let i = 0;
  const n = pattern.length;
  /** The escape at i (a backslash): its text and, when it stands for one character, that character's code. */
  const escapeAt = (at: number): { text: string; code?: number } => {
    const c = pattern[at + 1] ?? '';
    if (/[1-9]/.test(c)) sqlFail('0A000', 'unsupported: a back reference in a case-insensitive regular expression under collation "C", "POSIX" or "ucs_basic"');
    const hex = c === 'x' ? /^[0-9a-fA-F]{2}/.exec(pattern.slice(at + 2)) : c === 'u' ? /^[0-9a-fA-F]{4}/.exec(pattern.slice(at + 2)) : null;
    if (hex !== null) return { text: pattern.slice(at, at + 2 + hex[0].length), code: parseInt(hex[0], 16) };
    if (c === 'c' && /[A-Za-z]/.test(pattern[at + 2] ?? '')) return { text: pattern.slice(at, at + 3) };
    // \d, \w, \s and their negations, \b: classes and assertions, no one character.
    if (/[dDwWsSbBfnrtv0k]/.test(c)) return { text: `\\${c}` };
    return { text: `\\${c}`, code: c.charCodeAt(0) };
  };
  while (i < n) {
    const c = pattern[i]!;
    if (c === '\\') {
      const e = escapeAt(i);
      out += e.code !== undefined && isAsciiLetter(e.code) ? `[${e.text}${otherCase(e.code)}]` : e.text;
      i += e.text.length;
    } else if (c === '[') {
      out += '[';
      i++;
      if (pattern[i] === '^') ((out += '^'), i++);
      let extra = '';
      while (i < n && pattern[i] !== ']') {
        const lo = pattern[i] === '\\' ? escapeAt(i) : { text: pattern[i]!, code: pattern.charCodeAt(i) };
        i += lo.text.length;
        if (pattern[i] === '-' && pattern[i + 1] !== ']' && i + 1 < n && lo.code !== undefined) {
          const hi = pattern[i + 1] === '\\' ? escapeAt(i + 1) : { text: pattern[i + 1]!, code: pattern.charCodeAt(i + 1) };
          i += 1 + hi.text.length;
          out += `${lo.text}-${hi.text}`;
          if (hi.code === undefined) continue;
          for (const [from, to] of [[65, 90], [97, 122]] as const) {
            const a = Math.max(from, lo.code);
            const b = Math.min(to, hi.code);
            if (a <= b) extra += `${otherCase(a)}-${otherCase(b)}`;
          }
          continue;
        }
        out += lo.text;
        if (lo.code !== undefined && isAsciiLetter(lo.code)) extra += otherCase(lo.code);
      }
      out += `${extra}]`;
      i++;
    } else if (c === '(' && pattern[i + 1] === '?') {
      const group = /^\(\?(?:<[=!]|[:=!])?/.exec(pattern.slice(i))![0];
      out += group;
      i += group.length;
    } else if (c === '{' && /^\{\d+(?:,\d*)?\}/.test(pattern.slice(i))) {
      const q = /^\{\d+(?:,\d*)?\}/.exec(pattern.slice(i))![0];
      out += q;
      i += q.length;
    } else {
      const code = pattern.charCodeAt(i);
      out += isAsciiLetter(code) ? `[${c}${otherCase(code)}]` : c;
      i++;
    }
  }
  return out;
}

/** regexp_replace's replacement: \1-\9 are groups, \& the match; `$` is literal. */
function jsReplacement(r: string): string {
  return r.replace(/\\([0-9&\\])|\$/g, (m, c: string | undefined) => (m === '$' ? '$$' : c === '&' ? '$&' : c === '\\' ? '\\' : `$${c}`));
}

const regexpReplace = (ascii: boolean): FunctionDef =>
  strict(
    { args: ['text', 'text', 'text'], returns: 'text', impl: ([s, p, r]) => text(str(s!).replace(sqlRegExp(str(p!), '', false, ascii), jsReplacement(str(r!)))) },
    {
      args: ['text', 'text', 'text', 'text'],
      returns: 'text',
      impl: ([s, p, r, f]) => text(str(s!).replace(sqlRegExp(str(p!), str(f!), true, ascii), jsReplacement(str(r!)))),
    },
  );

const regexpMatchDef = (ascii: boolean): FunctionDef =>
  strict(
    { args: ['text', 'text'], returns: 'text[]', impl: ([s, p]) => regexpMatch(str(s!), sqlRegExp(str(p!), '', false, ascii)) },
    {
      args: ['text', 'text', 'text'],
      returns: 'text[]',
      impl: ([s, p, f]) => (str(f!).includes('g') ? sqlFail('22023', 'regexp_match() does not support the "global" option') : regexpMatch(str(s!), sqlRegExp(str(p!), str(f!), false, ascii))),
    },
  );

function regexpMatch(s: string, re: RegExp): SqlValue {
  const m = re.exec(s);
  if (m === null) return { type: 'text[]', value: null };
  const groups = m.length > 1 ? m.slice(1) : [m[0]];
  return { type: 'text[]', value: groups.map((g) => (g === undefined ? { type: 'text', value: null } : text(g))) };
}

/** format(): %s (NULL as empty), %L (quoted literal, NULL unquoted), %I (identifier), %%, with n$ positions. */
const format: FunctionDef = {
  compile(name, args) {
    if (args.length === 0) return noFunction(name, args);
    const [fmt, ...rest] = args as [CompiledExpr, ...CompiledExpr[]];
    return {
      type: 'text',
      evaluate(ctx) {
        const f = fmt.evaluate(ctx);
        if (f.value === null) return { type: 'text', value: null };
        const vals = rest.map((a) => a.evaluate(ctx));
        let next = 0;
        const out = toText(f as NonNullSqlValue).replace(/%(?:(\d+)\$)?([sILl%])?/g, (_m, pos: string | undefined, kind: string | undefined) => {
          if (kind === '%' && pos === undefined) return '%';
          if (kind === undefined || kind === '%') return sqlFail('22023', 'unrecognized format() type specifier');
          const idx = pos === undefined ? next++ : Number(pos) - 1;
          if (pos !== undefined) next = idx + 1;
          const v = vals[idx];
          if (v === undefined) return sqlFail('22023', 'too few arguments for format()');
          if (kind === 's') return v.value === null ? '' : outputText(v as NonNullSqlValue);
          if (kind === 'I') {
            if (v.value === null) return sqlFail('22004', 'null values cannot be formatted as an SQL identifier');
            const id = outputText(v as NonNullSqlValue);
            return /^[a-z_][a-z0-9_$]*$/.test(id) ? id : `"${id.replace(/"/g, '""')}"`;
          }
          if (v.value === null) return 'NULL';
          const lit = outputText(v as NonNullSqlValue);
          return lit.includes('\\') ? `E'${lit.replace(/\\/g, '\\\\').replace(/'/g, "''")}'` : `'${lit.replace(/'/g, "''")}'`;
        });
        return text(out);
      },
    };
  },
};

const int4 = (value: number): SqlValue => ({ type: 'int4', value });
const bit = (value: string): SqlValue => ({ type: 'bit', value });

/** substring() of text, and of bit strings (bitsubstr: the same rules, counting bits). */
const substringFn = strict(
  { args: ['text', 'int4'], returns: 'text', impl: ([s, f]) => text(substring(str(s!), int(f!))) },
  { args: ['text', 'int4', 'int4'], returns: 'text', impl: ([s, f, c]) => text(substring(str(s!), int(f!), int(c!))) },
  { args: ['varbit', 'int4'], returns: 'bit', impl: ([s, f]) => bit(substring(str(s!), int(f!))) },
  { args: ['varbit', 'int4', 'int4'], returns: 'bit', impl: ([s, f, c]) => bit(substring(str(s!), int(f!), int(c!))) },
);

export const STRING_FUNCTIONS: Record<string, FunctionDef> = {
  length: strict(
    { args: ['text'], returns: 'int4', impl: ([s]) => int4(chars(str(s!)).length) },
    { args: ['varbit'], returns: 'int4', impl: ([b]) => int4(str(b!).length) },
  ),
  char_length: strict({ args: ['text'], returns: 'int4', impl: ([s]) => ({ type: 'int4', value: chars(str(s!)).length }) }),
  character_length: strict({ args: ['text'], returns: 'int4', impl: ([s]) => ({ type: 'int4', value: chars(str(s!)).length }) }),
  bit_length: strict(
    { args: ['text'], returns: 'int4', impl: ([s]) => int4(Buffer.byteLength(str(s!), 'utf8') * 8) },
    { args: ['varbit'], returns: 'int4', impl: ([b]) => int4(str(b!).length) },
  ),
  bit_count: strict({ args: ['varbit'], returns: 'int8', impl: ([b]) => ({ type: 'int8', value: BigInt(str(b!).replace(/0/g, '').length) }) }),
  get_bit: strict({
    args: ['varbit', 'int4'],
    returns: 'int4',
    impl: ([b, n]) => {
      checkBitIndex(str(b!), int(n!));
      return int4(str(b!)[int(n!)] === '1' ? 1 : 0);
    },
  }),
  set_bit: strict({
    args: ['varbit', 'int4', 'int4'],
    returns: 'bit',
    impl: ([b, n, v]) => {
      const bits = str(b!);
      checkBitIndex(bits, int(n!));
      if (int(v!) !== 0 && int(v!) !== 1) sqlFail('22023', 'new bit must be 0 or 1');
      return bit(bits.slice(0, int(n!)) + String(int(v!)) + bits.slice(int(n!) + 1));
    },
  }),
  lower: byCollation('lower() function', strict({ args: ['text'], returns: 'text', impl: ([s]) => text(str(s!).toLowerCase()) }), strict({ args: ['text'], returns: 'text', impl: ([s]) => text(asciiLower(str(s!))) })),
  upper: byCollation('upper() function', strict({ args: ['text'], returns: 'text', impl: ([s]) => text(str(s!).toUpperCase()) }), strict({ args: ['text'], returns: 'text', impl: ([s]) => text(asciiUpper(str(s!))) })),
  substring: substringFn,
  substr,
  trim: trimFamily(true, true),
  btrim: trimFamily(true, true),
  ltrim: trimFamily(true, false),
  rtrim: trimFamily(false, true),
  replace: strict({
    args: ['text', 'text', 'text'],
    returns: 'text',
    impl: ([s, from, to]) => text(str(from!) === '' ? str(s!) : str(s!).split(str(from!)).join(str(to!))),
  }),
  position: strict({
    // position(sub IN s) arrives as position(sub, s) after the evaluator strips the keyword.
    args: ['text', 'text'],
    returns: 'int4',
    impl: ([sub, s]) => {
      const idx = str(s!).indexOf(str(sub!));
      return { type: 'int4', value: idx < 0 ? 0 : chars(str(s!).slice(0, idx)).length + 1 };
    },
  }),
  strpos: strict({
    args: ['text', 'text'],
    returns: 'int4',
    impl: ([s, sub]) => {
      const idx = str(s!).indexOf(str(sub!));
      return { type: 'int4', value: idx < 0 ? 0 : chars(str(s!).slice(0, idx)).length + 1 };
    },
  }),
  concat,
  concat_ws: concatWs,
  left: strict({
    args: ['text', 'int4'],
    returns: 'text',
    impl: ([s, n]) => {
      const cs = chars(str(s!));
      const k = int(n!);
      return text(cs.slice(0, k >= 0 ? k : Math.max(cs.length + k, 0)).join(''));
    },
  }),
  right: strict({
    args: ['text', 'int4'],
    returns: 'text',
    impl: ([s, n]) => {
      const cs = chars(str(s!));
      const k = int(n!);
      return text(cs.slice(k >= 0 ? Math.max(cs.length - k, 0) : Math.min(-k, cs.length)).join(''));
    },
  }),
  lpad: strict(
    { args: ['text', 'int4'], returns: 'text', impl: ([s, n]) => text(pad(str(s!), int(n!), ' ', true)) },
    { args: ['text', 'int4', 'text'], returns: 'text', impl: ([s, n, f]) => text(pad(str(s!), int(n!), str(f!), true)) },
  ),
  rpad: strict(
    { args: ['text', 'int4'], returns: 'text', impl: ([s, n]) => text(pad(str(s!), int(n!), ' ', false)) },
    { args: ['text', 'int4', 'text'], returns: 'text', impl: ([s, n, f]) => text(pad(str(s!), int(n!), str(f!), false)) },
  ),
  repeat: strict({ args: ['text', 'int4'], returns: 'text', impl: ([s, n]) => text(int(n!) <= 0 ? '' : str(s!).repeat(int(n!))) }),
  starts_with: strict({ args: ['text', 'text'], returns: 'boolean', impl: ([s, p]) => ({ type: 'boolean', value: str(s!).startsWith(str(p!)) }) }),
  split_part: strict({ args: ['text', 'text', 'int4'], returns: 'text', impl: ([s, d, n]) => text(splitPart(str(s!), str(d!), int(n!))) }),
  octet_length: strict(
    { args: ['text'], returns: 'int4', impl: ([s]) => ({ type: 'int4', value: Buffer.byteLength(str(s!), 'utf8') }) },
    { args: ['bytea'], returns: 'int4', impl: ([b]) => ({ type: 'int4', value: (b!.value as Buffer).length }) },
    { args: ['varbit'], returns: 'int4', impl: ([b]) => ({ type: 'int4', value: Math.ceil(str(b!).length / 8) }) },
    // character(n) counts its padding (bpcharoctetlen); length() of it, through text, does not.
    { args: ['bpchar'], returns: 'int4', impl: ([s]) => ({ type: 'int4', value: Buffer.byteLength(str(s!), 'utf8') }) },
  ),
  initcap: byCollation('initcap() function', strict({ args: ['text'], returns: 'text', impl: ([s]) => text(initcap(str(s!))) }), strict({ args: ['text'], returns: 'text', impl: ([s]) => text(asciiInitcap(str(s!))) })),
  reverse: strict({ args: ['text'], returns: 'text', impl: ([s]) => text(chars(str(s!)).reverse().join('')) }),
  md5: strict(
    { args: ['text'], returns: 'text', impl: ([s]) => text(createHash('md5').update(str(s!), 'utf8').digest('hex')) },
    { args: ['bytea'], returns: 'text', impl: ([b]) => text(createHash('md5').update(b!.value as Buffer).digest('hex')) },
  ),
  translate: strict({ args: ['text', 'text', 'text'], returns: 'text', impl: ([s, f, t]) => text(translate(str(s!), str(f!), str(t!))) }),
  ascii: strict({ args: ['text'], returns: 'int4', impl: ([s]) => ({ type: 'int4', value: str(s!).codePointAt(0) ?? 0 }) }),
  chr: strict({ args: ['int4'], returns: 'text', impl: ([n]) => text(chr(int(n!))) }),
  to_hex: toHex,
  regexp_replace: byCollation('regular expression', regexpReplace(false), regexpReplace(true)),
  regexp_match: byCollation('regular expression', regexpMatchDef(false), regexpMatchDef(true)),
  format,
};
