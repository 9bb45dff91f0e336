/**
 * The soak's per-window figures: lateness (start − slot) counted in a fixed histogram of 1-ms
 * buckets, so a window of a million runs costs the same memory as one of ten.
 */

/** Buckets of 1 ms; lateness of more than this lands in the last one. */
export const MAX_MS = 120_000

/** A lateness histogram over one window. */
export class Lateness {
  /** counts[k]: runs that started k ms (k + 1 exclusive) after their slot; the last: ≥ MAX_MS. */
  counts = new Uint32Array(MAX_MS + 1)
  /** Runs counted. */
  n = 0

  add(ms: number): void {
    const k = Math.min(MAX_MS, Math.max(0, Math.floor(ms)))
    this.counts[k] = (this.counts[k] ?? 0) + 1
    this.n++
  }

  /** Adds sparse `[ms, count]` pairs (from a worker process). */
  merge(pairs: ReadonlyArray<readonly [number, number]>): void {
    for (const [k, c] of pairs) {
      this.counts[k] = (this.counts[k] ?? 0) + c
      this.n += c
    }
  }

  /** The non-zero buckets as `[ms, count]` pairs. */
  sparse(): Array<[number, number]> {
    const out: Array<[number, number]> = []
    for (let k = 0; k <= MAX_MS; k++) {
      const c = this.counts[k] as number
      if (c > 0) out.push([k, c])
    }
    return out
  }

  /** The q-th quantile (0..1) in ms: the bucket holding it; NaN with no runs. */
  quantile(q: number): number {
    if (this.n === 0) return Number.NaN
    const rank = Math.ceil(q * this.n)
    let seen = 0
    for (let k = 0; k <= MAX_MS; k++) {
      seen += this.counts[k] as number
      if (seen >= rank) return k
    }
    return MAX_MS
  }
}
