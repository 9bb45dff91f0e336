/**
 * @internal
 * The scheduler's layer options and their parsing: what `Scheduler.make` takes
 * ({@link SchedulerOptions}, public through `Scheduler`, which re-exports the types here) and
 * the checked, defaulted {@link Settings} it builds from them. Each bad value is an
 * `InvalidOption` naming the field and the value, the first one in the order below; an unknown
 * key (a typo) is one too. Nothing here allocates or starts anything: a bad option changes no
 * state.
 *
 * The options every `schedule` and `update` call checks (the kernel's keys plus `timeout`, and
 * `job`) are here too, so the scheduler's module holds the service and no option rules.
 */
import {
  type Breaker,
  Errors,
  Kernel,
  Options,
  Results,
  type Rules,
  type Task,
  type Time,
} from "@tickwork/core"
import { Effect } from "effect"
import * as Health from "../Health.ts"
import type { Listener } from "../Recorder.ts"
import type { InspectObserver } from "./inspection.ts"

/**
 * How closing the scheduler treats pending and running work.
 *
 * @category models
 * @since 0.1.0
 */
export type ShutdownPolicy = "drain" | "cancel" | "interrupt"

/**
 * What closing the scheduler did.
 *
 * @category models
 * @since 0.1.0
 */
export interface ShutdownReport {
  readonly policy: ShutdownPolicy
  /**
   * Tasks still `scheduled` when it closed that did not run during the shutdown (`drain` leaves
   * them so). Each task is in one list of the report.
   */
  readonly pending: ReadonlyArray<Task.TaskId>
  /** Runs that finished during the shutdown, with any outcome but `interrupted`. */
  readonly finished: ReadonlyArray<Task.TaskId>
  /** Tasks the shutdown cancelled (pending ones, under `cancel` and `interrupt`). */
  readonly cancelled: ReadonlyArray<Task.TaskId>
  /** Runs interrupted by the shutdown (policy `interrupt`, or past `shutdownTimeout`). */
  readonly interrupted: ReadonlyArray<Task.TaskId>
  /**
   * Runs still going after `shutdownTimeout` and the grace that follows its interruption (a job
   * that masks interruption): the scheduler closed without them.
   */
  readonly abandoned: ReadonlyArray<Task.TaskId>
}

/**
 * Layer options. An unknown key is an `InvalidOption` naming it.
 *
 * @category models
 * @since 0.1.0
 */
