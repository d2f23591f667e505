/**
 * $in and $nin (manual: Comparison). `$in` is equality with any member (so a null member also
 * matches a missing field); `$nin` is its negation. Members may not be operator documents: a
 * `$regex` member (MongoDB's regex literal has no JSON form) is refused with a clear message.
 */

import { isPlainObject } from '../../values.js';
import type { InOp } from '../filter-ast.js';
import { anyValue, negate, queryError, type CompiledOp, type FieldOperator } from '../operator.js';
import { equalsSingle } from './eq.js';

function parseMembers(name: '$in' | '$nin', operand: unknown): unknown[] {
  if (!Array.isArray(operand)) queryError(name, `${name} needs an array`);
  for (const member of operand) {
    if (!isPlainObject(member)) continue;
    const first = Object.keys(member)[0];
    if (first === undefined || !first.startsWith('$')) continue;
    if (Object.hasOwn(member, '$regex')) {
      queryError(name, `${name} does not accept $regex members; use $or with one $regex condition per pattern`);
    }
    queryError(name, `cannot nest $ under ${name}`);
  }
  return operand;
}

function compileIn(members: readonly unknown[]): CompiledOp {
  // Strings, numbers and booleans are looked up in a Set (SameValueZero: 1 and 1.0, NaN and NaN
  // are equal, as in MongoDB); the rest (null, dates, arrays, objects) by equality, one by one.
  const scalars = new Set<unknown>();
  const others: unknown[] = [];
  for (const m of members) {
    if (typeof m === 'string' || typeof m === 'number' || typeof m === 'boolean') scalars.add(m);
    else others.push(m);
  }
  return anyValue('traverse', (v) => {
    if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return scalars.has(v);
    for (const m of others) if (equalsSingle(v, m)) return true;
    return false;
  });
}

export const inOperator: FieldOperator<'$in'> = {
  kind: 'field',
  parse: (operand): InOp => ({ op: '$in', value: parseMembers('$in', operand) }),
  compile: (op) => compileIn(op.value),
};

export const ninOperator: FieldOperator<'$nin'> = {
  kind: 'field',
  parse: (operand): InOp => ({ op: '$nin', value: parseMembers('$nin', operand) }),
  compile: (op) => negate(compileIn(op.value)),
};
