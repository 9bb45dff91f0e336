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
 * | metric | kind | attributes |
 * |---|---|---|
 * | `tickwork_run_lateness_seconds` | histogram | `scheduler` |
 * | `tickwork_run_duration_seconds` | histogram | `scheduler` |
 * | `tickwork_runs_total` | counter | `scheduler`, `outcome` |
 * | `tickwork_retries_total` | counter | `scheduler` |
 * | `tickwork_slots_missed_total` | counter | `scheduler`, `cause`, `policy` |
 * | `tickwork_tasks_pending` | gauge | `scheduler` |
 * | `tickwork_runs_in_flight` | gauge | `scheduler` |
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
import { type Context, Metric } from "effect"
import { seriesFor } from "./internal/series.ts"

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
 * One scheduler's series of every metric: the metrics above with `scheduler: name` (and the
 * outcome, cause and policy attributes) bound once, so updating them allocates nothing.
 *
 * @category models
 * @since 0.1.0
 */
export interface SchedulerMetrics {
  readonly name: string
  readonly lateness: Metric.Histogram<number>
  readonly duration: Metric.Histogram<number>
  readonly runs: Readonly<Record<OutcomeKind, Metric.Counter<number>>>
  readonly retries: Metric.Counter<number>
  /** The series of slots missed for `cause` under `policy`. */
  readonly slotsMissed: (cause: string, policy: "coalesce" | "skip") => Metric.Counter<number>
  readonly pending: Metric.Gauge<number>
  readonly running: Metric.Gauge<number>
}

/**
 * The series of the scheduler named `name`. Cheap to call (a few objects); the scheduler builds
 * them once.
 *
 * @category constructors
 * @since 0.1.0
 */
export const forScheduler = (name: string): SchedulerMetrics => {
  // The attributes are the metrics' own, not laid on with `Metric.withAttributes`: that one
  // copies the fiber's context on every update, which cost a quarter of a microsecond per run.
  const scheduler = { scheduler: name }
  const outcomeOf = (outcome: OutcomeKind) => runsOf({ ...scheduler, outcome })
  const missed = new Map<string, Metric.Counter<number>>()
  return {
    name,
    lateness: latenessOf(scheduler),
    duration: durationOf(scheduler),
    runs: {
      succeeded: outcomeOf("succeeded"),
      failed: outcomeOf("failed"),
      defect: outcomeOf("defect"),
      interrupted: outcomeOf("interrupted"),
      "timed-out": outcomeOf("timed-out"),
    },
    retries: retriesOf(scheduler),
    slotsMissed: (cause, policy) => {
      const key = `${cause}/${policy}`
      let metric = missed.get(key)
      if (metric === undefined) {
        metric = slotsMissedOf({ ...scheduler, cause, policy })
        missed.set(key, metric)
      }
      return metric
    },
    pending: pendingOf(scheduler),
    running: runningOf(scheduler),
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
}

/**
 * The per-run series of the scheduler named `name` in the metric registry of `context`,
 * registered there on first use and shared by everything that counts runs under that name (the
 * runtime's and the durable scheduler's). Call once per scheduler, not per run.
 *
 * @category constructors
 * @since 0.4.0
 */
export const runSeries = (name: string, context: Context.Context<never>): RunSeries =>
  seriesFor(forScheduler(name), context, secondsBoundaries)
