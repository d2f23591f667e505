import { seededRandom } from '../helpers/random.js';

/** Scales v to unit length in place (a zero vector stays zero); returns it. */
export function normalise(v: Float32Array): Float32Array {
  let s = 0;
  for (let i = 0; i < v.length; i++) s += v[i]! * v[i]!;
  if (s > 0) {
    const inv = 1 / Math.sqrt(s);
    for (let i = 0; i < v.length; i++) v[i] = v[i]! * inv;
  }
  return v;
}

/** A standard normal draw (Box-Muller) from a uniform source. */
export function gaussian(rand: () => number): number {
  const u = 1 - rand();
  const v = rand();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
}

/** A source of unit vectors uniformly distributed on the sphere of the given dims. */
export function uniformSource(dims: number, seed: number): () => Float32Array {
  const rand = seededRandom(seed);
  return () => {
    const v = new Float32Array(dims);
    for (let d = 0; d < dims; d++) v[d] = gaussian(rand);
    return normalise(v);
  };
}

/** count unit vectors from uniformSource(). */
export function uniformVectors(count: number, dims: number, seed: number): Float32Array[] {
  const next = uniformSource(dims, seed);
  const out: Float32Array[] = [];
  for (let i = 0; i < count; i++) out.push(next());
  return out;
}

/**
 * A source of unit vectors drawn from `clusters` gaussian clusters: each a random unit centre
 * plus isotropic noise of the given spread per dimension, then normalised.
 */
export function clusteredSource(dims: number, seed: number, clusters = 50, spread = 0.6 / Math.sqrt(dims)): () => Float32Array {
  const rand = seededRandom(seed);
  const centres = uniformVectors(clusters, dims, seed ^ 0x5bd1e995);
  return () => {
    const c = centres[Math.floor(rand() * clusters)]!;
    const v = new Float32Array(dims);
    for (let d = 0; d < dims; d++) v[d] = c[d]! + spread * gaussian(rand);
    return normalise(v);
  };
}

/** count unit vectors from clusteredSource(). */
export function clusteredVectors(count: number, dims: number, seed: number, clusters = 50): Float32Array[] {
  const next = clusteredSource(dims, seed, clusters);
  const out: Float32Array[] = [];
  for (let i = 0; i < count; i++) out.push(next());
  return out;
}
