/**
 * @internal
 * Task options and changes → an accepted task or change, or the typed error of the first bad field (SPEC §15). Re-exported by `Rules.ts`.
 */
import {
  InvalidOption,
  InvalidPriority,
  type ScheduleError,
  show,
  unknownKey,
} from "../../Errors.ts"
import type { MissedRunPolicy } from "../../MissedRun.ts"
import * as Retry from "../../Retry.ts"
import * as Schedule from "../../Schedule.ts"
import type { Priority } from "../../Task.ts"
import { type DurationInput, MAX_MS, toMillisWith } from "../../Time.ts"
import { NO_WINDOW } from "./row.ts"

const NO_TAGS: ReadonlyArray<string> = Object.freeze([])
/** Tags per task, and characters per tag. */
const MAX_TAGS = 32
const MAX_TAG_LENGTH = 64

/**
 * How an update treats a task option: `"change"` (an update may set it), `"remove"` (it may set
 * it, or remove it with `null`), `"fixed"` (only given when the task is scheduled: the id).
 *
 * @category models
 * @since 0.4.0
 */
export type FieldUpdate = "change" | "remove" | "fixed"

/**
 * Every task option the core knows, declared once: the option and change types of the kernel
 * (`Kernel.TaskOptions`, `Kernel.UpdateOptions`) are checked against it, and the key lists
 * ({@link optionKeys}, {@link updateKeys}) derive from it. A store with options of its own (the
 * runtime's `timeout`, a durable task's handler and payload) extends the lists with
 * {@link keysWith}.
 *
 * @category models
 * @since 0.4.0
 */
export const fields = {
  job: "change",
  schedule: "change",
  id: "fixed",
  priority: "change",
  retry: "change",
  missedRuns: "change",
  pauseAfterConsecutiveFailures: "change",
  window: "remove",
  tags: "change",
  breaker: "remove",
  group: "fixed",
  key: "fixed",
  dedup: "fixed",
} as const satisfies Record<string, FieldUpdate>

/**
 * The keys of a task's options the rules know (of {@link fields}). A store with options of its
 * own (the runtime's `timeout`, a durable task's handler) extends this set.
 *
 * @category models
 * @since 0.3.0
 */
export const optionKeys: ReadonlySet<string> = new Set(Object.keys(fields))

/**
 * The keys an update may change: every option of {@link fields} but the fixed ones (the id).
 *
 * @category models
 * @since 0.4.0
 */
export const updateKeys: ReadonlySet<string> = new Set(
  Object.entries(fields).flatMap(([key, update]) => (update === "fixed" ? [] : [key])),
)

/**
 * `keys` without `without` and with `extra`: how a store derives its own key lists from the
 * core's (the durable store's task options have a handler and payload instead of a job). Pure.
 *
 * @category constructors
 * @since 0.4.0
 */
export const keysWith = (
  keys: ReadonlySet<string>,
  change: { readonly without?: ReadonlyArray<string>; readonly with?: ReadonlyArray<string> },
): ReadonlySet<string> => {
  const out = new Set(keys)
  for (const key of change.without ?? []) out.delete(key)
  for (const key of change.with ?? []) out.add(key)
  return out
}

/**
 * The options {@link validate} reads. The id and the breaker are the store's business (which
 * ids are live, which breakers are defined): they are only checked to be known keys here.
 *
 * @category models
 * @since 0.3.0
 */
export interface Options {
  readonly schedule: Schedule.Schedule
  readonly priority?: Priority | undefined
  readonly retry?: Retry.RetryPolicy | undefined
  readonly missedRuns?: MissedRunPolicy | undefined
  readonly pauseAfterConsecutiveFailures?: number | undefined
  readonly window?: DurationInput | undefined
  readonly tags?: ReadonlyArray<string> | undefined
}

/**
 * A task the rules accepted at `now`: its policies resolved, its first slot and plan.
 *
 * @category models
 * @since 0.3.0
 */
export interface Accepted {
  readonly priority: Priority
  /** 0 = high, 1 = normal, 2 = low. */
  readonly rank: number
  readonly retry: Retry.Resolved
  readonly missedRuns: MissedRunPolicy
  readonly pauseAfter: number
  readonly tags: ReadonlyArray<string>
  /** ms, or {@link NO_WINDOW}. */
  readonly windowMs: number
  /** The first slot, epoch ms. */
  readonly first: number
  readonly plan: Schedule.Plan | undefined
}

