// `npm start`: runs the service from JavaScript that esbuild compiled from engine/ and server/.
//
// Why not tsx (which `npm start` used before): tsx compiles with esbuild's keepNames, which wraps
// every function expression in a __name() call that runs each time the expression is evaluated,
// so each closure a request creates costs an Object.defineProperty. Without minification the
// names are kept by JavaScript itself, so the wrapper buys nothing here; it cost several percent
// of the server's CPU on the hot routes (docs/architecture.md, "The HTTP path").
//
// The output goes to dist/<hash of the sources>/ (gitignored): a checkout that changed is
// compiled again (about a second), an unchanged one starts at once. Builds land by an atomic
// rename, so servers starting together from one checkout never see half a build.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));
const distDir = join(root, 'dist');
/** Builds kept besides the current one, for servers still running from them. */
const KEEP_BUILDS = 3;

/** The .ts files under dir, recursively, sorted. */
function sources(dir) {
  const out = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sources(path));
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) out.push(path);
  }
  return out.sort();
}

const files = [...sources(join(root, 'engine')), ...sources(join(root, 'server'))];
const hash = createHash('sha256');
for (const file of files) hash.update(relative(root, file)).update('\0').update(readFileSync(file)).update('\0');
const outDir = join(distDir, hash.digest('hex').slice(0, 16));

if (!existsSync(join(outDir, '.complete'))) {
  const tmp = join(distDir, `.build-${process.pid}-${Date.now()}`);
  await build({ entryPoints: files, outdir: tmp, outbase: root, format: 'esm', platform: 'node', target: 'node20', logLevel: 'warning' });
  writeFileSync(join(tmp, '.complete'), '');
  try {
    renameSync(tmp, outDir);
  } catch (err) {
    // Another start made the same build meanwhile: use theirs.
    rmSync(tmp, { recursive: true, force: true });
    if (!existsSync(join(outDir, '.complete'))) throw err;
  }
  const builds = readdirSync(distDir)
    .filter((name) => name !== '.' && !name.startsWith('.build-') && join(distDir, name) !== outDir)
    .map((name) => ({ path: join(distDir, name), at: statSync(join(distDir, name)).mtimeMs }))
    .sort((a, b) => b.at - a.at);
  for (const old of builds.slice(KEEP_BUILDS)) rmSync(old.path, { recursive: true, force: true });
}

await import(pathToFileURL(join(outDir, 'server', 'main.js')).href);
