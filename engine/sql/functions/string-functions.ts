import type { FunctionDef } from './function-def.js';
import { noFunction, strict } from './function-def.js';
import { sqlFail, toText, type NonNullSqlValue, type SqlValue } from '../sql-types.js';

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

const substr = strict(
  { args: ['text', 'int4'], returns: 'text', impl: ([s, f]) => text(substring(str(s!), int(f!))) },
  { args: ['text', 'int4', 'int4'], returns: 'text', impl: ([s, f, c]) => text(substring(str(s!), int(f!), int(c!))) },
);

const trimFamily = (leading: boolean, trailing: boolean): FunctionDef =>
  strict(
    { args: ['text'], returns: 'text', impl: ([s]) => text(trimChars(str(s!), ' ', leading, trailing)) },
    { args: ['text', 'text'], returns: 'text', impl: ([s, set]) => text(trimChars(str(s!), str(set!), leading, trailing)) },
  );

/** concat(): NULLs are skipped; any type is printed with its output form (booleans as t/f). */
const concat: FunctionDef = {
  compile(name, args) {
    if (args.length === 0) return noFunction(name, args);
    return {
      type: 'text',
      evaluate: (ctx) => text(args.map((a) => a.evaluate(ctx)).map((v) => (v.value === null ? '' : v.type === 'boolean' ? (v.value ? 't' : 'f') : toText(v as NonNullSqlValue))).join('')),
    };
  },
};

export const STRING_FUNCTIONS: Record<string, FunctionDef> = {
  length: strict({ args: ['text'], returns: 'int4', impl: ([s]) => ({ type: 'int4', value: chars(str(s!)).length }) }),
  char_length: strict({ args: ['text'], returns: 'int4', impl: ([s]) => ({ type: 'int4', value: chars(str(s!)).length }) }),
  lower: strict({ args: ['text'], returns: 'text', impl: ([s]) => text(str(s!).toLowerCase()) }),
  upper: strict({ args: ['text'], returns: 'text', impl: ([s]) => text(str(s!).toUpperCase()) }),
  substring: substr,
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
};
