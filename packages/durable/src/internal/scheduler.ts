/**
 * @internal
 * The durable scheduler's models: what to schedule, a task as the scheduler reports it, the
 * filters, changes and figures of its operations, and the service's shape. `DurableScheduler`
 * re-exports them as its public models; `StoreAdmin` reads a task the same way (`infoOf`)
 * without importing the scheduler's assembly.
 */
import {
  type Errors as CoreErrors,
  type Declared,
  type Kernel,
  type Schedule,
  Task,
  type Time,
} from "@tickwork/core"
import type { Health } from "@tickwork/runtime"
import type { DateTime, Effect, Option, Stream } from "effect"
import type { DurableScheduleError, StoreError } from "../Errors.ts"
import type * as Handler from "../Handler.ts"
import type * as Controls from "./controls.ts"
import type { Counts, EventEntry, RunEntry, TaskRow } from "./model.ts"

/**
 * What to schedule: a registered handler (the object, whose payload type then checks the
 * payload, or its name) with its payload, a schedule that can be stored, and the same policies
 * as an in-memory task: priority, retry, missed-run policy, failure policy, a catch-up `window`
 * (the layer's `catchUpWindow` applies to recurring tasks that give none), `tags`, and a
 * `breaker` (its own policy, or the name of one in the layer's `breakers`), flow control's
 * `group` and `key` (SPEC §20, limited by the layer's `limits`), and a deduplication key
 * (`dedup`, SPEC §20.3), which deduplicates schedules under it across every process on the
 * store (`ensure` refuses it). An unknown key is an `InvalidOption`.
 *
 * @category models
 * @since 0.1.0
 */
export interface DurableTaskOptions<H extends Handler.Any | string = Handler.Any | string>
  extends Omit<Kernel.TaskOptions<unknown>, "job" | "id"> {
  readonly handler: H
  readonly payload: Handler.PayloadOf<H>
  /** A caller-supplied id; a random UUID when absent. */
  readonly id?: string | undefined
  /** Each run is interrupted after this long and reported `timed-out`. */
  readonly timeout?: Time.DurationInput | undefined
}

/**
 * A durable task, as stored.
 *
 * @category models
 * @since 0.1.0
 */
export interface DurableTaskInfo {
  readonly id: Task.TaskId
  readonly generation: number
  readonly state: Task.TaskState
  readonly handler: string
  /** The payload in its encoded (JSON) form. */
  readonly payload: unknown
  readonly schedule: Schedule.Encoded
  readonly priority: Task.Priority
  /** The grid slot being worked on. */
  readonly slot: number
  /** When the pending attempt is due (the slot, or a retry's time). */
  readonly scheduledFor: number
  readonly attempt: number
  /** Runs whose completion committed (a run of a task cancelled while it ran included). */
  readonly runNumber: number
  readonly consecutiveFailures: number
  /** Claims of the pending (slot, attempt): more than 1 after a crash or a lost lease. */
  readonly deliveries: number
  /** The process holding the run, while `running`. */
  readonly leaseOwner: string | null
  /**
   * The last failure, rendered (SPEC §6.9): a later success leaves it, as the runtime's
   * `lastFailure`; `StoreAdmin.info`'s `lastFailureAt` says when it was. `null` when no run failed.
   */
  readonly lastError: string | null
  readonly finishedAt: number | null
  /** Why it is `paused` (or will be when its run ends). */
  readonly pausedReason: Task.PauseReason | null
  /** The schedule's kind: `once` (also `at`), `fixed-rate`, `fixed-delay`, `cron`. */
  readonly kind: Task.TaskInfo["kind"]
  /** Its tags; empty when it has none. */
  readonly tags: ReadonlyArray<string>
  /** Its own catch-up window, ms; `undefined`: the layer's `catchUpWindow` applies. */
  readonly window: number | undefined
  /** Its circuit breaker: a shared breaker's name, or the task's id for its own. */
  readonly breaker: string | undefined
  /** Its run timeout, ms; 0: none of its own. */
  readonly timeoutMs: number
  /** Its flow-control group and key (SPEC §20), when it has them. */
  readonly group?: string | undefined
  readonly key?: string | undefined
  /** Why its due run has not started, while it waits on a limit (SPEC §20.4). */
  readonly waiting?: Task.WaitInfo | undefined
  /**
   * Its deduplication key (SPEC §20.3), as the in-memory `TaskInfo.dedup`: `window` in ms, for
   * `throttle`. Absent for a task without one.
   *
   * @since 0.7.0
   */
  readonly dedup?: Task.TaskInfo["dedup"]
}