export interface SchedulerOptions {
  /**
   * The scheduler's name: its metrics' `scheduler` attribute, so two schedulers in one process
   * report apart. Default `"default"`.
   */
  readonly name?: string
  /** Runs in flight at most. Default 4; at most 10,000 (`Options.bounds.workers`). */
  readonly workers?: number
  /** Final-task retention (count and age). Default: 10,000 final tasks, no age limit. */
  readonly retention?: Kernel.Retention
  /** What closing the scope does with pending and running work. Default `"drain"`. */
  readonly shutdown?: ShutdownPolicy
  /** How long shutdown waits for running runs before interrupting them. Default 30 s. */
  readonly shutdownTimeout?: Time.DurationInput
  /**
   * After that interruption, how long shutdown waits for runs that ignore it before closing
   * without them (listed as `abandoned`). Default 5 s.
   */
  readonly shutdownGrace?: Time.DurationInput
  /**
   * A run still going after this long is logged at Warning (once per run), so a stuck job is
   * seen; `info(id).runningSince` tells when it started. `false` turns it off. Default 10 minutes.
   */
  readonly slowRunWarning?: Time.DurationInput | false
  /** Called with the shutdown report (it is also logged). */
  readonly onShutdown?: (report: ShutdownReport) => void
  /** Run timeout for tasks that set none. Default: none. */
  readonly defaultTimeout?: Time.DurationInput
  /**
   * Seed for retry jitter. Default: a random seed per scheduler, so the retries of a fleet
   * (or of one process across restarts) do not fire in lockstep. Give one for repeatable runs.
   */
  readonly seed?: number
  /** Occurrence records kept per task (0 = none). Default 32; at most 10,000. */
  readonly ledgerPerTask?: number
  /**
   * Occurrence records kept in all, across tasks: past it the oldest record of all is dropped,
   * so memory stays bounded however many tasks there are (a record is ~250 bytes; the default
   * keeps 100k busy tasks' ledgers near 50 MB). Longer histories belong in a durable store.
   * Default 200,000; at most 10,000,000.
   */
  readonly ledgerCapacity?: number
  /** Buffer of the occurrence stream per subscriber. Default 10,000; at most 1,000,000. */
  readonly streamCapacity?: number
  /**
   * The bound of a value kept by a task with `keepResult` (SPEC §19.3): UTF-8 bytes of its JSON.
   * Default 64 KiB; at most 8 MiB.
   */
  readonly maxResultBytes?: number
  /**
   * A root span per run (`tickwork.run`, linked to the span that scheduled the task, with the
   * task id, slot, due time, attempt, run number and lateness). `"auto"` (default): on when the
   * layer is built with a tracer other than Effect's built-in one (e.g. an OpenTelemetry
   * exporter), off otherwise — a span costs ~1 µs per run.
   */
  readonly spans?: boolean | "auto"
  /** Annotate each run's logs with `tickwork.task`, `tickwork.slot`, `tickwork.attempt`. Default true. */
  readonly logAnnotations?: boolean
  /** Log a failed or timed-out run at Warning and a defect at Error. Default true. */
  readonly logFailures?: boolean
  /**
   * Circuit breakers shared by name (SPEC §7): a task joins one with `breaker: "smtp"`. Each
   * opens after `failures` failed slots in a row of its tasks and holds them all.
   */
  readonly breakers?: Readonly<Record<string, Breaker.BreakerPolicy>>
  /**
   * Flow control (SPEC §20): concurrency and rate limits of named groups (a task joins one with
   * `group: "email"`) and of each key (a task's `key`). A due run whose scope is at its limit
   * waits — late, never dropped — without holding a worker or blocking other tasks. Bad limits
   * are an `InvalidOption` naming the field.
   *
   * @since 0.7.0
   */
  readonly limits?: Rules.Limits
  /** Hears every acceptance, start, completion and cancellation (inspection). */
  readonly listener?: Listener
  /**
   * XState inspection: the observer you would give XState's `createActor(logic, { inspect })`.
   * The timing actor and every task (its children, actors of `Lifecycle.machine` with the
   * machine's definition attached) report `@xstate.actor`, `@xstate.event`, `@xstate.action` and
   * `@xstate.snapshot` events, exactly as XState would for the same events. It also makes
   * `Inspect.watch` available (`{}` turns that on without observing). Default: off, at no cost.
   * See the `Inspect` module.
   */
  readonly inspect?: InspectObserver
  /**
   * Health: `stall`, how long work may be due with no run starting before `health` is
   * `unhealthy` (default 60 s); `background`, whether the scheduler re-assesses itself in the
   * background to keep the `tickwork_health` gauge current (default true; false for a scheduler
   * embedded in another that reports under the same name, as the durable scheduler's is).
   *
   * @since 0.4.0
   */
  readonly health?:
    | {
        readonly stall?: Time.DurationInput | undefined
        readonly background?: boolean | undefined
      }
    | undefined
}

const healthKeys: ReadonlySet<string> = new Set(["stall", "background"])

const schedulerOptionKeys: ReadonlySet<string> = new Set([
  "name",
  "workers",
  "retention",
  "shutdown",
  "shutdownTimeout",
  "shutdownGrace",
  "slowRunWarning",
  "onShutdown",
  "defaultTimeout",
  "seed",
  "ledgerPerTask",
  "ledgerCapacity",
  "streamCapacity",
  "maxResultBytes",
  "spans",
  "logAnnotations",
  "logFailures",
  "listener",
  "breakers",
  "limits",
  "inspect",
  "health",
])

