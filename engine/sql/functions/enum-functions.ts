import { enumDef } from '../enum-types.js';
import { coerce } from '../type-resolution.js';
import { arrayTypeOf, isEnumType, type EnumTypeName, type SqlValue } from '../sql-types.js';
import { noFunction, type FunctionDef } from './function-def.js';

/**
 * PostgreSQL's enum support functions: enum_first, enum_last, enum_range over the labels of the
 * argument's type (its current version when the statement was planned). They read the type, not
 * the value: a NULL of the type (`NULL::mood`) is what they are usually given.
 */

/** The enum type of a call's arguments. @throws SQL_ERROR 42883 not an enum (unknown included) */
function enumArgument(name: string, args: Parameters<FunctionDef['compile']>[1]): EnumTypeName {
  // anyenum: every argument of one enum type, an unknown one taking it.
  const known = args.map((a) => a.type).filter((t) => t !== 'unknown');
  const t = known[0];
  if (t === undefined || !isEnumType(t) || known.some((k) => k !== t)) return noFunction(name, args);
  return t;
}

const firstOrLast = (last: boolean): FunctionDef => ({
  compile(name, args) {
    if (args.length !== 1) return noFunction(name, args);
    const type = enumArgument(name, args);
    const labels = enumDef(type).labels;
    const arg = args[0]!;
    return {
      type,
      evaluate(ctx) {
        arg.evaluate(ctx);
        const l = last ? labels[labels.length - 1] : labels[0];
        return { type, value: l === undefined ? null : l.key } as SqlValue;
      },
    };
  },
});

const enumRange: FunctionDef = {
  compile(name, args) {
    if (args.length !== 1 && args.length !== 2) return noFunction(name, args);
    const type = enumArgument(name, args);
    const keys = enumDef(type).labels.map((l) => l.key);
    const bounds = args.map((a) => coerce(a, type));
    const arrayType = arrayTypeOf(type);
    return {
      type: arrayType,
      evaluate(ctx) {
        const [lo, hi] = bounds.map((b) => b.evaluate(ctx).value as string | null);
        // One argument: every label. Two: from lo to hi (a NULL bound is that end), empty when lo is past hi.
        const from = args.length === 1 || lo === null ? 0 : keys.indexOf(lo!);
        const to = args.length === 1 || hi === null || hi === undefined ? keys.length - 1 : keys.indexOf(hi);
        return { type: arrayType, value: keys.slice(from, to + 1).map((value) => ({ type, value })) } as SqlValue;
      },
    };
  },
};

export const ENUM_FUNCTIONS: Record<string, FunctionDef> = {
  enum_first: firstOrLast(false),
  enum_last: firstOrLast(true),
  enum_range: enumRange,
};
