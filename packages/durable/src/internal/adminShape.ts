/**
 * @internal
 * The shape of `StoreAdmin` and the types of what it reads and returns, apart from its
 * implementation (`StoreAdmin.ts` re-exports every one of them).
 */
import type { Errors as CoreErrors, Task, Time } from "@tickwork/core"
import { Options as CoreOptions } from "@tickwork/core"
import type { Health } from "@tickwork/runtime"
import type { DateTime, Effect } from "effect"
import type { ReadOnlyStore, StoreError, UnknownTask } from "../Errors.ts"
import type * as Inspect from "./inspect.ts"
import type { Counts } from "./model.ts"
import type { DurableOccurrence, DurableTaskInfo } from "./scheduler.ts"

/**
 * What {@link StoreAdminShape.tasks} lists. Every field is optional; an unknown state, a
 * `limit` that is not a whole number from 1 to {@link MAX_LIMIT}, or a `tag` on a store whose
 * tasks keep no tags is an `InvalidOption` naming the field.
 *
 * @category models
 * @since 0.1.0
 */
export interface TaskFilter {
  /** One of `scheduled`, `running`, `paused`, `done`, `failed`, `cancelled`. */
  readonly state?: string | undefined
  /** Tasks of this handler. */
  readonly handler?: string | undefined
  /**
   * Tasks carrying this tag. Needs a store whose `tickwork_tasks` has a `tags` column (a JSON
   * array, or comma-separated text); on an older store it is an `InvalidOption`.
   */
  readonly tag?: string | undefined
  /** At most this many tasks (default {@link DEFAULT_LIMIT}). */
  readonly limit?: number | undefined
}

/**
 * The most tasks one listing returns.
 *
 * @category models
 * @since 0.1.0
 */
export const MAX_LIMIT: number = CoreOptions.bounds.limit.max

/**
 * How many tasks a listing returns when no `limit` is given.
 *
 * @category models
 * @since 0.1.0
 */
export const DEFAULT_LIMIT = 50

/**
 * A task as an operator sees it: the scheduler's `DurableTaskInfo`, plus its schedule's kind,
 * tags, lease expiry and times.
 *
 * @category models
 * @since 0.1.0
 */
export interface TaskDetails extends DurableTaskInfo {
  /** When the lease of a `running` task runs out, epoch ms; `null` in other states. */
  readonly leaseExpiresAt: number | null
  readonly missedRuns: string
  readonly createdAt: number
  readonly updatedAt: number
  /**
   * The kept result of the task's latest run (SPEC §19.3), read by `info` only: its JSON text
   * as stored (no schema is at hand here) or why none was kept. Absent when that run kept
   * neither.
   */
  readonly lastResult?:
    | { readonly finishedAt: number; readonly json: string | null; readonly error: string | null }
    | undefined
  /**
   * When the task's last failure (`lastError`, which a later success leaves: SPEC §6.9) ended,
   * epoch ms, and whether a run succeeded since, read by `info` only from the ledger of the
   * task's generation. Absent when its ledger holds no failed run (or retention pruned it).
   *
   * @since 0.7.0
   */
  readonly lastFailureAt?: { readonly at: number; readonly succeededSince: boolean } | undefined
}

/**
 * One page of {@link StoreAdminShape.tasks}: the tasks (live ones in due order, then final ones,
 * latest first) and how many matched in all.
 *
 * @category models
 * @since 0.1.0
 */
export interface TaskPage {
  readonly tasks: ReadonlyArray<TaskDetails>
  /** How many tasks matched the filter (more than `tasks.length` when the limit cut it). */
  readonly total: number
  readonly limit: number
}

/**
 * A process seen in the store: the runs it holds under a lease now, and the runs it completed
 * within the last {@link StoreStats.window}.
 *
 * @category models
 * @since 0.1.0
 */
export type Owner = Inspect.Owner

