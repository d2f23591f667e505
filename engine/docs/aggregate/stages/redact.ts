/**
 * $redact (manual: $redact): an expression decides, level by level, what of each document is
 * kept. It is evaluated on the document, then on each embedded document it descends into, with
 * `$$CURRENT` (and so `"$field"`) the level being decided and `$$ROOT` the whole document; its
 * answer is one of the stage's own variables:
 * - `$$KEEP`: the level as it is, everything below included;
 * - `$$PRUNE`: not the level (a document pruned at its top is dropped);
 * - `$$DESCEND`: the level's fields, each embedded document (also inside arrays, at any array
 *   depth) decided in turn; array elements that are not documents are kept as they are.
 * Any other answer is MongoDB's error 17053. The three variables exist inside $redact only
 * (MongoDB defines them in the stage's parse scope), elsewhere they are undefined variables.
 * It streams: one document at a time, nothing held.
 */

import { describeValue, isPlainObject, MISSING, setOwn, type Doc } from '../../values.js';
import { Scope, type Expr } from '../expression/expression.js';
import { compileExpression } from '../expression/operator-table.js';
import { READS_ALL } from '../dependencies.js';
import { streaming, stageError, type Stage } from '../stage.js';

const STAGE = '$redact';

// The variables' values are MongoDB's: the strings its expression result is compared with (so an
// expression answering the string "keep" keeps, as in MongoDB).
const KEEP = 'keep';
const PRUNE = 'prune';
const DESCEND = 'descend';
const REDACT_VARIABLES: ReadonlyMap<string, unknown> = new Map([
  ['KEEP', KEEP],
  ['PRUNE', PRUNE],
  ['DESCEND', DESCEND],
]);

/** What a level becomes: the kept document, or MISSING when pruned. */
function redactLevel(current: Doc, scope: Scope, expr: Expr): Doc | typeof MISSING {
  const answer = expr(scope);
  if (answer === KEEP) return current;
  if (answer === PRUNE) return MISSING;
  if (answer !== DESCEND) {
    stageError(STAGE, `$redact's expression should not return anything aside from the variables $$KEEP, $$DESCEND, and $$PRUNE, but returned ${answer === MISSING ? 'MISSING' : describeValue(answer)}`);
  }
  const out: Doc = {};
  for (const key of Object.keys(current)) {
    const v = redactValue(current[key], scope, expr);
    if (v !== MISSING) setOwn(out, key, v);
  }
  return out;
}

// `scope` is the level above's: a document below gets its own CURRENT on top of it (ROOT and the
// stage's variables stay those of the whole document).
function redactValue(v: unknown, scope: Scope, expr: Expr): unknown {
  if (isPlainObject(v)) return redactLevel(v, scope.with(new Map([['CURRENT', v]])), expr);
  if (Array.isArray(v)) {
    const out: unknown[] = [];
    for (const el of v) {
      // Scalars stay; documents and arrays are decided, and a pruned document leaves the array.
      const r = isPlainObject(el) || Array.isArray(el) ? redactValue(el, scope, expr) : el;
      if (r !== MISSING) out.push(r);
    }
    return out;
  }
  return v;
}

/** The $redact stage. @throws QUERY_ERROR for a malformed expression, or (running) an answer other than the three variables */
export function redactStage(spec: unknown, names: ReadonlySet<string>): Stage {
  const expr = compileExpression(spec, new Set([...names, ...REDACT_VARIABLES.keys()]));
  // It may read any field at any depth.
  return streaming(STAGE, READS_ALL, (chunk, ctx) => {
    const out: Doc[] = [];
    for (const doc of chunk) {
      const kept = redactLevel(doc, Scope.of(doc, ctx.vars).with(REDACT_VARIABLES), expr);
      if (kept !== MISSING) out.push(kept);
    }
    return out;
  });
}
