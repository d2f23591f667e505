/**
 * Date arithmetic with units (manual: $dateAdd, $dateSubtract, $dateDiff, $dateTrunc), in a time
 * zone (date-units.ts; UTC without one). Arguments are evaluated in MongoDB's order and a null or
 * missing one gives null; constant `unit`, `startOfWeek` and `timezone` arguments are checked when
 * the pipeline is compiled, computed ones when they are read.
 */

import { bsonTypeOf, MISSING } from '../../values.js';
import { compileZone } from './date.js';
import { addUnits, diffUnits, parseDayOfWeek, parseUnit, SUNDAY, truncUnits, type TimeUnit } from './date-units.js';
import { constantArg, documentArgs, exprError, isIntegral64, isNullish, type ExprContext, type ExprOperator } from './expression.js';
import type { Scope } from './expression.js';

/** A compiled argument: its value, or MISSING when the operator should give null. */
type Arg<T> = (scope: Scope) => T | typeof MISSING;

function unitArg(spec: unknown, ctx: ExprContext, name: string): Arg<TimeUnit> {
  const constant = constantArg(spec);
  if (constant !== undefined && constant.value !== null) {
    const unit = parseUnit(constant.value, name);
    return () => unit;
  }
  const e = ctx.compile(spec);
  return (scope) => {
    const v = e(scope);
    return isNullish(v) ? MISSING : parseUnit(v, name);
  };
}

function startOfWeekArg(spec: unknown, ctx: ExprContext, name: string): Arg<number> {
  if (spec === MISSING) return () => SUNDAY;
  const constant = constantArg(spec);
  if (constant !== undefined && constant.value !== null) {
    const day = parseDayOfWeek(constant.value, name, 'startOfWeek');
    return () => day;
  }
  const e = ctx.compile(spec);
  return (scope) => {
    const v = e(scope);
    return isNullish(v) ? MISSING : parseDayOfWeek(v, name, 'startOfWeek');
  };
}

const optional = (args: Record<string, unknown>, key: string): unknown => (Object.hasOwn(args, key) ? args[key] : MISSING);

/** $dateAdd and $dateSubtract (`sign` -1). */
function dateArithmetic(sign: 1 | -1): ExprOperator {
  return {
    kind: 'expression',
    compile(args, ctx, name) {
      if (args === null || typeof args !== 'object' || Array.isArray(args)) exprError(name, `${name} expects an object as its argument`);
      const a = documentArgs(args, name, ['startDate', 'unit', 'amount', 'timezone'], []);
      if (!Object.hasOwn(a, 'startDate') || !Object.hasOwn(a, 'unit') || !Object.hasOwn(a, 'amount')) exprError(name, `${name} requires startDate, unit, and amount to be present`);
      const startDate = ctx.compile(a['startDate']);
      const unit = unitArg(a['unit'], ctx, name);
      const amount = ctx.compile(a['amount']);
      const zoneArg = compileZone(a, ctx, name);
      return (scope) => {
        const start = startDate(scope);
        if (isNullish(start)) return null;
        const u = unit(scope);
        if (u === MISSING) return null;
        const n = amount(scope);
        if (isNullish(n)) return null;
        const zone = zoneArg(scope);
        if (zone === null) return null;
        if (!(start instanceof Date)) exprError(name, `${name} requires startDate to be convertible to a date`);
        if (!isIntegral64(n)) exprError(name, `${name} expects integer amount of time units`);
        return addUnits(start, u, sign * n, name, zone);
      };
    },
  };
}

function dateOf(v: unknown, name: string, parameter: string): Date {
  if (!(v instanceof Date)) exprError(name, `${name} requires '${parameter}' to be a date, but got ${bsonTypeOf(v)}`);
  return v;
}

const dateDiff: ExprOperator = {
  kind: 'expression',
  compile(args, ctx, name) {
    const a = documentArgs(args, name, ['startDate', 'endDate', 'unit', 'timezone', 'startOfWeek'], ['startDate', 'endDate', 'unit']);
    const startDate = ctx.compile(a['startDate']);
    const endDate = ctx.compile(a['endDate']);
    const unit = unitArg(a['unit'], ctx, name);
    const startOfWeek = startOfWeekArg(optional(a, 'startOfWeek'), ctx, name);
    const zoneArg = compileZone(a, ctx, name, "$dateDiff parameter 'timezone' value parsing failed");
    return (scope) => {
      const start = startDate(scope);
      if (isNullish(start)) return null;
      const end = endDate(scope);
      if (isNullish(end)) return null;
      const u = unit(scope);
      if (u === MISSING) return null;
      // startOfWeek is read only for weeks, as in MongoDB.
      const week = u === 'week' ? startOfWeek(scope) : SUNDAY;
      if (week === MISSING) return null;
      const zone = zoneArg(scope);
      if (zone === null) return null;
      return diffUnits(dateOf(start, name, 'startDate'), dateOf(end, name, 'endDate'), u, week, zone);
    };
  },
};

const dateTrunc: ExprOperator = {
  kind: 'expression',
  compile(args, ctx, name) {
    const a = documentArgs(args, name, ['date', 'unit', 'binSize', 'timezone', 'startOfWeek'], ['date', 'unit']);
    const date = ctx.compile(a['date']);
    const binSizeOf = (v: unknown): number => {
      if (!isIntegral64(v)) exprError(name, `$dateTrunc requires 'binSize' to be a 64-bit integer, but got value '${String(v)}' of type ${bsonTypeOf(v)}`);
      if (v <= 0) exprError(name, `$dateTrunc requires 'binSize' to be greater than 0, but got value ${v}`);
      return v;
    };
    let binSize: Arg<number> = () => 1;
    if (Object.hasOwn(a, 'binSize')) {
      const constant = constantArg(a['binSize']);
      if (constant !== undefined && constant.value !== null) {
        const n = binSizeOf(constant.value);
        binSize = () => n;
      } else {
        const e = ctx.compile(a['binSize']);
        binSize = (scope) => {
          const v = e(scope);
          return isNullish(v) ? MISSING : binSizeOf(v);
        };
      }
    }
    const unit = unitArg(a['unit'], ctx, name);
    const startOfWeek = startOfWeekArg(optional(a, 'startOfWeek'), ctx, name);
    const zoneArg = compileZone(a, ctx, name, "$dateTrunc parameter 'timezone' value parsing failed");
    return (scope) => {
      const d = date(scope);
      if (isNullish(d)) return null;
      const size = binSize(scope);
      if (size === MISSING) return null;
      const u = unit(scope);
      if (u === MISSING) return null;
      const week = u === 'week' ? startOfWeek(scope) : SUNDAY;
      if (week === MISSING) return null;
      const zone = zoneArg(scope);
      if (zone === null) return null;
      return truncUnits(dateOf(d, name, 'date'), u, size, week, name, zone);
    };
  },
};

export const dateArithmeticOperators: Record<string, ExprOperator> = {
  $dateAdd: dateArithmetic(1),
  $dateSubtract: dateArithmetic(-1),
  $dateDiff: dateDiff,
  $dateTrunc: dateTrunc,
};
