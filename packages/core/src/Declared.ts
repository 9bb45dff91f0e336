/**
 * Declared tasks (SPEC §18): an application states the recurring tasks it wants at boot, and
 * each store makes its live tasks match. This module decides, for one declared task and the
 * task the store has under its id, what to do:
 *
 * ```text
 * declared  store has           decision
 * --------  ------------------  -------------------------------------------
 * A         nothing             create
 * A         done/failed/cancel  create (the id's next generation)
 * A         live, same as A     unchanged  (nothing written)
 * A'        live, as A          update with the fields that differ, in place
 * -         live, in the set    cancel (only with a named set)
 * ```
 *
 * Ground rules:
 * - a {@link Definition} is compared, never a schedule's first slot: declaring a task again does
 *   not move its grid. A fixed-rate or fixed-delay schedule is its period, a cron schedule its
 *   zone and parsed fields (equivalent expressions are the same), a one-shot given as a delay
 *   matches any one-shot (the delay counts from when the task was first accepted), one given
 *   as an instant matches a one-shot at that instant;
 * - a schedule change still waiting for its slot to end is the task's schedule here;
 * - a store's own options (the runtime's job and timeout, a durable task's handler, payload and
 *   timeout) are in {@link Definition.more}, compared with `Object.is` or as plain data.
 *
 * @since 0.5.0
 */
import type * as Breaker from "./Breaker.ts"
import { InvalidOption, type ScheduleError, show } from "./Errors.ts"
import type { MissedRunPolicy } from "./MissedRun.ts"
import type * as Retry from "./Retry.ts"
import * as Rules from "./Rules.ts"
import type * as Schedule from "./Schedule.ts"
import type { Priority, TaskId, TaskState } from "./Task.ts"

/**
 * A task's definition as {@link decide} compares it: every option `ensure` may change, in a form
 * that does not depend on when the task was accepted.
 *
 * @category models
 * @since 0.5.0
 */
export interface Definition {
  /** The schedule's plan (`undefined` for a one-shot). */
  readonly plan: Schedule.Plan | undefined
  /** A one-shot's slot, epoch ms; `undefined` for a declared delay (it matches any one-shot). */
  readonly at: number | undefined
  readonly priority: Priority
  readonly retry: Retry.Resolved
  readonly missedRuns: MissedRunPolicy
  readonly pauseAfter: number
  /** Compared as a set. */
  readonly tags: ReadonlyArray<string>
  /** ms, or `Rules.NO_WINDOW`. */
  readonly windowMs: number
  /** A shared breaker's name, a task's own breaker's resolved policy, or none. */
  readonly breaker: string | Breaker.Resolved | undefined
  /** A store's own options by name (its job or handler, payload, timeout in ms). */
  readonly more: Readonly<Record<string, unknown>>
}

/**
 * The name of an option {@link decide} found changed: a task option's own name
 * (`pauseAfterConsecutiveFailures` for {@link Definition.pauseAfter}, `window` for
 * {@link Definition.windowMs}) or a key of {@link Definition.more}.
 *
 * @category models
 * @since 0.5.0
 */
export type Field = string

/**
 * What to do with one declared task:
 * - `create`: schedule it (`previous` says whether the id is new or held a final task, whose
 *   next generation this is, its ledger kept under the old generation);
 * - `update`: change the live task in place, `fields` (in a fixed order) and nothing else;
 * - `unchanged`: write nothing.
 *
 * @category models
 * @since 0.5.0
 */
export type Decision =
  | { readonly _tag: "create"; readonly previous: "absent" | "done" | "failed" | "cancelled" }
  | { readonly _tag: "update"; readonly fields: ReadonlyArray<Field> }
  | { readonly _tag: "unchanged" }

/**
 * What one `ensure` call did, by id: the tasks it created (new ids, or the next generation of a
 * final one), updated in place (with the fields that changed), left as they were, and cancelled
 * (tasks of the named set it no longer declares).
 *
 * @category models
 * @since 0.5.0
 */
export interface Report {
  readonly created: ReadonlyArray<TaskId>
  readonly updated: ReadonlyArray<{ readonly id: TaskId; readonly fields: ReadonlyArray<Field> }>
  readonly unchanged: ReadonlyArray<TaskId>
  readonly cancelled: ReadonlyArray<TaskId>
}

/**
 * The options of `ensure`: with `set`, the declared tasks are tagged with the set's name, and
 * the live tasks tagged with it that the call does not declare are cancelled.
 *
 * @category models
 * @since 0.5.0
 */
export interface EnsureOptions {
  readonly set?: string | undefined
}

/**
 * The task a store holds under a declared id: its state and definition.
 *
 * @category models
 * @since 0.5.0
 */
export interface Current {
  readonly state: TaskState
  readonly definition: Definition
}

