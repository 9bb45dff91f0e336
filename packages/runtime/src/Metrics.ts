/**
 * The scheduler's metrics, as effect `Metric`s in the metric registry of the layer's context
 * (the default one, or the one you provide). Units are base units (seconds), and every series
 * carries a `scheduler` attribute — the scheduler's `name` option — so two schedulers in one
 * process never mix their figures (SPEC §16). Names are stable: dashboards can rely on them.
 *
 * The per-run series (lateness, duration, runs by outcome) and the two gauges are counted by the
 * scheduler itself and read when the registry is snapshotted (`Metric.registerUnsafe`), so a run
 * costs a field increment instead of a registry lookup; `Metric.value`, `Metric.snapshot` and the
 * exporters see them as usual, and `Metric.update` on them does nothing. Schedulers of one name
 * in one registry share their series, and one made again after another closed goes on counting.
 *
 * The per-run series also carry a `handler` attribute: a durable run's handler name (declared
 * in the layer's `handlers`, so the set is finite), `"default"` for every in-memory run. The
 * gauges of one name sum what each live scheduler of that name contributes (an in-memory one,
 * a durable one beside it).
 *
 * | metric | kind | attributes |
 * |---|---|---|
 * | `tickwork_run_lateness_seconds` | histogram | `scheduler`, `handler` |
 * | `tickwork_run_duration_seconds` | histogram | `scheduler`, `handler` |
 * | `tickwork_runs_total` | counter | `scheduler`, `handler`, `outcome` |
 * | `tickwork_retries_total` | counter | `scheduler`, `handler` |
 * | `tickwork_slots_missed_total` | counter | `scheduler`, `handler`, `cause`, `policy` |
 * | `tickwork_tasks_pending` | gauge | `scheduler` |
 * | `tickwork_runs_in_flight` | gauge | `scheduler` |
 * | `tickwork_tasks` | gauge | `scheduler`, `state` |
 * | `tickwork_runs_waiting` | gauge | `scheduler`, `cause` (`concurrency`, `rate-limited`) |
 * | `tickwork_schedules_deduplicated_total` | counter | `scheduler`, `outcome` (`deduplicated`, `replaced`) |
 *
 * **Example** (Reading a scheduler's run count)
 *
 * ```ts
 * import { Effect, Metric } from "effect"
 * import { Metrics } from "@tickwork/runtime"
 *
 * const succeeded = Metric.value(Metrics.forScheduler("billing").runs.succeeded)
 * ```
 *
 * @since 0.1.0
 */
import type { Task } from "@tickwork/core"
import { type Context, Metric } from "effect"
import { addGaugeSource, type GaugeSource, seriesFor } from "./internal/series.ts"

/** A series' attributes. */
type Attributes = Readonly<Record<string, string>>

/**
 * The bucket bounds of the lateness and duration histograms, in seconds: 1 ms to 5 minutes.
 *
 * @category models
 * @since 0.4.0
 */
export const secondsBoundaries: ReadonlyArray<number> = [
  0, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 300,
]

/**
 * Run lateness, `startedAt - due time`, in seconds.
 *
 * @category models
 * @since 0.1.0
 */
export const lateness = Metric.histogram("tickwork_run_lateness_seconds", {
  description: "how late each run started after it was due, in seconds",
  boundaries: secondsBoundaries,
})

const latenessOf = (attributes: Attributes) =>
  Metric.histogram("tickwork_run_lateness_seconds", {
    description: "how late each run started after it was due, in seconds",
    boundaries: secondsBoundaries,
    attributes,
  })

/**
 * Run duration, `finishedAt - startedAt`, in seconds.
 *
 * @category models
 * @since 0.1.0
 */
export const duration = Metric.histogram("tickwork_run_duration_seconds", {
  description: "how long each run took, in seconds",
  boundaries: secondsBoundaries,
})

const durationOf = (attributes: Attributes) =>
  Metric.histogram("tickwork_run_duration_seconds", {
    description: "how long each run took, in seconds",
    boundaries: secondsBoundaries,
    attributes,
  })

/**
 * The kinds of run outcome (SPEC §6).
 *
 * @category models
 * @since 0.1.0
 */
export type OutcomeKind = "succeeded" | "failed" | "defect" | "interrupted" | "timed-out"

/**
 * Runs finished, by `outcome`.
 *
 * @category models
 * @since 0.1.0
 */
export const runs = Metric.counter("tickwork_runs_total", {
  description: "runs finished, by outcome",
  incremental: true,
})

const runsOf = (attributes: Attributes) =>
  Metric.counter("tickwork_runs_total", {
    description: "runs finished, by outcome",
    incremental: true,
    attributes,
  })

/**
 * Failed runs followed by a retry of the same slot.
 *
 * @category models
 * @since 0.1.0
 */
export const retries = Metric.counter("tickwork_retries_total", {
  description: "retries scheduled after a failed run",
  incremental: true,
})

const retriesOf = (attributes: Attributes) =>
  Metric.counter("tickwork_retries_total", {
    description: "retries scheduled after a failed run",
    incremental: true,
    attributes,
  })

