import { TYPE_DISPLAY } from '../sql-cast.js';
import { noFunction, type FunctionDef } from './function-def.js';

/**
 * pg_typeof(any): the argument's type as PostgreSQL's regtype prints it. Not strict: a NULL
 * argument still has a type. The argument is evaluated (its errors surface), its value unused.
 */
const pgTypeof: FunctionDef = {
  compile(name, args) {
    if (args.length !== 1) return noFunction(name, args);
    const arg = args[0]!;
    const value = TYPE_DISPLAY[arg.type];
    return {
      type: 'text',
      evaluate(ctx) {
        arg.evaluate(ctx);
        return { type: 'text', value };
      },
    };
  },
};

export const SYSTEM_FUNCTIONS: Record<string, FunctionDef> = {
  pg_typeof: pgTypeof,
};
