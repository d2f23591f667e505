import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { writeBuffersAt } from '../../engine/storage/page-file.js';
import { randomInt, seededRandom } from '../helpers/random.js';

// Checkpoints and compaction write their pages with one gathered write per chunk instead of
// joining them into one buffer first: the file must end up with exactly the joined bytes.
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('writeBuffersAt', () => {
  it('writes the buffers one after another from the position, as many as given (past IOV_MAX), leaving the bytes before it alone', async () => {
    const rand = seededRandom(5);
    for (const count of [1, 3, 1023, 1024, 1025, 3000]) {
      const dir = mkdtempSync(join(tmpdir(), 'tetra-writev-'));
      dirs.push(dir);
      const path = join(dir, 'f');
      const fd = openSync(path, 'w+');
      try {
        const head = Buffer.alloc(777, 0x5a);
        writeSync(fd, head, 0, head.length, 0);
        const buffers = Array.from({ length: count }, (_, i) => Buffer.alloc(randomInt(rand, 1, 9000), i % 251));
        await writeBuffersAt(fd, buffers, head.length);
        expect(readFileSync(path).equals(Buffer.concat([head, ...buffers]))).toBe(true);
      } finally {
        closeSync(fd);
      }
    }
  });
});
