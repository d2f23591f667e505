import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Bytes of the files below `dir`, summed over every level: what a store occupies on disk
 * (logical sizes from stat, so sparse or preallocated space counts as its length).
 */
export function dirBytes(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    total += entry.isDirectory() ? dirBytes(path) : statSync(path).size;
  }
  return total;
}
