import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initChecksum, openDerivedWriter, readDerivedFile, removeDerivedFile, writeDerivedFile } from '../../engine/storage/index.js';
import { tempDir } from '../helpers/temp-dir.js';

const dir = tempDir('derived');
beforeAll(() => initChecksum());
afterAll(() => dir.remove());

const payloadOf = async (name: string): Promise<Buffer | string> => {
  const got = await readDerivedFile(dir.path, name);
  return 'payload' in got ? got.payload : got.missing;
};

describe('derived files', () => {
  it('round-trip whole and streamed payloads, replacing the old file atomically', async () => {
    await writeDerivedFile(dir.path, 'g', [Buffer.from('hello '), Buffer.from('world')]);
    expect(await payloadOf('g')).toEqual(Buffer.from('hello world'));
    const w = await openDerivedWriter(dir.path, 'g');
    const big = Buffer.alloc(3 * 1024 * 1024, 7);
    await w.write(big.subarray(0, 1000));
    await w.write(big.subarray(1000));
    // Until commit, readers still see the old file.
    expect(await payloadOf('g')).toEqual(Buffer.from('hello world'));
    await w.commit();
    expect(await payloadOf('g')).toEqual(big);
    expect(readdirSync(join(dir.path, 'derived'))).toEqual(['g.bin']);
  });

  it('abort leaves the old file and no temp file', async () => {
    await writeDerivedFile(dir.path, 'h', [Buffer.from('old')]);
    const w = await openDerivedWriter(dir.path, 'h');
    await w.write(Buffer.from('new'));
    await w.abort();
    expect(await payloadOf('h')).toEqual(Buffer.from('old'));
    expect(existsSync(join(dir.path, 'derived', 'h.bin.tmp'))).toBe(false);
  });

  it('reports a missing, short, foreign, truncated or damaged file instead of returning it', async () => {
    expect(await payloadOf('none')).toMatch(/does not exist/);
    await writeDerivedFile(dir.path, 'd', [Buffer.from('some payload bytes')]);
    const path = join(dir.path, 'derived', 'd.bin');
    const good = readFileSync(path);
    const cases: Array<[Buffer, RegExp]> = [
      [good.subarray(0, 10), /shorter than its header/],
      [Buffer.concat([Buffer.from('XXXX'), good.subarray(4)]), /unknown magic/],
      [good.subarray(0, good.length - 1), /payload bytes, its header says/],
      [Buffer.concat([good.subarray(0, good.length - 1), Buffer.from('!')]), /checksum/],
    ];
    for (const [bytes, message] of cases) {
      writeFileSync(path, bytes);
      expect(await payloadOf('d')).toMatch(message);
    }
    await removeDerivedFile(dir.path, 'd');
    expect(await payloadOf('d')).toMatch(/does not exist/);
  });

  it('refuses names that could leave the directory', async () => {
    await expect(writeDerivedFile(dir.path, '../x', [])).rejects.toThrow(/derived file name/);
    await expect(openDerivedWriter(dir.path, '.hidden')).rejects.toThrow(/derived file name/);
  });
});
