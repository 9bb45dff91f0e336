/** Number formatting and aligned text tables. */
import type { Summary } from "./stats.ts"

const group = (s: string): string => s.replace(/\B(?=(\d{3})+(?!\d))/g, ",")

/** An integer with thousands separators. */
export const int = (x: number): string =>
  Number.isFinite(x) ? group(Math.round(x).toString()) : "–"

/** A number with `digits` decimals. */
export const fixed = (x: number, digits: number): string =>
  Number.isFinite(x) ? x.toFixed(digits) : "–"

/** A rate with a k/M suffix: 12.3M, 845k. */
export const rate = (x: number): string => {
  if (!Number.isFinite(x)) return "–"
  if (x >= 1e6) return `${(x / 1e6).toFixed(x >= 1e8 ? 0 : x >= 1e7 ? 1 : 2)}M`
  if (x >= 1e3) return `${(x / 1e3).toFixed(x >= 1e5 ? 0 : x >= 1e4 ? 1 : 2)}k`
  return x.toFixed(0)
}

/** "median (min–max)" of a summary, each through `f`; just the median when there is one value. */
export const spread = (s: Summary, f: (x: number) => string): string =>
  s.values.length <= 1 ? f(s.median) : `${f(s.median)} (${f(s.min)}–${f(s.max)})`

export const ms = (x: number): string =>
  Number.isFinite(x) ? (x >= 100 ? int(x) : x >= 10 ? x.toFixed(1) : x.toFixed(2)) : "–"

export const count = (n: number): string =>
  n >= 1e6 && n % 1e6 === 0 ? `${n / 1e6}M` : n >= 1e3 && n % 1e3 === 0 ? `${n / 1e3}k` : int(n)

export type Align = "left" | "right"

export interface Column {
  readonly title: string
  readonly align?: Align
}

/** Renders rows as an aligned text table with a header rule. */
export const table = (
  columns: ReadonlyArray<Column>,
  rows: ReadonlyArray<ReadonlyArray<string>>,
) => {
  const widths = columns.map((c, i) =>
    Math.max(c.title.length, ...rows.map((r) => (r[i] ?? "").length)),
  )
  const cell = (text: string, i: number): string => {
    const w = widths[i] as number
    return columns[i]?.align === "left" ? text.padEnd(w) : text.padStart(w)
  }
  const line = (cells: ReadonlyArray<string>) =>
    columns
      .map((_, i) => cell(cells[i] ?? "", i))
      .join("  ")
      .trimEnd()
  const out = [line(columns.map((c) => c.title)), widths.map((w) => "-".repeat(w)).join("  ")]
  for (const r of rows) out.push(line(r))
  return out.join("\n")
}

/** A ratio such as "0.46×"; small ones keep two significant digits ("0.0051×"). */
export const ratio = (x: number): string => {
  if (!Number.isFinite(x)) return "–"
  if (x >= 10) return `${x.toFixed(1)}×`
  if (x >= 0.1) return `${x.toFixed(2)}×`
  return `${x.toPrecision(2)}×`
}

/** Bytes with one decimal below 1,000 and thousands separators above. */
export const bytes = (x: number): string => (Math.abs(x) >= 1_000 ? int(x) : fixed(x, 1))
