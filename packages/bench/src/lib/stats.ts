/** Summaries of repeated measurements. */
export interface Summary {
  readonly median: number
  readonly min: number
  readonly max: number
  readonly values: ReadonlyArray<number>
}

export const summarize = (values: ReadonlyArray<number>): Summary => {
  const sorted = [...values].sort((a, b) => a - b)
  const n = sorted.length
  const median =
    n === 0
      ? Number.NaN
      : n % 2 === 1
        ? (sorted[(n - 1) / 2] as number)
        : ((sorted[n / 2 - 1] as number) + (sorted[n / 2] as number)) / 2
  return {
    median,
    min: n === 0 ? Number.NaN : (sorted[0] as number),
    max: n === 0 ? Number.NaN : (sorted[n - 1] as number),
    values,
  }
}

/** The `q`-quantile (0..1) of an ascending array, nearest rank. */
export const quantile = (sorted: Float64Array, q: number): number => {
  if (sorted.length === 0) return Number.NaN
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))
  return sorted[rank] as number
}
