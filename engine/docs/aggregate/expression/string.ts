/**
 * String expression operators (manual: String Expression Operators; the regular-expression ones
 * are in regex.ts). Lengths and positions count code points (`...CP`); null or missing in gives
 * null out (`$toUpper`/`$toLower`/`$concat` as the manual says for each), other types are errors
 * naming the type.
 */

import { bsonTypeOf, isPlainObject } from '../../values.js';
import { compileArgs, exprError, intArg, isNullish, unary, type Expr, type ExprOperator } from './expression.js';

/** A value as text where MongoDB coerces one (numbers, dates); null and missing are "". */
export function coerceToString(v: unknown, name: string): string {
  if (typeof v === 'string') return v;
  if (isNullish(v)) return '';
  if (typeof v === 'number') return String(v);
  if (v instanceof Date) return v.toISOString();
  return exprError(name, `can't convert from BSON type ${bsonTypeOf(v)} to String`);
}

/** The longest string an expression builds (MongoDB: a value within the 16 MiB BSON limit). */
const MAX_STRING_LENGTH = 16 * 1024 * 1024;

function str(v: unknown, name: string, what = 'argument'): string {
  if (typeof v !== 'string') exprError(name, `${name} requires a string ${what}, found: ${bsonTypeOf(v)}`);
  return v;
}

const concat: ExprOperator = {
  kind: 'expression',
  compile(args, ctx, name) {
    const parts = compileArgs(args, ctx, name, 0, Infinity);
    return (scope) => {
      let out = '';
      for (const e of parts) {
        const v = e(scope);
        if (isNullish(v)) return null;
        if (typeof v !== 'string') exprError(name, `$concat only supports strings, not ${bsonTypeOf(v)}`);
        if (out.length + v.length > MAX_STRING_LENGTH) exprError(name, `$concat would make a string of more than ${MAX_STRING_LENGTH} characters`);
        out += v;
      }
      return out;
    };
  },
};

const substrCP: ExprOperator = {
  kind: 'expression',
  compile(args, ctx, name) {
    const [s, start, count] = compileArgs(args, ctx, name, 3);
    return (scope) => {
      const text = coerceToString(s!(scope), name);
      const from = intArg(start!(scope), name, 'starting index');
      const n = intArg(count!(scope), name, 'length');
      if (from < 0) exprError(name, `$substrCP: the starting index must be nonnegative integer.`);
      if (n < 0) exprError(name, `$substrCP: length must be a nonnegative integer.`);
      return [...text].slice(from, from + n).join('');
    };
  },
};

const split: ExprOperator = {
  kind: 'expression',
  compile(args, ctx, name) {
    const [s, d] = compileArgs(args, ctx, name, 2);
    return (scope) => {
      const text = s!(scope);
      const delim = d!(scope);
      if (isNullish(text)) return null;
      str(text, name, 'first argument');
      str(delim, name, 'second argument');
      if (delim === '') exprError(name, "$split requires a non-empty separator");
      return (text as string).split(delim as string);
    };
  },
};

const indexOfCP: ExprOperator = {
  kind: 'expression',
  compile(args, ctx, name) {
    const [s, sub, start, end] = compileArgs(args, ctx, name, 2, 4);
    return (scope) => {
      const text = s!(scope);
      if (isNullish(text)) return null;
      const chars = [...str(text, name, 'first argument')];
      const needle = [...str(sub!(scope), name, 'second argument')];
      const from = start === undefined ? 0 : intArg(start(scope), name, 'starting index');
      const to = end === undefined ? chars.length : Math.min(chars.length, intArg(end(scope), name, 'ending index'));
      if (from < 0 || to < 0) exprError(name, `${name}: the indexes must be non-negative`);
      for (let i = from; i + needle.length <= to; i++) {
        let ok = true;
        for (let j = 0; j < needle.length; j++) {
          if (chars[i + j] !== needle[j]) {
            ok = false;
            break;
          }
        }
        if (ok) return i;
      }
      return -1;
    };
  },
};

function namedArgs(args: unknown, name: string, allowed: readonly string[], required: readonly string[]): Record<string, unknown> {
  if (!isPlainObject(args)) exprError(name, `${name} requires an object as an argument, found: ${bsonTypeOf(args)}`);
  for (const k of Object.keys(args)) if (!allowed.includes(k)) exprError(name, `${name} found an unknown argument: ${k}`);
  for (const k of required) if (!Object.hasOwn(args, k)) exprError(name, `${name} requires '${k}' to be specified`);
  return args;
}

function trim(where: 'both' | 'start' | 'end'): ExprOperator {
  return {
    kind: 'expression',
    compile(args, ctx, name) {
      const a = namedArgs(args, name, ['input', 'chars'], ['input']);
      const input = ctx.compile(a['input']);
      const chars: Expr | undefined = Object.hasOwn(a, 'chars') ? ctx.compile(a['chars']) : undefined;
      return (scope) => {
        const v = input(scope);
        if (isNullish(v)) return null;
        const text = [...str(v, name, "'input'")];
        let set: Set<string>;
        if (chars === undefined) set = new Set([' ', '\t', '\n', '\v', '\f', '\r', '\u00a0', '\u1680', '\u2000', '\u2001', '\u2002', '\u2003', '\u2004', '\u2005', '\u2006', '\u2007', '\u2008', '\u2009', '\u200a', '\u2028', '\u2029', '\u202f', '\u205f', '\u3000', '\0']);
        else {
          const c = chars(scope);
          if (isNullish(c)) return null;
          set = new Set([...str(c, name, "'chars'")]);
        }
        let from = 0;
        let to = text.length;
        if (where !== 'end') while (from < to && set.has(text[from]!)) from++;
        if (where !== 'start') while (to > from && set.has(text[to - 1]!)) to--;
        return text.slice(from, to).join('');
      };
    },
  };
}

function replace(all: boolean): ExprOperator {
  return {
    kind: 'expression',
    compile(args, ctx, name) {
      const a = namedArgs(args, name, ['input', 'find', 'replacement'], ['input', 'find', 'replacement']);
      const [input, find, replacement] = [ctx.compile(a['input']), ctx.compile(a['find']), ctx.compile(a['replacement'])];
      return (scope) => {
        const values = [input(scope), find(scope), replacement(scope)];
        if (values.some(isNullish)) return null;
        const [i, f, r] = values.map((v, k) => str(v, name, ['input', 'find', 'replacement'][k]!)) as [string, string, string];
        return all ? i.split(f).join(r) : i.replace(f, () => r);
      };
    },
  };
}

const strcasecmp: ExprOperator = {
  kind: 'expression',
  compile(args, ctx, name) {
    const [a, b] = compileArgs(args, ctx, name, 2);
    return (scope) => {
      const x = coerceToString(a!(scope), name).toUpperCase();
      const y = coerceToString(b!(scope), name).toUpperCase();
      return x < y ? -1 : x > y ? 1 : 0;
    };
  },
};

export const stringOperators: Record<string, ExprOperator> = {
  $concat: concat,
  $toUpper: unary((v, name) => coerceToString(v, name).toUpperCase()),
  $toLower: unary((v, name) => coerceToString(v, name).toLowerCase()),
  $strLenCP: unary((v, name) => [...str(v, name)].length),
  $substrCP: substrCP,
  $split: split,
  $indexOfCP: indexOfCP,
  $trim: trim('both'),
  $ltrim: trim('start'),
  $rtrim: trim('end'),
  $replaceOne: replace(false),
  $replaceAll: replace(true),
  $strcasecmp: strcasecmp,
};
