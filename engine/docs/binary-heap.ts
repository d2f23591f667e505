/**
 * A binary heap whose root is the element `before` puts first: the N accumulators keep their
 * best n with the one to give up first at the root (accumulator-n.ts), and a merge of sorted runs
 * keeps each run's next record with the one to hand out first at the root (external-sort.ts).
 */
export class BinaryHeap<T> {
  /** The elements, in heap order (not sorted). */
  readonly items: T[] = [];
  readonly #before: (a: T, b: T) => boolean;

  constructor(before: (a: T, b: T) => boolean) {
    this.#before = before;
  }

  get size(): number {
    return this.items.length;
  }

  get root(): T {
    return this.items[0]!;
  }

  push(v: T): void {
    const a = this.items;
    a.push(v);
    let i = a.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.#before(a[i]!, a[parent]!)) break;
      [a[i], a[parent]] = [a[parent]!, a[i]!];
      i = parent;
    }
  }

  /** Replaces the root by `v` and restores the order (one sift, where a pop and a push take two). */
  replaceRoot(v: T): void {
    const a = this.items;
    a[0] = v;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let top = i;
      if (l < a.length && this.#before(a[l]!, a[top]!)) top = l;
      if (r < a.length && this.#before(a[r]!, a[top]!)) top = r;
      if (top === i) break;
      [a[i], a[top]] = [a[top]!, a[i]!];
      i = top;
    }
  }

  /** Removes the root. */
  pop(): void {
    const last = this.items.pop()!;
    if (this.items.length > 0) this.replaceRoot(last);
  }
}
