import { randomUUID } from 'node:crypto';
import { typeDisplay } from '../sql-cast.js';
import { noFunction, type FunctionDef } from './function-def.js';

/**
 * pg_typeof(any): the argument's type as PostgreSQL's regtype prints it. Not strict: a NULL
 * argument still has a type. The argument is evaluated (its errors surface), its value unused.
 */
const pgTypeof: FunctionDef = {
  compile(name, args) {
    if (args.length !== 1) return noFunction(name, args);
    const arg = args[0]!;
    const value = typeDisplay(arg.type);
    return {
      type: 'text',
      evaluate(ctx) {
        arg.evaluate(ctx);
        return { type: 'text', value };
      },
    };
  },
};

/**
 * A function of no arguments with one text value: the session's role, database and schema, which
 * tetradb does not have as PostgreSQL does. Every tenant is one database, `tetradb` (the
 * `table_catalog` of information_schema), with one schema, `public`, used as one role, `tetradb`.
 * PostgreSQL's type for these is `name`; here they are text.
 */
const constantText = (value: string): FunctionDef => ({
  compile(name, args) {
    if (args.length !== 0) return noFunction(name, args);
    return { type: 'text', evaluate: () => ({ type: 'text', value }) };
  },
});

/** gen_random_uuid(): a version 4 (random) uuid, volatile (a new one on every evaluation, see quals.ts VOLATILE). */
const genRandomUuid: FunctionDef = {
  compile(name, args) {
    if (args.length !== 0) return noFunction(name, args);
    return { type: 'uuid', evaluate: () => ({ type: 'uuid', value: randomUUID() }) };
  },
};

export const SYSTEM_FUNCTIONS: Record<string, FunctionDef> = {
  gen_random_uuid: genRandomUuid,
  pg_typeof: pgTypeof,
  current_user: constantText('tetradb'),
  session_user: constantText('tetradb'),
  current_role: constantText('tetradb'),
  current_catalog: constantText('tetradb'),
  current_database: constantText('tetradb'),
  current_schema: constantText('public'),
};
