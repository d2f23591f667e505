/**
 * $regex with $options (manual: Evaluation). Matches string values, and string elements of an
 * array field; any other type never matches. The pattern is PCRE as in MongoDB, translated by
 * pcre.ts; an invalid pattern or option is a QUERY_ERROR when the filter is compiled.
 */

import type { RegexOp } from '../filter-ast.js';
import { anyValue, queryError, type FieldOperator } from '../operator.js';
import { checkRegexOptions, compilePcre } from './pcre.js';

/** The operand the expression parser hands over: `$regex` and `$options` read together. */
export interface RegexOperand {
  readonly $regex: unknown;
  readonly $options: unknown;
}

export const regexOperator: FieldOperator<'$regex'> = {
  kind: 'field',
  parse: (operand): RegexOp => {
    const { $regex: pattern, $options: options = '' } = operand as RegexOperand;
    if (typeof pattern !== 'string') queryError('$regex', '$regex has to be a string');
    if (typeof options !== 'string') queryError('$options', '$options has to be a string');
    checkRegexOptions(options);
    // Compiled here too so that an invalid pattern fails when the filter is parsed.
    compilePcre(pattern, options);
    return { op: '$regex', value: pattern, options };
  },
  compile: (op) => {
    const re = compilePcre(op.value, op.options);
    return anyValue('traverse', (v) => typeof v === 'string' && re.test(v));
  },
};