/**
 * The options of {@link SchedulerOptions} checked and with their defaults: durations in whole
 * ms, sizes as integers within `Options.bounds`. The rest (`retention`, `breakers`, `listener`,
 * `inspect`, `spans`, `logAnnotations`, `logFailures`, `onShutdown`) `make` reads from the
 * options themselves: the kernel checks the first two when it is built.
 */
export interface Settings {
  readonly name: string
  /** Runs in flight at most, 1..`Options.bounds.workers`. */
  readonly workers: number
  /** Occurrence records kept per task, 0..`Options.bounds.ledgerPerTask`. */
  readonly ledgerPerTask: number
  /** Occurrence records kept in all, 0..`Options.bounds.ledgerCapacity`. */
  readonly ledgerCapacity: number
  /** Occurrence stream buffer per subscriber, 1..`Options.bounds.streamCapacity`. */
  readonly streamCapacity: number
  /** Bytes of JSON a kept result may have, 1..`Options.bounds.resultBytes` (SPEC §19.3). */
  readonly maxResultBytes: number
  /** ms. */
  readonly shutdownTimeoutMs: number
  /** ms. */
  readonly shutdownGraceMs: number
  /** ms; 0: no slow-run warning. */
  readonly slowRunMs: number
  /** ms; 0: no timeout. */
  readonly defaultTimeoutMs: number
  readonly policy: ShutdownPolicy
  /** ms: how long work may be due with no run starting before health is `unhealthy`. */
  readonly stallMs: number
  /** Whether a background fiber keeps the health gauge current. */
  readonly background: boolean
  /** Retry jitter seed: the option's, or a fresh random one. */
  readonly seed: number
}

/** A fresh 32-bit seed for a scheduler's jitter. */
const randomSeed = (): number => crypto.getRandomValues(new Uint32Array(1))[0] as number

const optionError = Options.invalid
const millis = (field: string, input: Time.DurationInput | undefined, fallback: number) =>
  Options.millis(field, input, fallback)

/**
 * The settings of `options`, or the `InvalidOption` of the first bad one (in the order of the
 * checks below, which is the order errors have always been reported in).
 */
