/** Limits of the key-value model; the HTTP layer documents the same numbers. */
export const KV_LIMITS = Object.freeze({
  /** Largest key, in UTF-8 bytes (keys are 1..512 bytes). */
  maxKeyBytes: 512,
  /** Largest value, in UTF-8 bytes (the empty string is a valid value). */
  maxValueBytes: 1024 * 1024,
  /** Longest ttl, in seconds (ten years): far enough for any cache, near enough to stay a safe date. */
  maxTtlSeconds: 10 * 365 * 24 * 3600,
  /** Largest page of kvList. */
  maxListLimit: 1000,
  /** Page size of kvList when no limit is given. */
  defaultListLimit: 100,
});
