/**
 * @internal
 * A parsed cron expression in words (`Schedule.explain`), and whether the Vixie rule decides
 * its days.
 */
import { type DaysOfMonth, type DaysOfWeek, type Spec, sorted } from "./cron.ts"

const DAY_NAMES = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]
const MONTH_NAMES = [
  "January",
  "February",
  "March",
  "April",
  "May",
  "June",
  "July",
  "August",
  "September",
  "October",
  "November",
  "December",
]
const ORDINALS = ["first", "second", "third", "fourth", "fifth"]

const pad2 = (n: number): string => String(n).padStart(2, "0")

/** `a`, `a and b`, `a, b and c`. */
const listed = (items: ReadonlyArray<string>): string =>
  items.length <= 1
    ? (items[0] ?? "")
    : `${items.slice(0, -1).join(", ")} and ${items[items.length - 1] as string}`

const numbers = (values: ReadonlyArray<number>): string => listed(values.map(String))

/** The time-of-day part: `at 09:00`, `at 02:00 and 02:30`, or field by field. */
const timeWords = (spec: Spec): string => {
  const withSeconds = !(spec.seconds.length === 1 && spec.seconds[0] === 0)
  const combos = spec.hours.length * spec.minutes.length * spec.seconds.length
  if (combos <= 4) {
    const times: Array<string> = []
    for (const h of spec.hours)
      for (const m of spec.minutes)
        for (const s of spec.seconds)
          times.push(`${pad2(h)}:${pad2(m)}${withSeconds ? `:${pad2(s)}` : ""}`)
    return `at ${listed(times)}`
  }
  const part = (values: ReadonlyArray<number>, size: number, unit: string) => {
    if (values.length === size) return `every ${unit}`
    const k = evenStep(values, size)
    return k === undefined ? `${unit} ${numbers(values)}` : `every ${k} ${unit}s`
  }
  const parts = [
    ...(withSeconds ? [part(spec.seconds, 60, "second")] : []),
    part(spec.minutes, 60, "minute"),
    part(spec.hours, 24, "hour"),
  ]
  const [lead, ...rest] = parts as [string, ...Array<string>]
  if (!lead.startsWith("every")) return `at ${parts.join(" of ")}`
  // `every 3 seconds`, not `at every 3 seconds of every minute of every hour`.
  const coarser = rest.filter((p) => !/^every [a-z]+$/.test(p))
  return [lead, ...coarser].join(" of ")
}

/**
 * `k` when `values` are exactly 0, k, 2k, … of a field of `size` values and k divides `size`
 * (so the spacing holds across the field's wrap: `*\/15` minutes is every 15 minutes, `*\/7` is not).
 */
const evenStep = (values: ReadonlyArray<number>, size: number): number | undefined => {
  const k = values[1]
  if (values[0] !== 0 || k === undefined || size % k !== 0 || values.length !== size / k)
    return undefined
  return values.every((v, i) => v === i * k) ? k : undefined
}

const domWords = (dom: DaysOfMonth): Array<string> => [
  ...(dom.days.size > 0 ? [`day ${numbers(sorted(dom.days))} of the month`] : []),
  ...dom.fromLast.map((n) =>
    n === 0
      ? "the last day of the month"
      : `the day ${n} day${n === 1 ? "" : "s"} before the last day of the month`,
  ),
  ...dom.nearestWeekday.map((n) => `the weekday nearest day ${n} of the month`),
  ...(dom.lastWeekday ? ["the last weekday of the month"] : []),
]

const dowWords = (dow: DaysOfWeek): Array<string> => [
  ...(dow.days.size > 0 ? [listed(sorted(dow.days).map((d) => DAY_NAMES[d] as string))] : []),
  ...dow.nth.map((x) => `the ${ORDINALS[x.k - 1]} ${DAY_NAMES[x.weekday]} of the month`),
  ...dow.last.map((d) => `the last ${DAY_NAMES[d]} of the month`),
]

/**
 * The expression in words: `at 09:00 on the last Friday of the month`,
 * `at 00:00 on day 1 and 15 of the month in January`.
 */
export const describe = (spec: Spec): string => {
  const out = [timeWords(spec)]
  const dom = spec.dom.any ? [] : domWords(spec.dom)
  const dow = spec.dow.any ? [] : dowWords(spec.dow)
  if (dom.length > 0 && dow.length > 0) {
    out.push(
      spec.dayMatch === "both"
        ? `on ${listed(dom)}, if it is also ${listed(dow)}`
        : `on ${listed(dom)}, or on ${listed(dow)}`,
    )
  } else if (dom.length > 0) out.push(`on ${listed(dom)}`)
  else if (dow.length > 0) out.push(`on ${listed(dow)}`)
  if (spec.months.size < 12)
    out.push(`in ${listed(sorted(spec.months).map((m) => MONTH_NAMES[m - 1] as string))}`)
  return out.join(" ")
}

/**
 * Whether the Vixie rule decides the expression's days: both day fields restrict and one starts
 * with `*` or `?`, so a day must match both (croner, cron-parser and robfig/cron: either).
 */
export const hitsVixieRule = (spec: Spec): boolean =>
  spec.dayMatch === "both" && !spec.dom.any && !spec.dow.any && (spec.dom.star || spec.dow.star)
