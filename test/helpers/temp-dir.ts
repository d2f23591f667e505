import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';

/** A fresh directory under the OS temp dir; remove() deletes it. */
export function tempDir(label: string): { path: string; remove: () => void } {
  const path = mkdtempSync(join(tmpdir(), `tetra-${label}-`));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

/**
 * A maker of fresh directories for one test file, each removed after the test that made it.
 * Call once, at the top of the file (it registers an afterEach hook).
 */
export function dirsRemovedAfterEach(): (label: string) => string {
  const dirs: Array<{ remove: () => void }> = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) d.remove();
  });
  return (label) => {
    const d = tempDir(label);
    dirs.push(d);
    return d.path;
  };
}