/**
 * A stored row as {@link DurableTaskInfo}: what `info` and `tasks` return, and what the
 * operator tools show. Pure.
 *
 * @category constructors
 * @since 0.3.0
 */
export const infoOf = (row: TaskRow): DurableTaskInfo => ({
  id: row.id as Task.TaskId,
  generation: row.generation,
  state: row.state,
  handler: row.handler,
  payload: JSON.parse(row.payload),
  schedule: row.schedule,
  priority: Task.priorities[row.priority] ?? "normal",
  slot: row.slot,
  scheduledFor: row.runAt,
  attempt: row.attempt,
  runNumber: row.runNumber,
  consecutiveFailures: row.consecutiveFailures,
  deliveries: row.deliveries,
  leaseOwner: row.state === "running" ? row.leaseOwner : null,
  lastError: row.lastError,
  finishedAt: row.finishedAt,
  pausedReason: row.pausedReason,
  kind: row.schedule.kind,
  tags: row.tags,
  window: row.windowMs ?? undefined,
  breaker: row.breaker === null ? undefined : row.breaker.slice(row.breaker.indexOf(":") + 1),
  timeoutMs: row.timeoutMs,
  ...(row.group === undefined ? {} : { group: row.group }),
  ...(row.key === undefined ? {} : { key: row.key }),
  ...(row.waiting === undefined ? {} : { waiting: row.waiting }),
  ...(row.dedup === undefined
    ? {}
    : {
        dedup:
          row.dedup.mode === "throttle"
            ? { key: row.dedup.key, mode: row.dedup.mode, window: row.dedup.windowMs }
            : { key: row.dedup.key, mode: row.dedup.mode },
      }),
})

/**
 * Which tasks `tasks`, `pauseAll`, `resumeAll` and `cancelAll` touch: those matching every
 * given field (SPEC §15), plus the handler. `tasks` reads one page of at most `limit` (default
 * 1,000, at most 10,000) in id order, after the id `after`; the bulk controls walk every match.
 *
 * @category models
 * @since 0.3.0
 */
export interface DurableTaskFilter extends Kernel.TaskFilter {
  readonly handler?: string | undefined
  /** The page size of `tasks`: 1 to 10,000, default 1,000. */
  readonly limit?: number | undefined
  /** Only ids after this one: the last id of the previous page. */
  readonly after?: string | undefined
}

/**
 * What `update` may change (SPEC §15): schedule, priority, retry, missed-run policy, failure
 * policy, window, timeout, tags, breaker and payload (checked by the task's handler). Absent or
 * `undefined` keys change nothing; `window: null` returns the task to the layer's
 * `catchUpWindow`, `breaker: null` removes its breaker, `tags: []` clears its tags.
 *
 * @category models
 * @since 0.3.0
 */
export interface DurableChanges extends Omit<Kernel.UpdateOptions<unknown>, "job"> {
  readonly timeout?: Time.DurationInput | undefined
  /** A new payload, encoded by the task's handler's schema. */
  readonly payload?: unknown
}

/**
 * The typed errors of `update`: a bad change (the core's errors, `InvalidPayload`, `NotDurable`,
 * `UnknownHandler` when this process lacks the task's handler) or the store's.
 *
 * @category errors
 * @since 0.3.0
 */
export type DurableUpdateError = Controls.UpdateError | StoreError

/**
 * A run recorded in the ledger.
 *
 * @category models
 * @since 0.1.0
 */
export interface Ran extends RunEntry {
  readonly kind: "ran"
  /**
   * The kept result ({@link RunEntry.result}) decoded by its handler's `result` schema, when
   * read through `ledger` by a process that registers the handler (SPEC §19.3); `undefined`
   * when none was kept, the handler is not registered here, or its schema no longer decodes the
   * stored text (`result` still holds it).
   */
  readonly value?: unknown
}

/**
 * A ledger record: a run that completed, or an event (skipped, coalesced, fenced-out,
 * cancelled, recovered, released, paused, resumed).
 *
 * @category models
 * @since 0.1.0
 */
export type DurableOccurrence = Ran | EventEntry

/**
 * The deduplication figures of {@link DurableStats}: `keys` from the store, the outcomes
 * counted by this process.
 *
 * @category models
 * @since 0.1.0
 */