/**
 * Lateness (core's `Task.countedLateness`: from the due time, or from acceptance when later;
 * SPEC §6.8; ms) of the latest runs, manual runs left out (SPEC §19.1: they were not scheduled):
 * percentiles by the nearest-rank method; all `null` when there are no runs. `runs` counts the
 * runs measured, so it is below {@link LATENESS_SAMPLE} when manual runs were among the latest.
 *
 * @category models
 * @since 0.1.0
 */
export interface Lateness {
  readonly runs: number
  readonly p50: number | null
  readonly p90: number | null
  readonly p99: number | null
  readonly max: number | null
}

/**
 * The store at a glance.
 *
 * @category models
 * @since 0.1.0
 */
export interface StoreStats {
  readonly store: "sqlite" | "postgres"
  /** The file, or `host:port/database`. */
  readonly target: string
  /** When these figures were read, epoch ms. */
  readonly at: number
  readonly tasks: Counts
  readonly total: number
  /** Scheduled tasks already due (none is late by more than a poll in a healthy fleet). */
  readonly overdue: number
  /** The earliest due time among them, epoch ms, or `null`. */
  readonly oldestDueAt: number | null
  /** Lease owners and recent runners. */
  readonly owners: ReadonlyArray<Owner>
  /** How far back `owners` counts completed runs, ms. */
  readonly window: number
  /** Lateness of the latest runs (at most {@link LATENESS_SAMPLE}). */
  readonly lateness: Lateness
  /**
   * The fleet's health as the store shows it (the runtime's `Health`, default bounds):
   * `unhealthy` (`stalled`) when scheduled work has been due for 60 s and no run has ended
   * since, in the whole store. What only a process knows (its store failures, uncommitted runs)
   * is in its own `health`.
   *
   * @since 0.4.0
   */
  readonly health: Health.Health
}

/**
 * How many of the latest runs {@link StoreStats.lateness} is computed over.
 *
 * @category models
 * @since 0.1.0
 */
export const LATENESS_SAMPLE = 1_000

/**
 * What a control did: whether it changed the task, and the task's state afterwards.
 *
 * @category models
 * @since 0.1.0
 */
export interface ControlResult {
  readonly id: string
  readonly changed: boolean
  readonly state: Task.TaskState
  /** Why it is `paused`, or will be when its run ends; `null` otherwise. */
  readonly pausedReason: Task.PauseReason | null
  /**
   * Why a `retry` or `trigger` changed nothing: core's `ManualRunRefused` message (SPEC §19.4,
   * §19.7). Absent when it changed the task, and for the other controls.
   */
  readonly refused?: string | undefined
}

/**
 * The operations on an opened store. Lookups of an id no task has fail with `UnknownTask`
 * naming `id`; a bad filter with `InvalidOption`; controls on a read-only store with
 * `ReadOnlyStore`. None of them writes anything when it fails.
 *
 * @category models
 * @since 0.1.0
 */
