/**
 * $fill (manual: $fill, MongoDB 5.3+): `{partitionBy | partitionByFields, sortBy, output: {<field>:
 * {value: <expr>} | {method: "locf" | "linear"}}}`, as MongoDB builds it (document_source_fill):
 * the methods are a $setWindowFields of `$locf` / `$linearFill` on the field (same partitions and
 * order), the values an $addFields of `{$ifNull: ["$field", value]}` after it. Only null and
 * missing values are filled.
 */

import { bsonTypeOf, isPlainObject, type Doc } from '../../values.js';
import { needsOf } from '../dependencies.js';
import { stageError, type Stage } from '../stage.js';
import { addFieldsStage } from './project.js';
import { setWindowFieldsStage } from './set-window-fields.js';

const STAGE = '$fill';

/** @throws QUERY_ERROR for a malformed specification, with MongoDB's message */
export function fillStage(spec: unknown, names: ReadonlySet<string>): Stage {
  if (!isPlainObject(spec)) stageError(STAGE, `The $fill stage specification must be an object, found ${bsonTypeOf(spec)}`);
  for (const k of Object.keys(spec)) {
    if (!['partitionBy', 'partitionByFields', 'sortBy', 'output'].includes(k)) stageError(STAGE, `BSON field '$fill.${k}' is an unknown field.`);
  }
  if (!Object.hasOwn(spec, 'output')) stageError(STAGE, "BSON field '$fill.output' is missing but a required field");
  const output = spec['output'];
  if (!isPlainObject(output)) stageError(STAGE, `BSON field '$fill.output' is the wrong type '${bsonTypeOf(output)}', expected type 'object'`);
  if (Object.keys(output).length === 0) stageError(STAGE, "The output field in '$fill' must contain an object with at least one element");
  const windowOutput: Doc = {};
  const values: Doc = {};
  for (const [field, fieldSpec] of Object.entries(output)) {
    if (!isPlainObject(fieldSpec)) stageError(STAGE, 'Each fill output specification must be an object with exactly one field');
    for (const k of Object.keys(fieldSpec)) {
      if (k !== 'method' && k !== 'value') stageError(STAGE, `BSON field '$fill.${k}' is an unknown field.`);
    }
    if (Object.hasOwn(fieldSpec, 'method')) {
      if (Object.hasOwn(fieldSpec, 'value')) stageError(STAGE, "Each fill output specification must have exactly one of 'method' or 'value' fields, not both");
      const method = fieldSpec['method'];
      if (typeof method !== 'string') stageError(STAGE, `BSON field '$fill.method' is the wrong type '${bsonTypeOf(method)}', expected type 'string'`);
      if (method !== 'locf' && method !== 'linear') stageError(STAGE, 'Method must be either locf or linear');
      windowOutput[field] = { [method === 'linear' ? '$linearFill' : '$locf']: `$${field}` };
    }
    if (Object.hasOwn(fieldSpec, 'value')) values[field] = { $ifNull: [`$${field}`, fieldSpec['value']] };
  }
  const window: Doc = { output: windowOutput };
  if (Object.hasOwn(spec, 'sortBy')) {
    if (!isPlainObject(spec['sortBy'])) stageError(STAGE, `BSON field '$fill.sortBy' is the wrong type '${bsonTypeOf(spec['sortBy'])}', expected type 'object'`);
    window['sortBy'] = spec['sortBy'];
  }
  if (Object.hasOwn(spec, 'partitionBy')) {
    if (Object.hasOwn(spec, 'partitionByFields')) stageError(STAGE, "Maximum one of 'partitionBy' and 'partitionByFields can be specified in '$fill'");
    const by = spec['partitionBy'];
    if (typeof by !== 'string' && !isPlainObject(by)) stageError(STAGE, `BSON field '$fill.partitionBy' is the wrong type '${bsonTypeOf(by)}', expected types '[string, object]'`);
    window['partitionBy'] = by;
  }
  if (Object.hasOwn(spec, 'partitionByFields')) {
    const fields = spec['partitionByFields'];
    if (!Array.isArray(fields)) stageError(STAGE, `BSON field '$fill.partitionByFields' is the wrong type '${bsonTypeOf(fields)}', expected type 'array'`);
    const by: Doc = {};
    for (const f of fields) {
      if (typeof f !== 'string') stageError(STAGE, `BSON field '$fill.partitionByFields.0' is the wrong type '${bsonTypeOf(f)}', expected type 'string'`);
      by[f] = `$${f}`;
    }
    window['partitionBy'] = by;
  }
  const stages: Stage[] = [];
  if (Object.keys(windowOutput).length > 0) stages.push(setWindowFieldsStage(window, names));
  if (Object.keys(values).length > 0) stages.push(addFieldsStage('$addFields', values, names));
  return {
    name: STAGE,
    reads: [],
    needs: needsOf([window['partitionBy'] ?? null, ...Object.values(windowOutput), ...Object.values(values)], isPlainObject(window['sortBy']) ? Object.keys(window['sortBy']) : [], false),
    run(input, ctx) {
      let stream = input;
      for (const s of stages) stream = s.run(stream, ctx);
      return stream;
    },
  };
}
