/**
 * The one table of aggregation expression operators, grouped as in the MongoDB manual. A name
 * that is absent is an unknown operator; the unsupported ones say why.
 */

import { accumulatorNOperators } from './accumulator-n.js';
import { arithmeticOperators } from './arithmetic.js';
import { arrayOperators } from './array.js';
import { bitwiseOperators } from './bitwise.js';
import { comparisonOperators } from './comparison.js';
import { conditionalOperators } from './conditional.js';
import { dataSizeOperators } from './data-size.js';
import { dateOperators } from './date.js';
import { dateArithmeticOperators } from './date-arithmetic.js';
import { dateFromPartsOperators } from './date-from-parts.js';
import { dateFromStringOperators } from './date-from-string.js';
import { makeCompiler, type Expr, type ExprTableEntry } from './expression.js';
import { metaOperators } from './meta.js';
import { objectOperators } from './object.js';
import { randOperators } from './rand.js';
import { setFieldOperators } from './set-field.js';
import { percentileOperators } from './percentile.js';
import { sortArrayOperators } from './sort-array.js';
import { regexOperators } from './regex.js';
import { stringOperators } from './string.js';
import { stringBytesOperators } from './string-bytes.js';
import { trigonometryOperators } from './trigonometry.js';
import { typeOperators } from './type.js';
import { zipOperators } from './zip.js';

const unsupported = (reason: string): ExprTableEntry => ({ kind: 'unsupported', reason });

const TABLE: Readonly<Record<string, ExprTableEntry>> = {
  ...arithmeticOperators,
  ...trigonometryOperators,
  ...comparisonOperators,
  ...conditionalOperators,
  ...stringOperators,
  ...regexOperators,
  ...stringBytesOperators,
  ...arrayOperators,
  ...accumulatorNOperators,
  ...percentileOperators,
  ...zipOperators,
  ...sortArrayOperators,
  ...bitwiseOperators,
  ...typeOperators,
  ...dateOperators,
  ...dateArithmeticOperators,
  ...dateFromPartsOperators,
  ...dateFromStringOperators,
  ...objectOperators,
  ...setFieldOperators,
  ...dataSizeOperators,
  ...randOperators,
  ...metaOperators,
  $function: unsupported('JavaScript is never executed'),
  $accumulator: unsupported('JavaScript is never executed'),
  $where: unsupported('JavaScript is never executed'),
  $toDecimal: unsupported('there is no decimal type'),
  $toObjectId: unsupported('there is no ObjectId type'),
};

const compiler = makeCompiler(TABLE);

/** Compiles an aggregation expression, with the user variables `names` defined. @throws QUERY_ERROR */
export function compileExpression(spec: unknown, names?: ReadonlySet<string>): Expr {
  return compiler(spec, names);
}

/** The names in the table (tests check each is documented). */
export const EXPRESSION_OPERATOR_NAMES: readonly string[] = Object.keys(TABLE);