export interface StoreAdminShape {
  readonly store: "sqlite" | "postgres"
  /** The file, or `host:port/database`. */
  readonly target: string
  readonly readOnly: boolean
  /** Whether the store's tasks keep tags (its table has a `tags` column). */
  readonly tags: boolean
  /** Tasks matching the filter. */
  readonly tasks: (
    filter?: TaskFilter,
  ) => Effect.Effect<TaskPage, CoreErrors.InvalidOption | StoreError>
  /** One task. */
  readonly info: (
    id: string,
  ) => Effect.Effect<TaskDetails, UnknownTask | CoreErrors.InvalidOption | StoreError>
  /** One task's runs and events, oldest first; the latest `limit` of them when given. */
  readonly ledger: (
    id: string,
    limit?: number,
  ) => Effect.Effect<
    ReadonlyArray<DurableOccurrence>,
    UnknownTask | CoreErrors.InvalidOption | StoreError
  >
  /**
   * The whole store's latest `limit` runs and events, newest first. A `limit` that is not a
   * whole number from 1 to {@link MAX_LIMIT} is an `InvalidOption` naming `limit` (never
   * clamped: a caller asking for more than a page is told so).
   */
  readonly recent: (
    limit: number,
  ) => Effect.Effect<ReadonlyArray<DurableOccurrence>, CoreErrors.InvalidOption | StoreError>
  readonly stats: Effect.Effect<StoreStats, StoreError>
  /** The scheduler's `pause` (SPEC §15). */
  readonly pause: (
    id: string,
    options?: ControlOptions,
  ) => Effect.Effect<
    ControlResult,
    UnknownTask | ReadOnlyStore | CoreErrors.InvalidOption | StoreError
  >
  /** The scheduler's `resume`; on PostgreSQL the workers are told at once (`NOTIFY`). */
  readonly resume: (
    id: string,
    options?: ControlOptions,
  ) => Effect.Effect<
    ControlResult,
    UnknownTask | ReadOnlyStore | CoreErrors.InvalidOption | StoreError
  >
  /**
   * The scheduler's `retry` (SPEC §19.2): a `failed` task is scheduled again, due at once, and
   * the workers are told (`NOTIFY` on PostgreSQL); the run is claimed like any other. A task
   * that is not failed is not changed (`changed: false`, with its state and `refused`, the
   * sentence of `Rules.manualRefusal` saying why).
   *
   * With `slot` (SPEC §19.7), one more attempt of that failed slot of a `scheduled` recurring
   * task, as the scheduler's `retry(id, { slot })`: recorded as a `manual-retry` event naming
   * the slot. A slot that is not a safe integer of epoch ms is `InvalidTime` (field `slot`).
   *
   * @since 0.4.0
   */
  readonly retry: (
    id: string,
    options?: RetryControlOptions,
  ) => Effect.Effect<
    ControlResult,
    UnknownTask | ReadOnlyStore | CoreErrors.InvalidOption | CoreErrors.InvalidTime | StoreError
  >
  /**
   * The scheduler's `trigger` (SPEC §19.1): a `scheduled` task's pending run is set aside and a
   * manual run is due at once, and the workers are told (`NOTIFY` on PostgreSQL); the run is
   * claimed like any other, and its end puts the pending run back as it was. A task that is not
   * scheduled, or already has a manual run waiting, is not changed (`changed: false`, with its
   * state): `Rules.manualRefusal` says why.
   *
   * @since 0.5.0
   */
  readonly trigger: (
    id: string,
    options?: ControlOptions,
  ) => Effect.Effect<
    ControlResult,
    UnknownTask | ReadOnlyStore | CoreErrors.InvalidOption | StoreError
  >
  /** The scheduler's `cancel` (cooperative: a running run finishes and is recorded). */
  readonly cancel: (
    id: string,
    options?: ControlOptions,
  ) => Effect.Effect<
    ControlResult,
    UnknownTask | ReadOnlyStore | CoreErrors.InvalidOption | StoreError
  >
}

/**
 * Options of a control (`pause`, `resume`, `cancel`, `retry`).
 *
 * @category models
 * @since 0.4.0
 */
export interface ControlOptions {
  /**
   * Who asks, recorded on the control's ledger event as its `origin` (e.g. `cli`, `dashboard`);
   * a non-empty string of at most 1024 bytes. A store whose schema predates origins (migration
   * 0005, applied when a scheduler of this version opens it) records the event without it.
   */
  readonly origin?: string | undefined
}

/**
 * Options of `StoreAdmin.retry`: a control's, and the failed slot of a recurring task to retry
 * (SPEC §19.7; epoch ms, a `Date` or a `DateTime`).
 *
 * @category models
 * @since 0.6.0
 */
export interface RetryControlOptions extends ControlOptions {
  readonly slot?: number | Date | DateTime.DateTime | undefined
}

/**
 * How to open a store.
 *
 * @category models
 * @since 0.1.0
 */
export interface OpenOptions {
  /** Write nothing (default false): the controls then fail with `ReadOnlyStore`. */
  readonly readOnly?: boolean | undefined
  /**
   * The workers' `catchUpWindow`, which `resume` applies as the scheduler would (default: the
   * scheduler's default, one day).
   */
  readonly catchUpWindow?: Time.DurationInput | false | undefined
}