/**
 * Slots that got no run of their own, by `cause` (`late`, `overlap`, `late-and-overlap`, or
 * `paused`, `breaker`, `window` for slots a control skipped) and `policy` (`coalesce`, `skip`).
 *
 * @category models
 * @since 0.1.0
 */
export const slotsMissed = Metric.counter("tickwork_slots_missed_total", {
  description: "grid slots coalesced or skipped, by cause and policy",
  incremental: true,
})

const slotsMissedOf = (attributes: Attributes) =>
  Metric.counter("tickwork_slots_missed_total", {
    description: "grid slots coalesced or skipped, by cause and policy",
    incremental: true,
    attributes,
  })

/**
 * Tasks in `scheduled`.
 *
 * @category models
 * @since 0.1.0
 */
export const pending = Metric.gauge("tickwork_tasks_pending", {
  description: "tasks waiting for their slot",
})

const pendingOf = (attributes: Attributes) =>
  Metric.gauge("tickwork_tasks_pending", {
    description: "tasks waiting for their slot",
    attributes,
  })

/**
 * Runs in flight.
 *
 * @category models
 * @since 0.1.0
 */
export const running = Metric.gauge("tickwork_runs_in_flight", {
  description: "runs handed to workers and not finished",
})

const runningOf = (attributes: Attributes) =>
  Metric.gauge("tickwork_runs_in_flight", {
    description: "runs handed to workers and not finished",
    attributes,
  })

/**
 * Tasks by `state`: for an in-memory scheduler its own tasks, for a durable one the whole
 * store's (refreshed on an interval).
 *
 * @category models
 * @since 0.5.0
 */
export const tasks = Metric.gauge("tickwork_tasks", {
  description: "tasks by state",
})

/**
 * Due runs held back by a limit (SPEC §20), by `cause`: `concurrency` or `rate-limited`.
 *
 * @category models
 * @since 0.7.0
 */
export const runsWaiting = Metric.gauge("tickwork_runs_waiting", {
  description: "due runs waiting on a concurrency or rate limit",
})

const waitingOf = (attributes: Attributes) =>
  Metric.gauge("tickwork_runs_waiting", {
    description: "due runs waiting on a concurrency or rate limit",
    attributes,
  })

/**
 * Schedules under a deduplication key (SPEC §20.3) that created no task, by `outcome`:
 * `deduplicated` (the key's holder was returned) or `replaced` (the pending holder took the
 * request; debounce).
 *
 * @category models
 * @since 0.7.0
 */
export const schedulesDeduplicated = Metric.counter("tickwork_schedules_deduplicated_total", {
  description: "schedules under a deduplication key that created no task, by outcome",
  incremental: true,
})

const deduplicatedOf = (attributes: Attributes) =>
  Metric.counter("tickwork_schedules_deduplicated_total", {
    description: "schedules under a deduplication key that created no task, by outcome",
    incremental: true,
    attributes,
  })

const tasksOf = (attributes: Attributes) =>
  Metric.gauge("tickwork_tasks", {
    description: "tasks by state",
    attributes,
  })

/**
 * The `handler` attribute of runs that name no handler: every in-memory run.
 *
 * @category models
 * @since 0.5.0
 */
export const defaultHandler = "default"

/**
 * The `policy` attribute of {@link slotsMissed}.
 *
 * @category models
 * @since 0.5.0
 */
export type MissedPolicy = "coalesce" | "skip"

/**
 * One scheduler's series of every metric: the metrics above with `scheduler: name` (and the
 * outcome, cause and policy attributes) bound once, so updating them allocates nothing.
 *
 * @category models
 * @since 0.1.0
 */
export interface SchedulerMetrics {
  readonly name: string
  /** The handler the per-run series are of ({@link defaultHandler} for in-memory runs). */
  readonly handler: string
  readonly lateness: Metric.Histogram<number>
  readonly duration: Metric.Histogram<number>
  readonly runs: Readonly<Record<OutcomeKind, Metric.Counter<number>>>
  readonly retries: Metric.Counter<number>
  /** The series of slots missed for `cause` under `policy`. */
  readonly slotsMissed: (cause: string, policy: MissedPolicy) => Metric.Counter<number>
  readonly pending: Metric.Gauge<number>
  readonly running: Metric.Gauge<number>
  /** The series of tasks in `state`. */
  readonly tasks: (state: Task.TaskState) => Metric.Gauge<number>
  /** The series of due runs waiting on a limit for `cause` (SPEC §20). */
  readonly waiting: (cause: "concurrency" | "rate-limited") => Metric.Gauge<number>
  /** The series of schedules deduplicated with `outcome` (SPEC §20.3). */
  readonly deduplicated: (outcome: "deduplicated" | "replaced") => Metric.Counter<number>
}

/**
 * The series of the scheduler named `name`, its per-run ones for runs of `handler` (default
 * {@link defaultHandler}: in-memory runs). Cheap to call (a few objects); the scheduler builds
 * them once.
 *
 * @category constructors
 * @since 0.1.0
 */
