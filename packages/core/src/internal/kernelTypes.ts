/**
 * @internal
 * The kernel's public models (re-exported by `Kernel.ts`): what it accepts, what it reports.
 */
import type * as Breaker from "../Breaker.ts"
import type { MissedRunPolicy } from "../MissedRun.ts"
import type * as Random from "../Random.ts"
import type * as Retry from "../Retry.ts"
import * as Rules from "../Rules.ts"
import type * as Schedule from "../Schedule.ts"
import type {
  BreakerState,
  PauseReason,
  Priority,
  TaskId,
  TaskInfo,
  TaskState,
  WaitInfo,
} from "../Task.ts"
import type { DurationInput } from "../Time.ts"

/**
 * The keys of {@link TaskOptions}. A driver that adds options of its own (the runtime's
 * `timeout`) extends this set and removes them before calling {@link Kernel.schedule}.
 *
 * @category models
 * @since 0.1.0
 */
export const taskOptionKeys: ReadonlySet<string> = Rules.optionKeys

/**
 * The keys {@link Kernel.update} accepts: every task option but the id. A driver with options
 * of its own (the runtime's `timeout`) extends this set as it does {@link taskOptionKeys}.
 *
 * @category models
 * @since 0.2.0
 */
export const updateKeys: ReadonlySet<string> = Rules.updateKeys

/**
 * Everything needed to accept a task.
 *
 * @category models
 * @since 0.1.0
 */
export interface TaskOptions<J> {
  /** What to run; opaque to the kernel (a function for the driver, an Effect for the runtime). */
  readonly job: J
  readonly schedule: Schedule.Schedule
  /** A caller-supplied id; generated (`#<index>.<generation>`) when absent. */
  readonly id?: string | undefined
  /** Default `"normal"`. */
  readonly priority?: Priority | undefined
  readonly retry?: Retry.RetryPolicy | undefined
  /** For fixed-rate and cron schedules. Default `"catch-up"`. */
  readonly missedRuns?: MissedRunPolicy | undefined
  /**
   * A recurring task is paused (reason `failures`) after this many slots in a row fail (retries
   * used up). 0 (default) = never.
   */
  readonly pauseAfterConsecutiveFailures?: number | undefined
  /**
   * The catch-up window (SPEC §3), for fixed-rate, cron and one-shot schedules: a run that would
   * start more than this after its slot is skipped (cause `window`), and for a one-shot it is a
   * deadline: past it the run expires and the task ends `failed`.
   */
  readonly window?: DurationInput | undefined
  /** Short labels to list and control tasks by (SPEC §15): up to 32, each 1–64 characters. */
  readonly tags?: ReadonlyArray<string> | undefined
  /**
   * The task's circuit breaker (SPEC §7): its own policy, or the name of one defined in the
   * kernel's {@link KernelOptions.breakers}, shared with the other tasks that name it.
   */
  readonly breaker?: Breaker.BreakerPolicy | string | undefined
  /**
   * The flow-control group it runs in (SPEC §20.1): one declared in the kernel's
   * {@link KernelOptions.limits} `groups`, whose limits its runs count against. Fixed once
   * scheduled.
   */
  readonly group?: string | undefined
  /**
   * Its key (SPEC §20.1), 1–256 characters, e.g. a customer id: the kernel's `limits.keys`
   * applies to the runs of each key separately (`{ concurrency: 1 }` runs a key's tasks in
   * series). Fixed once scheduled.
   */
  readonly key?: string | undefined
  /**
   * Its deduplication key (SPEC §20.3): `{ key, mode?, window? }`. A schedule under a key whose
   * holder is live (`singleton`), pending (`debounce`) or accepted less than `window` ago
   * (`throttle`) creates no new task; {@link Kernel.scheduleDeduplicated} says what happened.
   * Fixed once scheduled.
   */
  readonly dedup?: Rules.Dedup | undefined
}

/**
 * What {@link Kernel.scheduleDeduplicated} did (SPEC §20.3): `id` is the task that holds the
 * key (or the new task when there is no `dedup`); `outcome` says whether it was `created`, the
 * request was `deduplicated` into it, or it was `replaced` by the request (debounce).
 *
 * @category models
 * @since 0.7.0
 */
