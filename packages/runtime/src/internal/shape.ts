/**
 * @internal
 * The `Scheduler` service's shape and the types of its operations' arguments, declared apart
 * from the service's construction (`Scheduler.make`) and re-exported by `Scheduler`, where users
 * meet them.
 */
import type { Declared, Errors, Kernel, Task, Time } from "@tickwork/core"
import type { DateTime, Effect, Option, Scope, Stream } from "effect"
import type * as Health from "../Health.ts"
import type * as Ledger from "../Ledger.ts"
import type { CurrentRun } from "../Run.ts"

/**
 * A job: an Effect, or a function from the run's info to an Effect. Each run provides a `Scope`
 * of its own (closed when the run ends) and {@link CurrentRun}; any other requirement is met by
 * the services where the task was scheduled.
 *
 * @category models
 * @since 0.1.0
 */
export type JobInput<A, E, R> =
  | Effect.Effect<A, E, R>
  | ((run: Task.RunInfo) => Effect.Effect<A, E, R>)

/**
 * What to schedule. Delays, periods, backoffs and timeouts take integer ms or an Effect
 * `Duration` input (`"2 seconds"`, `Duration.minutes(1)`).
 *
 * @category models
 * @since 0.1.0
 */
export interface ScheduleOptions<A, E, R> extends Omit<Kernel.TaskOptions<unknown>, "job"> {
  readonly job: JobInput<A, E, R>
  /** Each run is interrupted after this long and reported `timed-out`. Default: the layer's. */
  readonly timeout?: Time.DurationInput | undefined
  /**
   * Keep each run's value in the ledger (SPEC §19.3): a value whose JSON is at most the layer's
   * `maxResultBytes` stays as `outcome.value` of its `ran` record; a larger one, or one JSON
   * cannot write, is dropped and the record carries `resultError` (the run still succeeded).
   * Default false: the ledger keeps no value (the occurrence stream and listeners still see it).
   */
  readonly keepResult?: boolean | undefined
}

/**
 * What `update` may change (SPEC §15): the kernel's updatable options, a new job, a new timeout.
 * `window: null` and `breaker: null` remove those.
 *
 * @category models
 * @since 0.2.0
 */
export interface UpdateChanges<A, E, R> extends Omit<Kernel.UpdateOptions<unknown>, "job"> {
  readonly job?: JobInput<A, E, R> | undefined
  readonly timeout?: Time.DurationInput | undefined
}

/**
 * What a job may require beyond the caller's services: the run's own `Scope` and
 * {@link CurrentRun}, both provided per run.
 *
 * @category models
 * @since 0.1.0
 */
export type RunServices = Scope.Scope | CurrentRun

/**
 * Counts by state, plus the runtime's own figures.
 *
 * @category models
 * @since 0.1.0
 */
export interface SchedulerStats extends Kernel.Stats {
  /** The scheduler's `name` (its metrics' `scheduler` attribute). */
  readonly name: string
  readonly workers: number
  readonly closed: boolean
  /** Times the timing actor woke up (from a sleep toward a slot, or by a signal). */
  readonly actorWakes: number
  /** Listener calls that threw (each logged once per callback; none stops the scheduler). */
  readonly listenerErrors: number
  /** Wall-clock steps the scheduler followed by re-anchoring its time (SPEC §2). */
  readonly clockSteps: number
}

/**
 * The scheduler's operations.
 *
 * @category models
 * @since 0.1.0
 */