export interface DurableDedupStats {
  /** Keys whose holder (the newest row under the key) is scheduled, running or paused. */
  readonly keys: number
  /** Schedules of this process that created nothing (a live holder, or a throttle window). */
  readonly deduplicated: number
  /** Debounced schedules of this process that replaced a pending holder in place. */
  readonly replaced: number
}

/**
 * Store counts and this process's figures.
 *
 * @category models
 * @since 0.1.0
 */
export interface DurableStats {
  /** Tasks by state, in the whole store. */
  readonly tasks: Counts
  /** Due runs waiting on a limit, in the whole store, by cause (SPEC §20.4). */
  readonly waiting: Readonly<Record<"concurrency" | "rate-limited", number>>
  /**
   * Deduplication keys (SPEC §20.3): `keys` held by a live task, in the whole store (one read);
   * the schedules of this process since it started that were `deduplicated` (nothing created)
   * or `replaced` a pending holder (debounce). A store keeps no holder beside its rows, so
   * there is no `tracked`.
   */
  readonly dedup: DurableDedupStats
  /** This process's lease owner name. */
  readonly owner: string
  /** Runs this process holds (claimed, running or completing). */
  readonly inFlight: number
  /** Rows this process claimed. */
  readonly claimed: number
  /** Runs this process completed (committed). */
  readonly completed: number
  /** Completions of this process rejected by their fence. */
  readonly fencedOut: number
  /** Runs this process handed back unfinished when closing. */
  readonly released: number
  /** Runs cut off by a crash that this process made due again at start. */
  readonly recovered: number
  /**
   * Runs this process interrupted because it had not renewed their lease for a whole lease
   * period (it stalled, or the store did not answer): another process may hold them by now.
   */
  readonly leasesLost: number
  /**
   * Runs that finished more than a lease ago and are still not committed (the store does not
   * answer): each is logged once, and counted in the `tickwork_durable_uncommitted_runs_total`
   * metric. Their commit keeps being retried; 0 when the store works.
   */
  readonly uncommitted: number
  /** Failed store operations of this process (each outage is logged once, not each failure). */
  readonly storeFailures: number
  /**
   * Runs of other processes whose database session ended that this process made due at once
   * (PostgreSQL; each recorded as a `recovered` event).
   */
  readonly takenOver: number
  /** Times this process lost its database session (PostgreSQL); it claims nothing meanwhile. */
  readonly sessionsLost: number
  /** Whether this process holds its database session now (always true on SQLite). */
  readonly sessionHeld: boolean
  readonly closed: boolean
}

/**
 * The durable scheduler's operations.
 *
 * @category models
 * @since 0.1.0
 */
