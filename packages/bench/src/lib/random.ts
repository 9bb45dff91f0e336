/**
 * A small seeded PRNG (sfc32, seeded through splitmix32) so every input of every run is the
 * same for a given seed. Math.random is never used for inputs.
 */
export type Rng = () => number

const splitmix32 = (seed: number): (() => number) => {
  let s = seed >>> 0
  return () => {
    s = (s + 0x9e3779b9) >>> 0
    let z = s
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b)
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35)
    return (z ^ (z >>> 16)) >>> 0
  }
}

/** Uniform floats in [0, 1) from a 32-bit seed. */
export const seeded = (seed: number): Rng => {
  const init = splitmix32(seed)
  let a = init()
  let b = init()
  let c = init()
  let d = init()
  const rng = (): number => {
    const t = (((a + b) | 0) + d) | 0
    d = (d + 1) | 0
    a = b ^ (b >>> 9)
    b = (c + (c << 3)) | 0
    c = (c << 21) | (c >>> 11)
    c = (c + t) | 0
    return (t >>> 0) / 4294967296
  }
  for (let i = 0; i < 12; i++) rng()
  return rng
}

/** `n` integers uniform in [0, range). */
export const uniformInts = (rng: Rng, n: number, range: number): Float64Array => {
  const out = new Float64Array(n)
  for (let i = 0; i < n; i++) out[i] = Math.floor(rng() * range)
  return out
}

/** A uniformly random `k`-subset of 0..n-1, in random order (partial Fisher–Yates). */
export const sample = (rng: Rng, n: number, k: number): Uint32Array => {
  const perm = new Uint32Array(n)
  for (let i = 0; i < n; i++) perm[i] = i
  for (let i = 0; i < k; i++) {
    const j = i + Math.floor(rng() * (n - i))
    const t = perm[i] as number
    perm[i] = perm[j] as number
    perm[j] = t
  }
  return perm.slice(0, k)
}
