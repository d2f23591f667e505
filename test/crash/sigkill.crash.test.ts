import { afterAll, describe, expect, it } from 'vitest';
import { randomInt, seededRandom } from '../helpers/random.js';
import { tempDir } from '../helpers/temp-dir.js';
import { runChild } from './child-process.js';
import { parseAcks, verifyCrashedStore } from './verify.js';

// The default suite kills the writer a few dozen times; TETRA_CRASH_CAMPAIGN=1 runs a long campaign.
const CAMPAIGN = process.env.TETRA_CRASH_CAMPAIGN === '1';
const ROUNDS = Number(process.env.TETRA_CRASH_ROUNDS ?? (CAMPAIGN ? 400 : 30));
const MODES = ['batch', 'always', 'off'] as const;

const dir = tempDir('sigkill');
afterAll(() => dir.remove());

describe('SIGKILL at random moments while 8 writers commit batches', () => {
  it(`loses no acknowledged batch and applies no batch by halves over ${ROUNDS} kills`, async () => {
    const rand = seededRandom(Number(process.env.TETRA_CRASH_SEED ?? 7));
    const store = `${dir.path}/store`;
    let totalAcks = 0;
    let lastCounters = new Map<number, number>();
    for (let round = 0; round < ROUNDS; round++) {
      const mode = MODES[round % MODES.length]!;
      const child = runChild(['writer', store, mode, '8']);
      await child.ready;
      await new Promise((r) => setTimeout(r, randomInt(rand, 5, 400)));
      child.kill();
      const exit = await child.exited;
      expect(child.stderr(), `round ${round}`).toBe('');
      expect(exit.signal, `round ${round}: the child must die by SIGKILL, not exit (${child.stderr()})`).toBe('SIGKILL');
      const acked = parseAcks(child.stdout());
      totalAcks += [...acked.values()].length;
      const counters = await verifyCrashedStore(store, acked);
      // Progress never goes backwards across crashes.
      for (const [w, seq] of lastCounters) expect(counters.get(w) ?? 0).toBeGreaterThanOrEqual(seq);
      lastCounters = counters;
    }
    // The run did real work: writers got well past their first batches.
    const progress = [...lastCounters.values()].reduce((a, b) => a + b, 0);
    expect(progress).toBeGreaterThan(ROUNDS * 8);
    expect(totalAcks).toBeGreaterThan(0);
  }, 30 * 60_000);
});