export interface DurableSchedulerShape {
  /** The name this process leases runs under. */
  readonly owner: string
  /**
   * Validates and stores a task. Fails with the typed error of the first bad field (core
   * errors, `UnknownHandler`, `InvalidPayload`, `NotDurable`), `DuplicateTaskId`,
   * `SchedulerClosed` or `StoreError`; then nothing was written.
   */
  readonly schedule: <H extends Handler.Any | string>(
    options: DurableTaskOptions<H>,
  ) => Effect.Effect<Task.TaskId, DurableScheduleError>
  /**
   * {@link schedule}, saying what a schedule under a deduplication key (SPEC §20.3) did: the
   * key's holder `created`, the request `deduplicated` into it (its id answered, nothing
   * written but a `deduplicated` event on it), or the pending holder `replaced` in place
   * (debounce, as `update` does). Across every process on the store, a key has one holder.
   *
   * @since 0.7.0
   */
  readonly scheduleDeduplicated: <H extends Handler.Any | string>(
    options: DurableTaskOptions<H>,
  ) => Effect.Effect<
    { readonly id: Task.TaskId; readonly outcome: "created" | "deduplicated" | "replaced" },
    DurableScheduleError
  >
  /**
   * Stores several tasks in one transaction: all, or none (the first error). Tasks under
   * deduplication keys (SPEC §20.3) are decided in order, so one sees those before it; each
   * answers the id `schedule` would.
   */
  readonly scheduleAll: (
    options: ReadonlyArray<DurableTaskOptions>,
  ) => Effect.Effect<ReadonlyArray<Task.TaskId>, DurableScheduleError>
  /**
   * Makes the stored tasks match a declaration (SPEC §18), as the application declares its
   * recurring tasks at boot: each declared task (an id is required) is created when absent or
   * final (the id's next generation), updated in place when an option differs — only those
   * options, recorded as an `updated` event naming them; its id, generation, run count and
   * ledger stay — and left as it is, nothing written, when it matches. With `set`, declared
   * tasks are tagged with the set's name and the live tasks of that tag no longer declared are
   * cancelled. A bad declaration (a repeated id, a changed handler) fails with the typed error
   * naming its field and value before anything is written. Processes that boot at once converge:
   * one creates, the others find the task; updates are decided on the locked row.
   *
   * @since 0.5.0
   */
  readonly ensure: (
    tasks: ReadonlyArray<DurableTaskOptions & { readonly id: string }>,
    options?: Declared.EnsureOptions,
  ) => Effect.Effect<Declared.Report, DurableScheduleError | DurableUpdateError>
  /**
   * Pauses a task (SPEC §15): a scheduled one at once, a running one when its run ends (its next
   * slot or retry is then held). Stored: it stays paused across restarts until {@link resume}.
   * False for a task already paused, final or unknown.
   */
  readonly pause: (id: string) => Effect.Effect<boolean, StoreError>
  /**
   * Resumes a paused task (paused by hand or by its failure policy): a one-shot or held retry at
   * its own time (due at once if passed), a grid at its first slot `>= now`, fixed delay at
   * `max(held slot, now)`; the slots that passed are recorded as skipped (cause `paused`) and
   * never caught up. Also withdraws a pause asked for while the task runs. False otherwise.
   */
  readonly resume: (id: string) => Effect.Effect<boolean, StoreError>
  /**
   * Gives a `failed` task one more attempt of its failed slot, due now (SPEC §19.2): its row is
   * `scheduled` again in one transaction, with a `manual-retry` event, and the run is claimed
   * like any other — in a fleet by whichever process claims it first. If that attempt fails the
   * task is `failed` again. Fails with `ManualRunRefused` (naming the id and its state; nothing
   * changes) for a task that is not failed.
   *
   * Given `slot` (epoch ms, a `Date` or a `DateTime`), one more attempt of that failed slot of a
   * recurring task instead (SPEC §19.7): in one transaction the task's pending run is set aside
   * (as a trigger sets it aside) and the slot's next attempt — its ledger's last + 1 — is due at
   * once, with a `manual-retry` event naming the slot; the run is claimed like any other and
   * its end puts the pending run back. Refused (`ManualRunRefused`, with the `slot`) unless the
   * task is `scheduled` and recurring, with no manual run waiting, and the ledger's latest run
   * of the slot failed; a bad slot is `InvalidTime` (field `slot`). Nothing changes on either.
   *
   * @since 0.4.0
   */
  readonly retry: (
    id: string,
    options?: { readonly slot?: number | Date | DateTime.DateTime | undefined },
  ) => Effect.Effect<void, CoreErrors.ManualRunRefused | CoreErrors.InvalidTime | StoreError>
  /**
   * Runs a `scheduled` task once now, outside its schedule (SPEC §19.1): in one transaction its
   * pending run is set aside and a manual run is due at once, with a `manual-trigger` event; the
   * run is claimed like any other, so it runs once in a fleet. When it ends, whatever its
   * outcome, the pending run is put back as it was (same slot, attempt and due time): the grid,
   * the retry count, the failure policy and a breaker never see it. Fails with
   * `ManualRunRefused` (naming the id and its state; nothing changes) for a task that is not
   * scheduled or already has a manual run waiting.
   *
   * @since 0.5.0
   */
  readonly trigger: (id: string) => Effect.Effect<void, CoreErrors.ManualRunRefused | StoreError>
  /**
   * Cancels a scheduled, running or paused task: true if it was one of those. A running run finishes
   * (its run is recorded, the task stays cancelled), unless `interrupt` is set and it runs in
   * this process: then its fiber is interrupted.
   */
  readonly cancel: (
    id: string,
    options?: { readonly interrupt?: boolean },
  ) => Effect.Effect<boolean, StoreError>
  /**
   * Changes a live (scheduled, running or paused) task in place (SPEC §15), stored: its id,
   * generation, run count and ledger stay. A new schedule starts as if scheduled now; a running
   * task (or one with a retry pending) takes it when its slot ends. False for an unknown or final
   * task; a bad change is the typed error naming its field and value, and changes nothing.
   */
  readonly update: (
    id: string,
    changes: DurableChanges,
  ) => Effect.Effect<boolean, DurableUpdateError>
  /**
   * A plain array of the tasks matching `filter` (live and retained final ones), in id order,
   * at most `filter.limit` of them (default 1,000), after the id `filter.after`: one indexed
   * query (by tag through `tickwork_tags`). It carries no total and no cursor: when it holds
   * `limit` tasks there may be more — call again with `after` set to its last task's id; an
   * array shorter than `limit` is the last. (`StoreAdmin.tasks`, which the CLI's
   * `tasks --json` prints, is another shape: `{ tasks, total, limit }`, in due order.)
   */
  readonly tasks: (
    filter?: DurableTaskFilter,
  ) => Effect.Effect<ReadonlyArray<DurableTaskInfo>, StoreError | CoreErrors.InvalidOption>
  /** Pauses every task the filter matches (see `pause`); returns the ids it paused. O(matches). */
  readonly pauseAll: (
    filter: DurableTaskFilter,
  ) => Effect.Effect<ReadonlyArray<Task.TaskId>, StoreError>
  /** Resumes every task the filter matches (see `resume`); returns the ids it resumed. */
  readonly resumeAll: (
    filter: DurableTaskFilter,
  ) => Effect.Effect<ReadonlyArray<Task.TaskId>, StoreError>
  /** Cancels every task the filter matches (see `cancel`); returns the ids it cancelled. */
  readonly cancelAll: (
    filter: DurableTaskFilter,
  ) => Effect.Effect<ReadonlyArray<Task.TaskId>, StoreError>
  /**
   * Every circuit breaker (SPEC §7), as stored and shared by the fleet: the layer's shared ones,
   * then the own breakers of live tasks.
   */
  readonly breakers: Effect.Effect<ReadonlyArray<Kernel.BreakerInfo>, StoreError>
  /** One breaker: a shared breaker by name, or a task's own by the task's id. */
  readonly breaker: (name: string) => Effect.Effect<Option.Option<Kernel.BreakerInfo>, StoreError>
  /**
   * Whether this process makes progress (see the runtime's `Health` module): `unhealthy` when
   * work it could run has been due with no run starting on it for `health.stall` (`stalled`),
   * when the store has failed for `health.storeFailure` (`store-failing`; `degraded` before),
   * when runs finished more than a lease ago without committing (`uncommitted`), or when the
   * store is damaged (`store-corrupt`). One store read. Also sets the `tickwork_health` gauge.
   *
   * @since 0.4.0
   */
  readonly health: Effect.Effect<Health.Health>
  /** The task's state, or `"unknown"`. */
  readonly status: (id: string) => Effect.Effect<Task.TaskState | "unknown", StoreError>
  readonly info: (id: string) => Effect.Effect<Option.Option<DurableTaskInfo>, StoreError>
  /**
   * The task's runs and events, oldest first (ledger rows are kept for `retention`): of every
   * generation of the id, or of `options.generation` only (SPEC §27.4). A run's kept result
   * comes decoded as its `value` (SPEC §19.3). A generation that is not a positive integer is
   * an `InvalidOption` naming `generation`.
   */
  readonly ledger: DurableLedgerRead
  /** Every run and event this process records, as it commits. */
  readonly occurrences: Stream.Stream<DurableOccurrence>
  readonly stats: Effect.Effect<DurableStats, StoreError>
  /** Wakes the dispatcher now (e.g. after writing to the store from elsewhere). */
  readonly poll: Effect.Effect<void>
  /**
   * Whether there is nothing to do right now: the dispatcher waits (for the next due time, a
   * poll or an insert) and this process holds no run. Tests under `TestClock` can yield until
   * it holds before moving the clock (work started by a test's own calls is not awaited by
   * `TestClock.adjust`, only work woken by the clock).
   */
  readonly idle: Effect.Effect<boolean>
  /**
   * Whether this process waits on its handlers alone: the dispatcher waits and every run it
   * holds is inside its handler (started, not ended), none between its claim and its start or
   * between its end and its commit. With no run held it is `idle`. A handler that sleeps in
   * virtual time waits for the clock, which only a test moves: `TestDurable.settle` stops here.
   *
   * @since 0.7.0
   */
  readonly waitsOnHandlers: Effect.Effect<boolean>
}

/**
 * {@link DurableSchedulerShape.ledger}: a task's ledger, of all its generations or one.
 *
 * @category models
 * @since 0.5.0
 */
export interface DurableLedgerRead {
  (id: string): Effect.Effect<ReadonlyArray<DurableOccurrence>, StoreError>
  (
    id: string,
    options: { readonly generation: number },
  ): Effect.Effect<ReadonlyArray<DurableOccurrence>, StoreError | CoreErrors.InvalidOption>
}
