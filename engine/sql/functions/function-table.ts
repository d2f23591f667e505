import type { FunctionDef } from './function-def.js';
import { ARRAY_FUNCTIONS } from './array-functions.js';
import { JSON_FUNCTIONS } from './json-functions.js';
import { MATH_FUNCTIONS } from './math-functions.js';
import { STRING_FUNCTIONS } from './string-functions.js';
import { SYSTEM_FUNCTIONS } from './system-functions.js';
import { ENUM_FUNCTIONS } from './enum-functions.js';
import { SEQUENCE_FUNCTIONS } from '../sequences.js';
import { SESSION_FUNCTIONS } from '../session.js';
import { COMMENT_FUNCTIONS } from '../comments.js';
import { TIME_FUNCTIONS } from './time-functions.js';

/** Every scalar function by lower-case name; one file per family, registered here. */
export const FUNCTION_TABLE: ReadonlyMap<string, FunctionDef> = new Map(
  Object.entries({ ...STRING_FUNCTIONS, ...MATH_FUNCTIONS, ...TIME_FUNCTIONS, ...JSON_FUNCTIONS, ...ARRAY_FUNCTIONS, ...SYSTEM_FUNCTIONS, ...ENUM_FUNCTIONS, ...SEQUENCE_FUNCTIONS, ...SESSION_FUNCTIONS, ...COMMENT_FUNCTIONS }),
);