export interface Scheduled {
  readonly id: TaskId
  readonly outcome: "created" | "deduplicated" | "replaced"
}

/**
 * What {@link Kernel.update} changes: any task option but the id. An absent or `undefined` key
 * changes nothing; `window: null` and `breaker: null` remove them, `tags: []` clears the tags.
 *
 * @category models
 * @since 0.2.0
 */
export interface UpdateOptions<J> {
  readonly job?: J | undefined
  readonly schedule?: Schedule.Schedule | undefined
  readonly priority?: Priority | undefined
  readonly retry?: Retry.RetryPolicy | undefined
  readonly missedRuns?: MissedRunPolicy | undefined
  readonly pauseAfterConsecutiveFailures?: number | undefined
  readonly window?: DurationInput | null | undefined
  readonly tags?: ReadonlyArray<string> | undefined
  readonly breaker?: Breaker.BreakerPolicy | string | null | undefined
}

/**
 * Which tasks {@link Kernel.tasks}, `pauseAll`, `resumeAll` and `cancelAll` touch: those matching
 * every given field.
 *
 * @category models
 * @since 0.2.0
 */
export interface TaskFilter {
  readonly state?: TaskState | undefined
  readonly tag?: string | undefined
  readonly kind?: TaskInfo["kind"] | undefined
}

/**
 * What a circuit breaker is doing (SPEC §7), as {@link Kernel.breakers} reports it.
 *
 * @category models
 * @since 0.2.0
 */
export interface BreakerInfo {
  /** A shared breaker's name, or the id of the task that owns it. */
  readonly name: string
  /** Whether it is defined on the kernel and named by tasks, rather than a task's own. */
  readonly shared: boolean
  readonly state: BreakerState
  /** Failed slots in a row, counted while closed. */
  readonly failures: number
  readonly policy: Breaker.Resolved
  /** Times it opened since it last closed. */
  readonly opens: number
  /** When it last opened, epoch ms. */
  readonly openedAt: number | undefined
  /** When an open breaker goes half-open, epoch ms. */
  readonly halfOpenAt: number | undefined
  /** The half-open breaker's probe. */
  readonly probe: TaskId | undefined
  /** Its live tasks. */
  readonly tasks: ReadonlyArray<TaskId>
  /** Those of them it holds (`paused`, reason `breaker`). */
  readonly held: ReadonlyArray<TaskId>
}

/**
 * A live task's next slots given its state (SPEC §15), from {@link Kernel.explain}.
 *
 * @category models
 * @since 0.2.0
 */
export interface Explanation {
  readonly id: TaskId
  readonly state: TaskState
  readonly kind: TaskInfo["kind"]
  readonly pausedReason: PauseReason | undefined
  /** The pending run of a `scheduled` task: its slot, when it is due and its attempt. */
  readonly pending:
    | { readonly slot: number; readonly scheduledFor: number; readonly attempt: number }
    | undefined
  /** The catch-up window, ms. */
  readonly window: number | undefined
  /** A one-shot's deadline: its slot + window. */
  readonly deadline: number | undefined
  readonly breaker: BreakerInfo | undefined
  /**
   * While its due run waits on a limit (SPEC §20.4): why (`cause`, `scope`, `since`, `until` for a
   * rate wait) and, in `for`, what it waits for in one sentence with the scope's figures.
   */
  readonly waiting?: (WaitInfo & { readonly for: string }) | undefined
  /**
   * Its next slots in order, each with its DST note: a scheduled task's from its pending slot; a
   * running one's after its run; a paused one's as if resumed now (by hand or failure policy) or
   * when its breaker lets it through (half-open time). Empty when nothing would follow.
   */
  readonly slots: ReadonlyArray<Schedule.PreviewSlot>
  /** One sentence per fact that moves those slots (pause, breaker, pending retry, window). */
  readonly notes: ReadonlyArray<string>
}

/**
 * How long final tasks stay queryable. A final task is dropped when more than `maxFinished`
 * final tasks are kept (oldest first), or at the first kernel step at or after
 * `finishedAt + maxAge`. Memory for final tasks is therefore bounded by `maxFinished`.
 *
 * @category models
 * @since 0.1.0
 */
