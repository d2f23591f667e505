// The SQL model. So far: a PostgreSQL-dialect scalar expression evaluator over node-sql-parser
// ASTs (value model, casts, operators, functions) and `SELECT <expressions>` without FROM.
export { Decimal } from './decimal.js';
export {
  arrayText,
  arrayTypeOf,
  elementTypeOf,
  isArrayType,
  formatDate,
  formatTimestamp,
  jsonbText,
  toText,
  type Jsonb,
  type JsonValue,
  type ArrayTypeName,
  type NonNullSqlValue,
  type ScalarTypeName,
  type SqlTypeName,
  type SqlValue,
} from './sql-types.js';
export { castValue, TYPE_DISPLAY, type CastTarget } from './sql-cast.js';
export type { CompiledExpr, EvalContext } from './compiled-expr.js';
export { compileExpression, evaluateExpression, castTargetOf, type AstNode, type CompileEnv } from './expression-eval.js';
export { paramsFromJson } from './sql-params.js';
export {
  evaluateSelectExpressions,
  parseSql,
  toJsValue,
  type ColumnInfo,
  type SelectExpressionsResult,
  type SelectOptions,
} from './select-expressions.js';
export { isAggregateName, resolveAggregate, type Accumulator, type AggregateDef, type AggregateOptions } from './aggregates.js';
export {
  computeFrame,
  isWindowOnlyName,
  rangeOffsetType,
  resolveWindowFunction,
  type FrameBound,
  type WindowFrame,
  type WindowFunctionDef,
  type WindowPartition,
  type WindowSpec,
} from './window-functions.js';
export { sqlExecute, SQL_DEFAULTS } from './sql-engine.js';
export type { SqlColumn, SqlOptions, SqlOutcome, SqlResult, SqlStatementInput } from './sql-api.js';