/**
 * Validates a task's options at `now`: the typed error of the first bad field (an unknown key
 * included, SPEC §13), or the accepted task. Pure; O(1) but for cron (parsing) and custom (one
 * call of `next`).
 *
 * **Example** (An accepted fixed-rate task)
 *
 * ```ts
 * import { Rules, Schedule } from "@tickwork/core"
 * const a = Rules.validate({ schedule: Schedule.fixedRate(10, { delay: 5 }) }, 100)
 * "first" in a && a.first // 105
 * ```
 *
 * @category constructors
 * @since 0.3.0
 */
export const validate = (
  options: Options,
  now: number,
  keys: ReadonlySet<string> = optionKeys,
): Accepted | ScheduleError => {
  if (typeof options !== "object" || options === null) {
    return new InvalidOption({
      field: "options",
      value: options,
      message: `options must be an object, got ${show(options)}`,
    })
  }
  const unknown = unknownKey(options, keys)
  if (unknown !== undefined) return unknown
  const priority = options.priority ?? "normal"
  const rank = rankOf(priority)
  if (rank < 0) return badPriority(priority)
  const retry = Retry.resolve(options.retry)
  if (!("maxRetries" in retry)) return retry
  const missedRuns = options.missedRuns ?? "catch-up"
  if (!isPolicy(missedRuns)) return badPolicy(missedRuns)
  const pauseAfter = options.pauseAfterConsecutiveFailures ?? 0
  const badPause = checkPauseAfter(pauseAfter)
  if (badPause !== undefined) return badPause
  const tags = options.tags === undefined ? NO_TAGS : resolveTags(options.tags)
  if (!Array.isArray(tags)) return tags as InvalidOption
  const windowMs = options.window === undefined ? NO_WINDOW : resolveWindow(options.window)
  if (typeof windowMs !== "number") return windowMs
  const schedule = options.schedule
  let first: number
  let plan: Schedule.Plan | undefined
  // The fast path gives what Schedule.resolve gives, so its tests cannot be told apart:
  // Stryker disable ConditionalExpression,EqualityOperator,StringLiteral: equivalent, a shortcut to the same first slot
  const delay = schedule?._tag === "Once" ? schedule.delay : undefined
  if (
    typeof delay === "number" &&
    Number.isSafeInteger(delay) &&
    delay >= 0 &&
    now + delay <= MAX_MS
  ) {
    // Stryker restore ConditionalExpression,EqualityOperator,StringLiteral
    // The common case, without resolving.
    first = now + delay
    plan = undefined
  } else {
    const resolved = Schedule.resolve(schedule, now)
    if (!("first" in resolved)) return resolved
    first = resolved.first
    plan = resolved.plan
  }
  if (windowMs !== NO_WINDOW) {
    const bad = checkWindowFits(plan, options.window)
    if (bad !== undefined) return bad
  }
  return { priority, rank, retry, missedRuns, pauseAfter, tags, windowMs, first, plan }
}

/**
 * What {@link validateChanges} reads: any option but the id and the job. `window: null` removes
 * the window.
 *
 * @category models
 * @since 0.3.0
 */
export interface Changes {
  readonly schedule?: Schedule.Schedule | undefined
  readonly priority?: Priority | undefined
  readonly retry?: Retry.RetryPolicy | undefined
  readonly missedRuns?: MissedRunPolicy | undefined
  readonly pauseAfterConsecutiveFailures?: number | undefined
  readonly window?: DurationInput | null | undefined
  readonly tags?: ReadonlyArray<string> | undefined
}

/**
 * Validated changes: each field is `undefined` when it does not change.
 *
 * @category models
 * @since 0.3.0
 */
export interface ValidChanges {
  readonly rank: number | undefined
  readonly retry: Retry.Resolved | undefined
  readonly missedRuns: MissedRunPolicy | undefined
  readonly pauseAfter: number | undefined
  readonly tags: ReadonlyArray<string> | undefined
  /** ms, or {@link NO_WINDOW} when the window is removed. */
  readonly windowMs: number | undefined
  /** The new schedule resolved at `now`. */
  readonly resolved: Schedule.Resolved | undefined
}

/**
 * Validates changes to a live task (SPEC §15) whose plan and window are `plan` and `windowMs`:
 * the typed error of the first bad change, or the changes resolved at `now`. Unknown keys are
 * the caller's to check (its set of keys differs). Pure.
 *
 * @category constructors
 * @since 0.3.0
 */