/**
 * What a store does with a declared task, given what it has under the id (`undefined`: nothing).
 * Pure; O(size of the definitions).
 *
 * **Example** (A changed period is an update; the same declaration again writes nothing)
 *
 * ```ts
 * import { Declared, Schedule } from "@tickwork/core"
 * const v1 = Declared.definitionOf({ schedule: Schedule.fixedRate(60_000) }, 0)
 * const v2 = Declared.definitionOf({ schedule: Schedule.fixedRate(30_000) }, 0)
 * if ("plan" in v1 && "plan" in v2) {
 *   Declared.decide(v1, undefined) // { _tag: "create", previous: "absent" }
 *   Declared.decide(v2, { state: "scheduled", definition: v1 }) // update, fields ["schedule"]
 *   Declared.decide(v1, { state: "scheduled", definition: v1 }) // { _tag: "unchanged" }
 * }
 * ```
 *
 * @category constructors
 * @since 0.5.0
 */
export const decide = (declared: Definition, current: Current | undefined): Decision => {
  if (current === undefined) return { _tag: "create", previous: "absent" }
  const s = current.state
  if (s === "done" || s === "failed" || s === "cancelled") return { _tag: "create", previous: s }
  const fields = changedFields(declared, current.definition)
  return fields.length === 0 ? { _tag: "unchanged" } : { _tag: "update", fields }
}

/**
 * The fields of `declared` that differ from `current`, in a fixed order. Pure.
 *
 * @category getters
 * @since 0.5.0
 */
export const changedFields = (declared: Definition, current: Definition): Array<Field> => {
  const out: Array<Field> = []
  if (!sameSchedule(declared, current)) out.push("schedule")
  if (declared.priority !== current.priority) out.push("priority")
  if (!sameData(declared.retry, current.retry)) out.push("retry")
  if (declared.missedRuns !== current.missedRuns) out.push("missedRuns")
  if (declared.pauseAfter !== current.pauseAfter) out.push("pauseAfterConsecutiveFailures")
  if (declared.windowMs !== current.windowMs) out.push("window")
  if (!sameSet(declared.tags, current.tags)) out.push("tags")
  if (!sameData(declared.breaker, current.breaker)) out.push("breaker")
  const keys = new Set([...Object.keys(declared.more), ...Object.keys(current.more)])
  for (const k of [...keys].sort()) {
    if (!sameData(declared.more[k], current.more[k])) out.push(k)
  }
  return out
}

/**
 * The definition of declared task options at `now`, or the typed error of the first bad field
 * (the rules' own checks, {@link Rules.validate}). A store adds its own options with `more`;
 * `breaker` is as given (a name, or a policy the store resolved with `Breaker.resolve`).
 *
 * @category constructors
 * @since 0.5.0
 */
export const definitionOf = (
  options: Rules.Options & {
    readonly breaker?: string | Breaker.Resolved | undefined
  },
  now: number,
  more: Readonly<Record<string, unknown>> = {},
  keys: ReadonlySet<string> = Rules.optionKeys,
): Definition | ScheduleError => {
  const a = Rules.validate(options, now, keys)
  if (!("first" in a)) return a
  return {
    plan: a.plan,
    // A delay counts from acceptance: the same declaration at a later boot is the same task.
    at: a.plan === undefined && options.schedule._tag === "At" ? a.first : undefined,
    priority: a.priority,
    retry: a.retry,
    missedRuns: a.missedRuns,
    pauseAfter: a.pauseAfter,
    tags: a.tags,
    windowMs: a.windowMs,
    breaker: options.breaker,
    more,
  }
}

/**
 * The changes that turn a live task into its declaration, for the store's `update`: the
 * declared value of each changed field, and for an option the declaration leaves out, its
 * removal (`window: null`, `breaker: null`, `tags: []`) or its default. `options` is the
 * declaration as given. Pure.
 *
 * @category constructors
 * @since 0.5.0
 */
export const changesOf = (
  options: object,
  fields: ReadonlyArray<Field>,
): Record<string, unknown> => {
  const out: Record<string, unknown> = {}
  for (const f of fields) {
    const v = (options as Readonly<Record<string, unknown>>)[f]
    if (v !== undefined) out[f] = v
    else out[f] = f in REMOVED ? REMOVED[f] : v
  }
  return out
}

/**
 * The record of a live task changed in place (SPEC §15, §18.1), which every store writes to the
 * task's ledger as `updated`: who changed it (`cause`) and which fields. By `update`, the
 * fields it was given, in the order given (a key whose value is `undefined` was not given); by
 * `ensure`, the fields {@link decide} found changed, in its fixed order.
 *
 * @category models
 * @since 0.5.0
 */
export interface Change {
  readonly cause: "update" | "ensure"
  readonly fields: ReadonlyArray<Field>
}

/**
 * The {@link Change} recorded for an `update` given `changes`, or for an `ensure` that decided
 * `fields`. Pure; O(keys).
 *
 * **Example** (An update names what it was given; an ensure what differed)
 *
 * ```ts
 * import { Declared } from "@tickwork/core"
 * Declared.changeOf({ update: { priority: "high", tags: undefined } })
 * // { cause: "update", fields: ["priority"] }
 * Declared.changeOf({ ensure: ["schedule"] }) // { cause: "ensure", fields: ["schedule"] }
 * ```
 *
 * @category constructors
 * @since 0.5.0
 */
