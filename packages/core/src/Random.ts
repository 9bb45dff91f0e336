/**
 * Injected randomness. The core never calls `Math.random`: retry jitter draws from a {@link Random}
 * so a seed reproduces a run trace exactly (SPEC §14.6).
 *
 * @since 0.1.0
 */

/**
 * A source of uniformly distributed numbers in `[0, 1)`.
 *
 * @category models
 * @since 0.1.0
 */
export interface Random {
  /** The next number in `[0, 1)`. */
  readonly next: () => number
}

/**
 * A seeded generator: a 32-bit Weyl sequence passed through an avalanching mix. The same seed
 * gives the same sequence on every platform. Period 2^32; not for cryptography.
 *
 * **Example** (Reproducible jitter)
 *
 * ```ts
 * import { Random } from "@tickwork/core"
 * const a = Random.seeded(42), b = Random.seeded(42)
 * a.next() === b.next() // true
 * ```
 *
 * @category constructors
 * @since 0.1.0
 */
export const seeded = (seed: number): Random => {
  let state = seed | 0
  return {
    next: () => {
      state = (state + 0x9e3779b9) | 0
      let z = state
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b)
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35)
      z ^= z >>> 16
      return (z >>> 0) / 4294967296
    },
  }
}
