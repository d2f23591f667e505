/**
 * Constant expressions: those MongoDB folds to a value when the pipeline is parsed (no field path,
 * no variable), which some arguments must be ($shift's `default`, $percentile's `p`).
 */

import { exprFields } from '../dependencies.js';
import { isPlainObject } from '../../values.js';
import { Scope, type Expr } from './expression.js';

/** The value of `spec` when it is a constant expression, else undefined. `compile` compiles it. */
export function constantValue(spec: unknown, compile: (spec: unknown) => Expr): { value: unknown } | undefined {
  if (typeof spec === 'string' && spec.startsWith('$')) return undefined;
  if (!isPlainObject(spec) && !Array.isArray(spec)) return { value: spec };
  const fields = new Set<string>();
  // A variable ($$NOW, $$ROOT, a $let's) is not folded either.
  if (!exprFields(spec, fields) || fields.size > 0 || JSON.stringify(spec).includes('"$$')) return undefined;
  return { value: compile(spec)(Scope.of({})) };
}
