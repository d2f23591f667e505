/**
 * A binary min-heap of (key, node) pairs over two parallel typed arrays, private to the HNSW
 * index. The search keeps two of them: candidates keyed by -score (so the best comes out first)
 * and results keyed by score (so the worst sits on top, ready to be evicted). No objects per
 * entry and no comparator closure: the hot loops of a search only touch typed arrays.
 */
export class MinHeap {
  #keys: Float64Array;
  #ids: Int32Array;
  #size = 0;

  constructor(capacity = 64) {
    this.#keys = new Float64Array(Math.max(4, capacity));
    this.#ids = new Int32Array(Math.max(4, capacity));
  }

  get size(): number {
    return this.#size;
  }

  /** Key of the smallest entry; only meaningful when size > 0. */
  get topKey(): number {
    return this.#keys[0]!;
  }

  /** Node of the smallest entry; only meaningful when size > 0. */
  get topId(): number {
    return this.#ids[0]!;
  }

  /** Bytes held by the backing arrays. */
  get byteLength(): number {
    return this.#keys.byteLength + this.#ids.byteLength;
  }

  clear(): void {
    this.#size = 0;
  }

  push(key: number, id: number): void {
    if (this.#size === this.#keys.length) this.#grow();
    const keys = this.#keys;
    const ids = this.#ids;
    let i = this.#size++;
    // Sift up by moving parents down into the hole, then drop the new entry in once.
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const pk = keys[parent]!;
      if (pk <= key) break;
      keys[i] = pk;
      ids[i] = ids[parent]!;
      i = parent;
    }
    keys[i] = key;
    ids[i] = id;
  }

  /** Removes the smallest entry and returns its node; the heap must not be empty. */
  pop(): number {
    const keys = this.#keys;
    const ids = this.#ids;
    const top = ids[0]!;
    const n = --this.#size;
    if (n > 0) {
      const key = keys[n]!;
      const id = ids[n]!;
      let i = 0;
      for (;;) {
        let child = 2 * i + 1;
        if (child >= n) break;
        const right = child + 1;
        if (right < n && keys[right]! < keys[child]!) child = right;
        const ck = keys[child]!;
        if (ck >= key) break;
        keys[i] = ck;
        ids[i] = ids[child]!;
        i = child;
      }
      keys[i] = key;
      ids[i] = id;
    }
    return top;
  }

  #grow(): void {
    const keys = new Float64Array(this.#keys.length * 2);
    keys.set(this.#keys);
    this.#keys = keys;
    const ids = new Int32Array(this.#ids.length * 2);
    ids.set(this.#ids);
    this.#ids = ids;
  }
}