export const forScheduler = (name: string, handler: string = defaultHandler): SchedulerMetrics => {
  // The attributes are the metrics' own, not laid on with `Metric.withAttributes`: that one
  // copies the fiber's context on every update, which cost a quarter of a microsecond per run.
  const scheduler = { scheduler: name }
  const perRun = { scheduler: name, handler }
  const outcomeOf = (outcome: OutcomeKind) => runsOf({ ...perRun, outcome })
  const missed = new Map<string, Metric.Counter<number>>()
  return {
    name,
    handler,
    lateness: latenessOf(perRun),
    duration: durationOf(perRun),
    runs: {
      succeeded: outcomeOf("succeeded"),
      failed: outcomeOf("failed"),
      defect: outcomeOf("defect"),
      interrupted: outcomeOf("interrupted"),
      "timed-out": outcomeOf("timed-out"),
    },
    retries: retriesOf(perRun),
    slotsMissed: (cause, policy) => {
      const key = `${cause}/${policy}`
      let metric = missed.get(key)
      if (metric === undefined) {
        metric = slotsMissedOf({ ...perRun, cause, policy })
        missed.set(key, metric)
      }
      return metric
    },
    pending: pendingOf(scheduler),
    running: runningOf(scheduler),
    tasks: (state) => tasksOf({ ...scheduler, state }),
    waiting: (cause) => waitingOf({ ...scheduler, cause }),
    deduplicated: (outcome) => deduplicatedOf({ ...scheduler, outcome }),
  }
}

/**
 * The counting side of a scheduler's per-run series: what a run moves. Plain field updates
 * (O(buckets below the value) for a histogram), read when the registry is snapshotted.
 *
 * @category models
 * @since 0.4.0
 */
export interface RunSeries {
  /** Counts a run that ended with `kind`. */
  readonly ran: (kind: OutcomeKind) => void
  /** Records a run's lateness, in seconds. */
  readonly lateness: { readonly add: (seconds: number) => void }
  /** Records a run's duration, in seconds. */
  readonly duration: { readonly add: (seconds: number) => void }
  /** Counts a failed run followed by a retry of its slot (use {@link countRetry}). */
  readonly retried: () => void
  /** Counts `count` slots missed for `cause` under `policy` (use {@link countMissed}). */
  readonly missed: (cause: string, policy: MissedPolicy, count: number) => void
  /**
   * Counts a schedule under a deduplication key that created no task (SPEC §20.3), in
   * `tickwork_schedules_deduplicated_total{scheduler, outcome}` (no handler attribute).
   *
   * @since 0.7.0
   */
  readonly deduplicated: (outcome: "deduplicated" | "replaced") => void
}

/**
 * Counts a finished run's retry: a run whose continuation (SPEC §6.7) is `retry`. The one
 * rule for `tickwork_retries_total`, applied by the runtime's recorder and the durable worker.
 *
 * @category utils
 * @since 0.5.0
 */
export const countRetry = (series: RunSeries, continuation: Task.Continuation): void => {
  if (continuation === "retry") series.retried()
}

/**
 * Counts a record of missed slots (SPEC §27.1): `coalesced` ones under policy `coalesce`,
 * `skipped` ones under `skip`, by their cause. The one rule for `tickwork_slots_missed_total`,
 * applied by the runtime's recorder and the durable worker.
 *
 * @category utils
 * @since 0.5.0
 */
export const countMissed = (
  series: RunSeries,
  missed: {
    readonly kind: "coalesced" | "skipped"
    readonly cause: string | null
    readonly count: number
  },
): void => {
  series.missed(
    missed.cause ?? "unknown",
    missed.kind === "coalesced" ? "coalesce" : "skip",
    missed.count,
  )
}

/**
 * The per-run series of the scheduler named `name` in the metric registry of `context`,
 * registered there on first use and shared by everything that counts runs under that name (the
 * runtime's and the durable scheduler's). Call once per scheduler, not per run.
 *
 * @category constructors
 * @since 0.4.0
 */
export const runSeries = (
  name: string,
  context: Context.Context<never>,
  handler: string = defaultHandler,
): RunSeries => seriesFor(forScheduler(name, handler), context, secondsBoundaries)

/**
 * What one scheduler adds to its name's gauges: `pending` (tasks in `scheduled`) and
 * `running` (runs in flight), set by their owner, and `states` (tasks by state), read at each
 * snapshot when given.
 *
 * @category models
 * @since 0.5.0
 */
export type GaugeContribution = GaugeSource

/**
 * Adds `source` to the gauges of the scheduler named `name` in the metric registry of
 * `context`: each gauge reads the sum over the live sources of that name. Returns what
 * removes it (call it when the scheduler closes).
 *
 * @category constructors
 * @since 0.5.0
 */
export const contributeGauges = (
  name: string,
  context: Context.Context<never>,
  source: GaugeContribution,
): (() => void) => addGaugeSource(forScheduler(name), context, source)
