/**
 * $inc and $mul (manual: Fields). The operand must be a number; the field must be a number or
 * missing. A missing field is created: with the increment for $inc, with 0 for $mul. A result
 * that is not a finite number (overflow) is refused: JSON cannot carry it.
 */

import { describeValue, MISSING } from '../../values.js';
import { action, updateError, type UpdateAction, type UpdateOperator } from '../operator.js';
import { locate, readChild, typeName, writeChild } from '../update-path.js';

function arithmetic(name: '$inc' | '$mul'): UpdateOperator {
  const verb = name === '$inc' ? 'increment' : 'multiply';
  return {
    kind: 'update',
    parse: (path, parts, operand): UpdateAction => {
      if (typeof operand !== 'number') {
        updateError(name, path, `Cannot ${verb} with non-numeric argument: {${path}: ${describeValue(operand)}}`);
      }
      return action(name, path, parts, (doc) => {
        const at = locate(doc, parts, true, name)!;
        const old = readChild(at.container, at.key);
        let result: number;
        if (old === MISSING) {
          result = name === '$inc' ? operand : 0;
        } else if (typeof old !== 'number') {
          updateError(name, path, `Cannot apply ${name} to a value of non-numeric type: the field '${path}' has type ${typeName(old)}`);
        } else {
          result = name === '$inc' ? old + operand : old * operand;
        }
        if (!Number.isFinite(result)) updateError(name, path, `${name} on '${path}' gives ${result}, which is not a finite number`);
        if (old === result) return false;
        writeChild(at.container, at.key, result, name);
        return true;
      });
    },
  };
}

export const incOperator = arithmetic('$inc');
export const mulOperator = arithmetic('$mul');
