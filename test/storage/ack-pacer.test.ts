import { describe, expect, it } from 'vitest';
import { AckPacer } from '../../engine/storage/index.js';

/** Counts event-loop iterations: a chained immediate runs once per iteration's check phase. */
function iterationCounter(): { readonly value: number; stop(): void } {
  let value = 0;
  let stopped = false;
  const tick = (): void => {
    value++;
    if (!stopped) setImmediate(tick);
  };
  setImmediate(tick);
  return {
    get value() {
      return value;
    },
    stop() {
      stopped = true;
    },
  };
}

function busyWait(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

describe('AckPacer', () => {
  it('releases in FIFO order', async () => {
    const pacer = new AckPacer(1000);
    const order: number[] = [];
    await Promise.all(Array.from({ length: 20 }, (_, i) => pacer.pass().then(() => order.push(i))));
    expect(order).toEqual(Array.from({ length: 20 }, (_, i) => i));
  });

  it('releases cheap continuations together, in one iteration', async () => {
    const pacer = new AckPacer(1000);
    const loop = iterationCounter();
    const seen = await Promise.all(Array.from({ length: 50 }, () => pacer.pass().then(() => loop.value)));
    loop.stop();
    expect(new Set(seen).size).toBe(1);
  });

  it('moves the rest to later iterations once continuations use up the turn budget', async () => {
    const pacer = new AckPacer(2);
    const loop = iterationCounter();
    // Each continuation takes longer than the budget, so every release gets an iteration of its own.
    const seen = await Promise.all(
      Array.from({ length: 6 }, () =>
        pacer.pass().then(() => {
          const at = loop.value;
          busyWait(3);
          return at;
        }),
      ),
    );
    loop.stop();
    expect(new Set(seen).size).toBe(6);
    expect([...seen].sort((a, b) => a - b)).toEqual(seen);
  });

  it('sees the continuation of each release before releasing the next', async () => {
    const pacer = new AckPacer(1000);
    const events: string[] = [];
    const chained = (i: number): Promise<void> =>
      pacer
        .pass()
        .then(() => events.push(`released ${i}`))
        .then(() => Promise.resolve())
        .then(() => void events.push(`continued ${i}`));
    await Promise.all([chained(0), chained(1), chained(2)]);
    expect(events).toEqual(['released 0', 'continued 0', 'released 1', 'continued 1', 'released 2', 'continued 2']);
  });
});