export const changeOf = (
  by: { readonly update: object } | { readonly ensure: ReadonlyArray<Field> },
): Change =>
  "ensure" in by
    ? { cause: "ensure", fields: by.ensure }
    : {
        cause: "update",
        fields: Object.keys(by.update).filter(
          (k) => (by.update as Readonly<Record<string, unknown>>)[k] !== undefined,
        ),
      }

/** What an option left out of a declaration sets on a live task that has it. */
const REMOVED: Readonly<Record<string, unknown>> = {
  window: null,
  breaker: null,
  tags: [],
  priority: "normal",
  retry: { maxRetries: 0 },
  missedRuns: "catch-up",
  pauseAfterConsecutiveFailures: 0,
}

/**
 * Checks a batch of declarations before anything is written: each has an id (a string), no id
 * is declared twice, and the set's name (if any) is a valid tag. The error names the field
 * (`tasks[k].id`, `set`) and its value.
 *
 * @category constructors
 * @since 0.5.0
 */
export const checkBatch = (
  ids: ReadonlyArray<unknown>,
  set: unknown,
): InvalidOption | undefined => {
  if (set !== undefined && (typeof set !== "string" || set.length === 0 || set.length > 64)) {
    return new InvalidOption({
      field: "set",
      value: set,
      message: `set must be a string of 1 to 64 characters (it is a tag), got ${show(set)}`,
    })
  }
  const seen = new Set<string>()
  for (let k = 0; k < ids.length; k++) {
    const id = ids[k]
    if (typeof id !== "string" || id.length === 0) {
      return new InvalidOption({
        field: `tasks[${k}].id`,
        value: id,
        message: `tasks[${k}].id must be a non-empty string: a declared task is found again by its id, got ${show(id)}`,
      })
    }
    if (seen.has(id)) {
      return new InvalidOption({
        field: `tasks[${k}].id`,
        value: id,
        message: `tasks[${k}].id ${show(id)} is declared twice in one batch`,
      })
    }
    seen.add(id)
  }
  return undefined
}

/**
 * The tags a declared task gets: its own, and the set's name when it belongs to a set (the set
 * is found again by that tag, so the tasks it no longer declares can be cancelled).
 *
 * @category constructors
 * @since 0.5.0
 */
export const tagsOf = (
  tags: ReadonlyArray<string> | undefined,
  set: string | undefined,
): ReadonlyArray<string> | undefined =>
  set === undefined ? tags : tags?.includes(set) === true ? tags : [...(tags ?? []), set]

/**
 * The live tasks of a set (`members`, the ids tagged with its name) that a declaration no longer
 * names: those `ensure` cancels. Pure; O(members + declared).
 *
 * @category getters
 * @since 0.5.0
 */
export const undeclared = (
  members: ReadonlyArray<string>,
  declared: ReadonlyArray<string>,
): Array<string> => {
  const keep = new Set(declared)
  return members.filter((id) => !keep.has(id))
}

const sameSchedule = (declared: Definition, current: Definition): boolean => {
  const a = declared.plan
  const b = current.plan
  if (a === undefined || b === undefined) {
    return a === b && (declared.at === undefined || declared.at === current.at)
  }
  switch (a.kind) {
    case "fixed-rate":
    case "fixed-delay":
      return b.kind === a.kind && b.period === a.period
    case "cron": {
      if (b.kind !== "cron") return false
      const x = a.cron as unknown as Record<string, unknown>
      const y = b.cron as unknown as Record<string, unknown>
      // Parsed text: its zone and fields, so equivalent expressions are one schedule.
      // Stryker disable next-line LogicalOperator: equivalent, a parsed cron always has a zone name and an Effect Cron no `timeZone`, so one of each never compares equal
      return x._tag === "ParsedCron" && y._tag === "ParsedCron"
        ? x.timeZone === y.timeZone && sameData(x.spec, y.spec)
        : Object.is(x, y)
    }
    case "custom":
      return b.kind === "custom" && Object.is(a.next, b.next)
  }
}

const sameSet = (a: ReadonlyArray<string>, b: ReadonlyArray<string>): boolean => {
  if (a.length !== b.length) return false
  const s = new Set(b)
  return a.every((x) => s.has(x))
}

/**
 * Equality of plain data: numbers, strings, arrays, sets and plain objects by value; anything
 * else (a function, an Effect) by identity.
 */
const sameData = (a: unknown, b: unknown): boolean => {
  if (Object.is(a, b)) return true
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false
  if (Array.isArray(a)) {
    return Array.isArray(b) && a.length === b.length && a.every((x, k) => sameData(x, b[k]))
  }
  if (a instanceof Set) {
    if (!(b instanceof Set) || a.size !== b.size) return false
    for (const x of a) if (!b.has(x)) return false
    return true
  }
  const pa = Object.getPrototypeOf(a)
  if ((pa !== Object.prototype && pa !== null) || Object.getPrototypeOf(b) !== pa) return false
  const ka = Object.keys(a)
  const kb = Object.keys(b)
  if (ka.length !== kb.length) return false
  const rb = b as Record<string, unknown>
  return ka.every((k) => k in rb && sameData((a as Record<string, unknown>)[k], rb[k]))
}
