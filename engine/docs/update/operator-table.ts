/**
 * The one table of update operators, grouped as in the MongoDB manual (Fields, Array, Bitwise). A name
 * that is absent is an unknown operator; the unsupported ones say why.
 */

import { addToSetOperator } from './array/add-to-set.js';
import { popOperator } from './array/pop.js';
import { pullAllOperator, pullOperator } from './array/pull.js';
import { pushOperator } from './array/push.js';
import { bitOperator } from './bitwise/bit.js';
import { currentDateOperator } from './fields/current-date.js';
import { incOperator, mulOperator } from './fields/inc-mul.js';
import { maxOperator, minOperator } from './fields/min-max.js';
import { renameOperator, type PathChecker } from './fields/rename.js';
import { setOnInsertOperator } from './fields/set-on-insert.js';
import { setOperator } from './fields/set.js';
import { unsetOperator } from './fields/unset.js';
import type { UnsupportedUpdateOperator, UpdateOperator } from './operator.js';

export type UpdateTableEntry = UpdateOperator | UnsupportedUpdateOperator;

/** The table, given the path checker $rename applies to its destination. */
export function updateOperators(checkPath: PathChecker): Readonly<Record<string, UpdateTableEntry>> {
  return {
    // Fields
    $currentDate: currentDateOperator,
    $inc: incOperator,
    $min: minOperator,
    $max: maxOperator,
    $mul: mulOperator,
    $rename: renameOperator(checkPath),
    $set: setOperator,
    $setOnInsert: setOnInsertOperator,
    $unset: unsetOperator,
    // Array
    $addToSet: addToSetOperator,
    $pop: popOperator,
    $pull: pullOperator,
    $pullAll: pullAllOperator,
    $push: pushOperator,
    // Bitwise
    $bit: bitOperator,
  };
}
