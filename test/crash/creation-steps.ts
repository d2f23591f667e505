// The steps of creating a store, shared by the creation crash suites.
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { CREATE_TEMP_SUFFIX, DATA_FILE, PAGE_SIZE } from '../../engine/storage/index.js';

/**
 * Every step of creating a store, in the order they happen: the tenant directory is made (and
 * fsynced into its parent), then data.tdb is written under a temporary name, fsynced, renamed.
 */
export const CREATION_STEPS = ['mkdir:after-fsync', 'create:before-sync', 'create:after-rename'] as const;
export type CreationStep = (typeof CREATION_STEPS)[number];

export const TEMP_FILE = `${DATA_FILE}${CREATE_TEMP_SUFFIX}`;

/** What a SIGKILL at each step leaves in the store's directory (proves the kill landed there). */
export const LEFT_BEHIND: Record<CreationStep, { data: number | undefined; temp: number | undefined }> = {
  'mkdir:after-fsync': { data: undefined, temp: undefined },
  'create:before-sync': { data: undefined, temp: PAGE_SIZE },
  'create:after-rename': { data: PAGE_SIZE, temp: undefined },
};

/** Sizes of data.tdb and its temp file in `dir` (undefined: absent). */
export function creationFiles(dir: string): { data: number | undefined; temp: number | undefined } {
  const sizeOf = (path: string): number | undefined => (existsSync(path) ? statSync(path).size : undefined);
  return { data: sizeOf(join(dir, DATA_FILE)), temp: sizeOf(join(dir, TEMP_FILE)) };
}