export const validateChanges = (
  changes: Changes,
  now: number,
  current: { readonly plan: Schedule.Plan | undefined; readonly windowMs: number },
): ValidChanges | ScheduleError => {
  let rank: number | undefined
  if (changes.priority !== undefined) {
    rank = rankOf(changes.priority)
    if (rank < 0) return badPriority(changes.priority)
  }
  let retry: Retry.Resolved | undefined
  if (changes.retry !== undefined) {
    const r = Retry.resolve(changes.retry)
    if (!("maxRetries" in r)) return r
    retry = r
  }
  if (changes.missedRuns !== undefined && !isPolicy(changes.missedRuns))
    return badPolicy(changes.missedRuns)
  if (changes.pauseAfterConsecutiveFailures !== undefined) {
    const bad = checkPauseAfter(changes.pauseAfterConsecutiveFailures)
    if (bad !== undefined) return bad
  }
  let tags: ReadonlyArray<string> | undefined
  if (changes.tags !== undefined) {
    const r = resolveTags(changes.tags)
    if (!Array.isArray(r)) return r as InvalidOption
    tags = r
  }
  let windowMs: number | undefined
  if (changes.window === null) windowMs = NO_WINDOW
  else if (changes.window !== undefined) {
    const w = resolveWindow(changes.window)
    if (typeof w !== "number") return w
    windowMs = w
  }
  let resolved: Schedule.Resolved | undefined
  if (changes.schedule !== undefined) {
    const r = Schedule.resolve(changes.schedule, now)
    if (!("first" in r)) return r
    resolved = r
  }
  const window = windowMs ?? current.windowMs
  if (window !== NO_WINDOW) {
    const bad = checkWindowFits(
      resolved === undefined ? current.plan : resolved.plan,
      changes.window ?? window,
    )
    if (bad !== undefined) return bad
  }
  return {
    rank,
    retry,
    missedRuns: changes.missedRuns,
    pauseAfter: changes.pauseAfterConsecutiveFailures,
    tags,
    windowMs,
    resolved,
  }
}

/**
 * The rank of a priority (0 = high, 1 = normal, 2 = low), or -1 for something else.
 *
 * @category getters
 * @since 0.3.0
 */
export const rankOf = (priority: Priority): number =>
  priority === "normal" ? 1 : priority === "high" ? 0 : priority === "low" ? 2 : -1

const badPriority = (priority: unknown): InvalidPriority =>
  new InvalidPriority({
    field: "priority",
    value: priority,
    message: `priority must be "high", "normal" or "low", got ${show(priority)}`,
  })

const isPolicy = (policy: unknown): policy is MissedRunPolicy =>
  policy === "catch-up" || policy === "coalesce" || policy === "skip"

const badPolicy = (policy: unknown): InvalidOption =>
  new InvalidOption({
    field: "missedRuns",
    value: policy,
    message: `missedRuns must be "catch-up", "coalesce" or "skip", got ${show(policy)}`,
  })

const checkPauseAfter = (pauseAfter: number): InvalidOption | undefined =>
  Number.isSafeInteger(pauseAfter) && pauseAfter >= 0
    ? undefined
    : new InvalidOption({
        field: "pauseAfterConsecutiveFailures",
        value: pauseAfter,
        message: `pauseAfterConsecutiveFailures must be a non-negative integer (0 = never), got ${show(pauseAfter)}`,
      })

/** Validated tags, duplicates dropped, in the order given; `NO_TAGS` for none. */
const resolveTags = (tags: ReadonlyArray<string>): ReadonlyArray<string> | InvalidOption => {
  if (!Array.isArray(tags)) {
    return new InvalidOption({
      field: "tags",
      value: tags,
      message: `tags must be an array of strings, got ${show(tags)}`,
    })
  }
  if (tags.length > MAX_TAGS) {
    return new InvalidOption({
      field: "tags",
      value: tags,
      message: `tags must hold at most ${MAX_TAGS} tags, got ${tags.length}`,
    })
  }
  for (let k = 0; k < tags.length; k++) {
    const tag: unknown = tags[k]
    if (typeof tag !== "string" || tag.length === 0 || tag.length > MAX_TAG_LENGTH) {
      return new InvalidOption({
        field: `tags[${k}]`,
        value: tag,
        message: `tags[${k}] must be a string of 1 to ${MAX_TAG_LENGTH} characters, got ${show(tag)}`,
      })
    }
  }
  return tags.length === 0 ? NO_TAGS : Object.freeze([...new Set(tags)])
}

const resolveWindow = (input: DurationInput): number | InvalidOption =>
  toMillisWith(
    input,
    (reason) =>
      new InvalidOption({
        field: "window",
        value: input,
        message: `window ${reason}, got ${show(input)}`,
      }),
  )

/** A window applies to grids (SPEC §3) and, as a deadline, to one-shots: not to the other kinds. */
const checkWindowFits = (
  plan: Schedule.Plan | undefined,
  window: unknown,
): InvalidOption | undefined =>
  plan === undefined || plan.kind === "fixed-rate" || plan.kind === "cron"
    ? undefined
    : new InvalidOption({
        field: "window",
        value: window,
        message: `window applies to fixed-rate, cron and one-shot schedules, not to a ${plan.kind} one`,
      })