export interface SchedulerShape {
  /**
   * Accepts a task; fails with the typed error of its first bad option (nothing changes) or
   * with `SchedulerClosed`. The job may require the services where it is scheduled (captured
   * now: services only, not the caller's span or log annotations), a `Scope` (its run's own)
   * and {@link CurrentRun}. O(log n).
   */
  readonly schedule: <A, E, R>(
    options: ScheduleOptions<A, E, R>,
  ) => Effect.Effect<
    Task.TaskId,
    Errors.ScheduleError | Errors.SchedulerClosed,
    Exclude<R, RunServices>
  >
  /**
   * {@link schedule}, saying what it did with a `dedup` key (SPEC §20.3): the id of the task
   * that holds the key and whether it was `created`, the request `deduplicated` into it (nothing
   * created), or it was `replaced` by the request (debounce: its job and slot moved).
   */
  readonly scheduleDeduplicated: <A, E, R>(
    options: ScheduleOptions<A, E, R>,
  ) => Effect.Effect<
    Kernel.Scheduled,
    Errors.ScheduleError | Errors.SchedulerClosed,
    Exclude<R, RunServices>
  >
  /**
   * Cancels a scheduled or running task: true if it was one of those. A running run finishes
   * and reports its outcome (cooperative), unless `interrupt` is set: then its fiber is
   * interrupted (outcome `interrupted`) before this returns. A job that cancels its own task
   * with `interrupt` is interrupted at that point.
   */
  readonly cancel: (
    id: string,
    options?: { readonly interrupt?: boolean },
  ) => Effect.Effect<boolean>
  /** The task's state, or `"unknown"`. */
  readonly status: (id: string) => Effect.Effect<Task.TaskState | "unknown">
  /** Everything known about a task. */
  readonly info: (id: string) => Effect.Effect<Option.Option<Task.TaskInfo>>
  /** Every live and retained task matching the filter (state, tag, kind). O(n). */
  readonly tasks: (filter?: Kernel.TaskFilter) => Effect.Effect<ReadonlyArray<Task.TaskInfo>>
  /**
   * Pauses a scheduled task, or a running one once its run ends (SPEC §15): true if it was
   * either. Slots that pass while paused are skipped (cause `paused`), never caught up.
   */
  readonly pause: (id: string) => Effect.Effect<boolean>
  /** Resumes a paused task at its next slot `>= now` (SPEC §15): true if it was paused. */
  readonly resume: (id: string) => Effect.Effect<boolean>
  /**
   * Runs a `scheduled` task once now, outside its schedule (SPEC §19.1): a manual run, due at
   * once and taken by the next free worker; when it ends the task's pending run (next slot or
   * retry) goes on as it was, and neither the failure policy nor the breaker counts it. Its run
   * info has `manual: true` and its lateness is not measured. Fails with `ManualRunRefused`
   * (naming the id and its state; nothing changes) for a task that is running, paused, final,
   * unknown, or already has a manual run waiting (SPEC §19.4).
   *
   * @since 0.4.0
   */
  readonly trigger: (id: string) => Effect.Effect<void, Errors.ManualRunRefused>
  /**
   * Gives a `failed` task one more attempt of its failed slot, due now (SPEC §19.2): it is
   * `scheduled` again, its ledger kept; if the attempt fails, it is `failed` again. Fails with
   * `ManualRunRefused` for any task that is not `failed`.
   *
   * Given `slot` (epoch ms, a `Date` or a `DateTime`), one more attempt of that failed slot of a
   * recurring task instead (SPEC §19.7): run now as a manual run (`RunInfo.manual`), with the
   * slot and its ledger's last attempt + 1; the task's pending run goes on as it was after it,
   * and neither the failure policy nor the breaker counts it. Refused (`ManualRunRefused`, with
   * the `slot`) unless the task is `scheduled` and recurring, with no manual run waiting, and the
   * ledger's latest run of the slot failed; a slot that is not a safe integer of epoch ms is an
   * `InvalidTime` (field `slot`). Nothing changes on either.
   *
   * @since 0.4.0
   */
  readonly retry: (
    id: string,
    options?: RetryOptions,
  ) => Effect.Effect<void, Errors.ManualRunRefused | Errors.InvalidTime>
  /**
   * Changes a live task in place — schedule, priority, retry, missed-run policy, window,
   * timeout, tags, breaker, job — keeping its id, generation, run count and ledger (SPEC §15).
   * False for an unknown or final task; a bad change is a typed error and changes nothing.
   */
  readonly update: <A = never, E = never, R = never>(
    id: string,
    changes: UpdateChanges<A, E, R>,
  ) => Effect.Effect<boolean, Errors.ScheduleError, Exclude<R, RunServices>>
  /** Pauses every task the filter matches; returns the ids it paused. */
  readonly pauseAll: (filter: Kernel.TaskFilter) => Effect.Effect<ReadonlyArray<Task.TaskId>>
  /** Resumes every task the filter matches; returns the ids it resumed. */
  readonly resumeAll: (filter: Kernel.TaskFilter) => Effect.Effect<ReadonlyArray<Task.TaskId>>
  /**
   * Makes the live tasks match a declaration (SPEC §18): each declared task (an id is required)
   * is created when absent or final (the id's next generation), updated in place when an option
   * differs (only those options; its id, generation, run count and ledger stay), and left as it
   * is — nothing written — when it matches. With `set`, declared tasks are tagged with the set's
   * name and the live tasks of that tag that are no longer declared are cancelled. A bad
   * declaration (or a repeated id) fails with the typed error naming its field and value before
   * anything changes. A job is compared by identity: declare tasks from values defined once.
   *
   * @since 0.5.0
   */
  readonly ensure: <A, E, R>(
    tasks: ReadonlyArray<ScheduleOptions<A, E, R> & { readonly id: string }>,
    options?: Declared.EnsureOptions,
  ) => Effect.Effect<
    Declared.Report,
    Errors.ScheduleError | Errors.SchedulerClosed,
    Exclude<R, RunServices>
  >
  /** Cancels every task the filter matches; returns the ids it cancelled. */
  readonly cancelAll: (filter: Kernel.TaskFilter) => Effect.Effect<ReadonlyArray<Task.TaskId>>
  /** A live task's next slots given its state — paused, breaker, pending retry, window (SPEC §15). */
  readonly explain: (id: string, count?: number) => Effect.Effect<Option.Option<Kernel.Explanation>>
  /** Every circuit breaker: the shared ones and the tasks' own (SPEC §7). */
  readonly breakers: Effect.Effect<ReadonlyArray<Kernel.BreakerInfo>>
  /** One circuit breaker by name (a shared breaker's, or a task's id for its own). */
  readonly breaker: (name: string) => Effect.Effect<Option.Option<Kernel.BreakerInfo>>
  /**
   * The task's recent occurrences, oldest first (bounded per task): of its current generation,
   * or of `options.generation` — each generation of an id keeps its own ledger (SPEC §27.4). A
   * generation that is not a positive integer is an `InvalidOption` naming `generation`.
   */
  readonly ledger: LedgerRead
  /**
   * Every occurrence of every task, as it is recorded. A subscriber that falls more than
   * `streamCapacity` records behind loses the oldest (the scheduler never waits for it).
   */
  readonly occurrences: Stream.Stream<Ledger.StreamItem>
  readonly stats: Effect.Effect<SchedulerStats>
  /** The earliest pending slot. */
  readonly nextSlot: Effect.Effect<Option.Option<number>>
  /**
   * Whether it makes progress: `unhealthy` (reason `stalled`) when work is due and no run has
   * started for the `health.stall` bound (every worker held by runs that do not end), `degraded`
   * (`behind`) when work waited that long but runs still start. Also sets the `tickwork_health`
   * gauge. See the `Health` module.
   *
   * @since 0.4.0
   */
  readonly health: Effect.Effect<Health.Health>
}

/**
 * {@link SchedulerShape.ledger}: a task's ledger, of its current generation or a given one.
 *
 * @category models
 * @since 0.5.0
 */
export interface LedgerRead {
  (id: string): Effect.Effect<ReadonlyArray<Ledger.Occurrence>>
  (
    id: string,
    options: { readonly generation: number },
  ): Effect.Effect<ReadonlyArray<Ledger.Occurrence>, Errors.InvalidOption>
}

/**
 * Options of {@link SchedulerShape.retry}.
 *
 * @category models
 * @since 0.6.0
 */
export interface RetryOptions {
  /** The failed slot of a recurring task to run again (SPEC §19.7); absent: a failed task. */
  readonly slot?: number | Date | DateTime.DateTime | undefined
}