export interface Retention {
  /** Default 10,000; at most 10,000,000 (`Options.bounds.maxFinished`). */
  readonly maxFinished?: number
  /** How long a final task stays queryable: ms or an Effect `Duration` input. Default: no limit. */
  readonly maxAge?: DurationInput
  /** The same as {@link maxAge}, in ms (kept for existing callers; give one of the two). */
  readonly maxAgeMs?: number
}

/** @internal The keys of {@link Retention}. */
export const retentionKeys: ReadonlySet<string> = new Set(["maxFinished", "maxAge", "maxAgeMs"])

/**
 * Kernel options.
 *
 * @category models
 * @since 0.1.0
 */
export interface KernelOptions {
  /** Jitter source. Default `Random.seeded(0)`: deterministic unless a seed says otherwise. */
  readonly random?: Random.Random
  readonly retention?: Retention
  /** Circuit breakers shared by name: a task with `breaker: "smtp"` uses `breakers.smtp`. */
  readonly breakers?: Readonly<Record<string, Breaker.BreakerPolicy>>
  /**
   * Flow control (SPEC §20): concurrency and rate limits of named groups, and of each key. A due
   * run whose scope is at its limit waits (late, never dropped) until a run of the scope ends or
   * its rate window opens.
   */
  readonly limits?: Rules.Limits
}

/**
 * Counts of tasks by state and of heap entries. `scheduled + running + done + failed +
 * cancelled === accepted - removed` at all times.
 *
 * @category models
 * @since 0.1.0
 */
export interface Stats {
  readonly scheduled: number
  readonly running: number
  readonly paused: number
  readonly done: number
  readonly failed: number
  readonly cancelled: number
  /** Tasks ever accepted. */
  readonly accepted: number
  /** Final tasks dropped by retention or replaced by a reused id. */
  readonly removed: number
  /** Runs taken and not completed yet (includes runs of tasks cancelled while running). */
  readonly inFlight: number
  readonly heapEntries: number
  readonly deadEntries: number
  /** Due runs waiting on a limit (SPEC §20), by cause. O(waiting) to count. */
  readonly waiting: { readonly concurrency: number; readonly "rate-limited": number }
  /**
   * Deduplication keys (SPEC §20.3): keys held by a live task, and schedules since the kernel was built
   * that were `deduplicated` (nothing created) or `replaced` a pending holder (debounce).
   */
  readonly dedup: {
    readonly keys: number
    /**
     * Keys the kernel keeps a holder for: those held, those inside a throttle window, and those
     * whose holder ended since the last sweep. A sweep runs when this reaches twice what the
     * last one kept (and at least 64), so it stays within twice the keys in force.
     */
    readonly tracked: number
    readonly deduplicated: number
    readonly replaced: number
  }
  /**
   * Flow-control scopes holding state now (SPEC §20.5): the declared groups that have been used,
   * and each key with a run running, waiting or let go, or a start inside its rate window.
   */
  readonly scopes: number
}

/**
 * @internal Compile-time check that the option and change types have exactly the keys of
 * `Rules.fields`, and that the removable ones (`null`) are the fields marked `"remove"`.
 */
type SameKeys<A, B> = [Exclude<keyof A, keyof B>, Exclude<keyof B, keyof A>] extends [never, never]
  ? true
  : false
type Removable<T> = { [K in keyof T]-?: null extends T[K] ? K : never }[keyof T]
type Marked<U> = {
  [K in keyof typeof Rules.fields]: (typeof Rules.fields)[K] extends U ? K : never
}[keyof typeof Rules.fields]
/** @internal */
export const fieldsMatch: [
  SameKeys<TaskOptions<unknown>, typeof Rules.fields>,
  SameKeys<UpdateOptions<unknown>, Omit<typeof Rules.fields, Marked<"fixed">>>,
  SameKeys<Record<Removable<UpdateOptions<string>>, 0>, Record<Marked<"remove">, 0>>,
] = [true, true, true]

/**
 * A retry of one slot (SPEC §19.7) as {@link Kernel.retry} takes it: the slot (epoch ms) and
 * what the caller's ledger holds about it (`undefined`: no run of it there). The kernel keeps
 * no ledger, so the store that keeps one reads it.
 *
 * @category models
 * @since 0.6.0
 */
export interface SlotToRetry {
  readonly slot: number
  readonly runs: Rules.SlotRuns | undefined
}
