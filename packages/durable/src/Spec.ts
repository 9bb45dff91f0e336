/**
 * Schedules as data. A durable task stores its schedule as a small JSON object, a
 * {@link ScheduleSpec}, made from the core's `Schedule` when the task is accepted and turned
 * back into the core's `Schedule.Plan` (through `Schedule.resolve`) whenever its next slot is
 * computed. Every slot is computed by the core's rules; this module only converts.
 *
 * | core schedule | stored as |
 * |---|---|
 * | `Schedule.once(delay)`, `Schedule.at(time)` | `{ kind: "once", at }`: the absolute slot |
 * | `Schedule.fixedRate(period, { delay })` | `{ kind: "fixed-rate", first, period }`: the grid's origin and step |
 * | `Schedule.fixedDelay(period, { delay })` | `{ kind: "fixed-delay", period }` |
 * | `Schedule.cron(expression, { timeZone })` | `{ kind: "cron", expression, timeZone }` |
 * | `Schedule.custom(next)` | rejected with {@link NotDurable}: a function cannot be stored |
 *
 * @since 0.1.0
 */
import { Schedule, Time } from "@tickwork/core"
import { NotDurable } from "./Errors.ts"

/**
 * A schedule as stored. Times and periods are whole epoch/duration milliseconds.
 *
 * @category models
 * @since 0.1.0
 */
export type ScheduleSpec =
  | { readonly kind: "once"; readonly at: number }
  | { readonly kind: "fixed-rate"; readonly first: number; readonly period: number }
  | { readonly kind: "fixed-delay"; readonly period: number }
  | { readonly kind: "cron"; readonly expression: string; readonly timeZone: string }

/**
 * The spec of a schedule the core has already validated and resolved at `now` (its first slot is
 * `first`). Fails only for a custom schedule, which cannot be stored.
 *
 * @category constructors
 * @since 0.1.0
 */
export const fromSchedule = (
  schedule: Schedule.Schedule,
  first: number,
): ScheduleSpec | NotDurable => {
  switch (schedule._tag) {
    case "Once":
    case "At":
      return { kind: "once", at: first }
    case "FixedRate":
      return { kind: "fixed-rate", first, period: millis(schedule.period) }
    case "FixedDelay":
      return { kind: "fixed-delay", period: millis(schedule.period) }
    case "Cron":
      return typeof schedule.expression === "string"
        ? { kind: "cron", expression: schedule.expression, timeZone: schedule.timeZone }
        : notDurable(
            schedule,
            "schedule: a parsed Cron object is not stored; give the cron expression as a string",
          )
    case "Custom":
      return notDurable(schedule)
  }
}

/**
 * The {@link NotDurable} error for a schedule that cannot be stored.
 *
 * @category constructors
 * @since 0.1.0
 */
export const notDurable = (
  schedule: unknown,
  message = "schedule: a custom schedule's next() is a function and cannot be stored, so it cannot survive a restart; use once/at/fixedRate/fixedDelay/cron, or the in-memory Scheduler",
): NotDurable => new NotDurable({ field: "schedule", value: schedule, message })

/** A period the core has validated: always whole, positive ms here. */
const millis = (input: Time.DurationInput): number => {
  const ms = Time.toMillisWith(input, (reason) => new Error(reason))
  if (typeof ms !== "number") throw ms
  return ms
}

/**
 * The core schedule a spec stands for. For `fixed-rate` it has no delay: resolved at the stored
 * `first`, its grid is exactly the one the task was accepted with.
 *
 * @category constructors
 * @since 0.1.0
 */
export const toSchedule = (spec: ScheduleSpec): Schedule.Schedule => {
  switch (spec.kind) {
    case "once":
      return Schedule.at(spec.at)
    case "fixed-rate":
      return Schedule.fixedRate(spec.period)
    case "fixed-delay":
      return Schedule.fixedDelay(spec.period)
    case "cron":
      return Schedule.cron(spec.expression, { timeZone: spec.timeZone })
  }
}

const plans = new Map<string, Schedule.Plan | undefined>()
const PLAN_CACHE = 1024

/**
 * The core's plan for a spec (`undefined` for one-shots), through `Schedule.resolve`. Cached by
 * the spec's JSON text (parsing a cron expression is the costly part). Throws only for a spec
 * that was not written by {@link fromSchedule} (a corrupted row).
 *
 * @category constructors
 * @since 0.1.0
 */
export const plan = (
  spec: ScheduleSpec,
  text: string = JSON.stringify(spec),
): Schedule.Plan | undefined => {
  if (plans.has(text)) return plans.get(text)
  const origin = spec.kind === "fixed-rate" ? spec.first : 0
  const resolved = Schedule.resolve(toSchedule(spec), origin)
  if (!("first" in resolved))
    throw new Error(`stored schedule ${text} is invalid: ${resolved.message}`)
  if (plans.size >= PLAN_CACHE) plans.clear()
  plans.set(text, resolved.plan)
  return resolved.plan
}

/**
 * Reads a stored spec, checking its shape.
 *
 * @category constructors
 * @since 0.1.0
 */
export const parse = (text: string): ScheduleSpec => {
  const spec = JSON.parse(text) as ScheduleSpec
  const ok =
    typeof spec === "object" &&
    spec !== null &&
    (spec.kind === "once"
      ? Number.isSafeInteger(spec.at)
      : spec.kind === "fixed-rate"
        ? Number.isSafeInteger(spec.first) && Number.isSafeInteger(spec.period)
        : spec.kind === "fixed-delay"
          ? Number.isSafeInteger(spec.period)
          : spec.kind === "cron" &&
            typeof spec.expression === "string" &&
            typeof spec.timeZone === "string")
  if (!ok) throw new Error(`stored schedule ${text} is not a schedule spec`)
  return spec
}

/**
 * The schedule's kind, as the core's `TaskInfo.kind` names it.
 *
 * @category getters
 * @since 0.1.0
 */
export const kind = (spec: ScheduleSpec): "once" | "fixed-rate" | "fixed-delay" | "cron" =>
  spec.kind
