/** The reference the B+tree is checked against: a plain map kept sorted by unsigned bytes. */
export class SortedModel {
  readonly #map = new Map<string, Buffer>(); // hex key -> value

  put(key: Buffer, value: Buffer): void {
    this.#map.set(key.toString('hex'), Buffer.from(value));
  }

  delete(key: Buffer): boolean {
    return this.#map.delete(key.toString('hex'));
  }

  get(key: Buffer): Buffer | undefined {
    return this.#map.get(key.toString('hex'));
  }

  get size(): number {
    return this.#map.size;
  }

  clear(): void {
    this.#map.clear();
  }

  /** An independent copy (for checking a snapshot against the state it was taken at). */
  clone(): SortedModel {
    const copy = new SortedModel();
    for (const [k, v] of this.#map) copy.#map.set(k, v);
    return copy;
  }

  /** Entries in byte order within the bounds (same semantics as BTree.scan). */
  range(r: { gt?: Buffer; gte?: Buffer; lt?: Buffer; lte?: Buffer; reverse?: boolean; limit?: number } = {}): Array<[Buffer, Buffer]> {
    const all = [...this.#map].map(([k, v]) => [Buffer.from(k, 'hex'), v] as [Buffer, Buffer]);
    all.sort((a, b) => Buffer.compare(a[0], b[0]));
    let out = all.filter(([k]) => {
      if (r.gt && Buffer.compare(k, r.gt) <= 0) return false;
      if (r.gte && Buffer.compare(k, r.gte) < 0) return false;
      if (r.lt && Buffer.compare(k, r.lt) >= 0) return false;
      if (r.lte && Buffer.compare(k, r.lte) > 0) return false;
      return true;
    });
    if (r.reverse) out.reverse();
    if (r.limit !== undefined) out = out.slice(0, r.limit);
    return out;
  }
}
