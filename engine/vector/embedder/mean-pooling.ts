/*
 * Pooling and normalisation as sentence-transformers does them for all-MiniLM-L6-v2
 * (Pooling(mode='mean') then Normalize()): the mean of the token vectors whose attention mask is 1,
 * then division by the L2 norm. The epsilons are torch's: clamp(mask sum, 1e-9) and
 * F.normalize's max(norm, 1e-12), so degenerate inputs give zeros, never NaN.
 */

const MASK_SUM_EPSILON = 1e-9;
const NORM_EPSILON = 1e-12;

/**
 * Attention-masked mean over a [batch, sequence, dims] tensor, one Float32Array(dims) per row.
 * Sums run in float64 so the result does not depend on the padding length.
 */
export function maskedMeanPool(hidden: Float32Array, mask: ArrayLike<bigint | number>, batch: number, sequence: number, dims: number): Float32Array[] {
  if (hidden.length !== batch * sequence * dims) {
    throw new Error(`last_hidden_state has ${hidden.length} values, expected ${batch}x${sequence}x${dims}`);
  }
  const out: Float32Array[] = [];
  const sum = new Float64Array(dims);
  for (let b = 0; b < batch; b++) {
    sum.fill(0);
    let count = 0;
    for (let s = 0; s < sequence; s++) {
      if (Number(mask[b * sequence + s]) === 0) continue;
      count++;
      const base = (b * sequence + s) * dims;
      for (let d = 0; d < dims; d++) sum[d]! += hidden[base + d]!;
    }
    const divisor = Math.max(count, MASK_SUM_EPSILON);
    const row = new Float32Array(dims);
    for (let d = 0; d < dims; d++) row[d] = sum[d]! / divisor;
    out.push(row);
  }
  return out;
}

/** Scales v in place to unit L2 norm (a zero vector stays zero) and returns it. */
export function l2Normalize(v: Float32Array): Float32Array {
  let squares = 0;
  for (let i = 0; i < v.length; i++) squares += v[i]! * v[i]!;
  const scale = 1 / Math.max(Math.sqrt(squares), NORM_EPSILON);
  for (let i = 0; i < v.length; i++) v[i]! *= scale;
  return v;
}