export const parse = (options: SchedulerOptions): Settings | Errors.InvalidOption => {
  if (typeof options !== "object" || options === null) {
    return optionError("options", options, "must be an object")
  }
  const unknown = Errors.unknownKey(options, schedulerOptionKeys)
  if (unknown !== undefined) return unknown
  const name = options.name ?? "default"
  if (typeof name !== "string" || name.length === 0) {
    return optionError("name", name, "must be a non-empty string")
  }
  // Every size is bounded (Options.bounds): some are allocated here, before any task.
  const workers = Options.integer("workers", options.workers, 4, 1, Options.bounds.workers)
  if (typeof workers !== "number") return workers
  const ledgerPerTask = Options.integer(
    "ledgerPerTask",
    options.ledgerPerTask,
    32,
    0,
    Options.bounds.ledgerPerTask,
  )
  if (typeof ledgerPerTask !== "number") return ledgerPerTask
  const ledgerCapacity = Options.integer(
    "ledgerCapacity",
    options.ledgerCapacity,
    200_000,
    0,
    Options.bounds.ledgerCapacity,
  )
  if (typeof ledgerCapacity !== "number") return ledgerCapacity
  const streamCapacity = Options.integer(
    "streamCapacity",
    options.streamCapacity,
    10_000,
    1,
    Options.bounds.streamCapacity,
  )
  if (typeof streamCapacity !== "number") return streamCapacity
  const maxResultBytes = Results.maxBytes("maxResultBytes", options.maxResultBytes)
  if (typeof maxResultBytes !== "number") return maxResultBytes
  const shutdownTimeoutMs = millis("shutdownTimeout", options.shutdownTimeout, 30_000)
  if (typeof shutdownTimeoutMs !== "number") return shutdownTimeoutMs
  const shutdownGraceMs = millis("shutdownGrace", options.shutdownGrace, 5_000)
  if (typeof shutdownGraceMs !== "number") return shutdownGraceMs
  const slowRunMs =
    options.slowRunWarning === false ? 0 : millis("slowRunWarning", options.slowRunWarning, 600_000)
  if (typeof slowRunMs !== "number") return slowRunMs
  const defaultTimeoutMs = millis("defaultTimeout", options.defaultTimeout, 0)
  if (typeof defaultTimeoutMs !== "number") return defaultTimeoutMs
  const policy = options.shutdown ?? "drain"
  if (policy !== "drain" && policy !== "cancel" && policy !== "interrupt") {
    return optionError("shutdown", policy, 'must be "drain", "cancel" or "interrupt"')
  }
  const healthOptions = options.health ?? {}
  if (typeof healthOptions !== "object" || healthOptions === null) {
    return optionError("health", healthOptions, "must be an object")
  }
  const badHealthKey = Errors.unknownKey(healthOptions, healthKeys, "health.")
  if (badHealthKey !== undefined) return badHealthKey
  const stallMs = millis("health.stall", healthOptions.stall, Health.defaultBounds.stallMs)
  if (typeof stallMs !== "number") return stallMs
  const background = healthOptions.background ?? true
  if (typeof background !== "boolean") {
    return optionError("health.background", background, "must be a boolean")
  }
  const seed = options.seed ?? randomSeed()
  if (!Number.isSafeInteger(seed)) return optionError("seed", seed, "must be an integer")
  return {
    name,
    workers,
    ledgerPerTask,
    ledgerCapacity,
    streamCapacity,
    maxResultBytes,
    shutdownTimeoutMs,
    shutdownGraceMs,
    slowRunMs,
    defaultTimeoutMs,
    policy,
    stallMs,
    background,
    seed,
  }
}

/** The keys `schedule` accepts: the kernel's task options, `timeout` and `keepResult`. */
export const scheduleOptionKeys: ReadonlySet<string> = new Set([
  ...Kernel.taskOptionKeys,
  "timeout",
  "keepResult",
])

/** The keys `update` accepts: the kernel's updatable options and `timeout`. */
export const updateKeys: ReadonlySet<string> = new Set([...Kernel.updateKeys, "timeout"])

/** The error for a `job` that is neither an Effect nor a function, or `undefined`. */
export const jobError = (input: unknown): Errors.InvalidOption | undefined =>
  Effect.isEffect(input) || typeof input === "function"
    ? undefined
    : optionError("job", input, "must be an Effect or a function returning one")

/**
 * `schedule`'s own checks of its options (SPEC §4): an object of known keys, a `timeout` (ms;
 * `defaultTimeoutMs` when absent), a `job` and a boolean `keepResult`. Returns the timeout and the
 * kept result's bound (`maxResultBytes` when kept, else `undefined`), or the first bad field's
 * typed error. The kernel checks the rest.
 */
export const checkSchedule = (
  o: {
    readonly job?: unknown
    readonly timeout?: Time.DurationInput | undefined
    readonly keepResult?: unknown
  },
  defaultTimeoutMs: number,
  maxResultBytes: number,
):
  | { readonly timeoutMs: number; readonly keepResult: number | undefined }
  | Errors.InvalidOption => {
  if (typeof o !== "object" || o === null) return optionError("options", o, "must be an object")
  const unknownOption = Errors.unknownKey(o, scheduleOptionKeys)
  if (unknownOption !== undefined) return unknownOption
  const timeoutMs = Options.millis("timeout", o.timeout, defaultTimeoutMs)
  if (typeof timeoutMs !== "number") return timeoutMs
  const badJob = jobError(o.job)
  if (badJob !== undefined) return badJob
  if (o.keepResult !== undefined && typeof o.keepResult !== "boolean")
    return optionError("keepResult", o.keepResult, "must be a boolean")
  return { timeoutMs, keepResult: o.keepResult === true ? maxResultBytes : undefined }
}
