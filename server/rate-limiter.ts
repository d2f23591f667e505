/**
 * Token buckets keyed by a string (API key id, client IP). A bucket holds up to `capacity`
 * tokens and refills at `perSecond`; each request takes one. Idle buckets are dropped so the map
 * stays bounded by the number of recently active clients.
 */
export class RateLimiter {
  readonly capacity: number;
  readonly perSecond: number;
  readonly #buckets = new Map<string, { tokens: number; at: number }>();
  readonly #maxBuckets: number;

  constructor(options: { capacity: number; perSecond: number; maxBuckets?: number }) {
    this.capacity = options.capacity;
    this.perSecond = options.perSecond;
    this.#maxBuckets = options.maxBuckets ?? 100_000;
  }

  /** Takes one token for `id`; says whether it was allowed and what the headers should say. */
  take(id: string, now = Date.now()): { allowed: boolean; remaining: number; resetSeconds: number; retryAfterSeconds: number } {
    let bucket = this.#buckets.get(id);
    if (bucket === undefined) {
      if (this.#buckets.size >= this.#maxBuckets) this.#prune(now);
      bucket = { tokens: this.capacity, at: now };
      this.#buckets.set(id, bucket);
    } else {
      bucket.tokens = Math.min(this.capacity, bucket.tokens + ((now - bucket.at) / 1000) * this.perSecond);
      bucket.at = now;
    }
    const allowed = bucket.tokens >= 1;
    if (allowed) bucket.tokens -= 1;
    const missing = this.capacity - bucket.tokens;
    return {
      allowed,
      remaining: Math.floor(bucket.tokens),
      resetSeconds: Math.ceil(missing / this.perSecond),
      retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil((1 - bucket.tokens) / this.perSecond)),
    };
  }

  #prune(now: number): void {
    // A bucket that would be full again carries no state worth keeping.
    for (const [id, b] of this.#buckets) {
      if (b.tokens + ((now - b.at) / 1000) * this.perSecond >= this.capacity) this.#buckets.delete(id);
    }
    // Still full of active clients: drop the oldest entries rather than grow without bound.
    for (const id of this.#buckets.keys()) {
      if (this.#buckets.size < this.#maxBuckets) break;
      this.#buckets.delete(id);
    }
  }
}
