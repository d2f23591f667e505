// Module hooks that run the benchmarks' TypeScript (and the engine's, which they import) as
// `npm start` runs the service: compiled by esbuild per file, without tsx's keepNames. keepNames
// wraps every function expression in a __name() call that runs each time the expression is
// evaluated; it cost about 8% of an indexed documents find in process, a bias against tetradb
// that its peers (plain JavaScript packages) do not pay. Registered by ts-register.mjs.
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { transform } from 'esbuild';

/** TypeScript's ESM convention: `./x.js` in an import names `./x.ts`. */
export async function resolve(specifier, context, next) {
  try {
    return await next(specifier, context);
  } catch (err) {
    const relative = specifier.startsWith('.') || specifier.startsWith('/') || specifier.startsWith('file:');
    if (err?.code === 'ERR_MODULE_NOT_FOUND' && relative && specifier.endsWith('.js')) return next(`${specifier.slice(0, -3)}.ts`, context);
    throw err;
  }
}

export async function load(url, context, next) {
  if (!url.startsWith('file:') || !url.endsWith('.ts') || url.includes('/node_modules/')) return next(url, context);
  const file = fileURLToPath(url);
  const source = await readFile(file, 'utf8');
  // The options the root tsconfig.json gives start.mjs's build (ES2022 class fields, verbatim imports).
  const { code } = await transform(source, {
    loader: 'ts',
    format: 'esm',
    target: 'node20',
    sourcemap: 'inline',
    sourcefile: file,
    tsconfigRaw: { compilerOptions: { target: 'ES2022', verbatimModuleSyntax: true, useDefineForClassFields: true } },
  });
  return { format: 'module', source: code, shortCircuit: true };
}
