/**
 * The scheduler's metrics, as effect `Metric`s in the default registry (or the one you provide
 * when the layer is built). Names are stable: dashboards can rely on them.
 *
 * @since 0.1.0
 */
import { Metric } from "effect"

/**
 * Run lateness, `startedAt - scheduledFor`, in ms.
 *
 * @category models
 * @since 0.1.0
 */
export const lateness = Metric.histogram("tickwork_run_lateness_ms", {
  description: "startedAt - scheduledFor of each run, in milliseconds",
  boundaries: [0, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1_000, 5_000, 30_000],
})

/**
 * The kinds of run outcome (SPEC §6).
 *
 * @category models
 * @since 0.1.0
 */
export type OutcomeKind = "succeeded" | "failed" | "defect" | "interrupted" | "timed-out"

const runs = Metric.counter("tickwork_runs_total", {
  description: "runs finished, by outcome",
  incremental: true,
})

/**
 * Runs finished, one series per outcome kind (attribute `outcome`).
 *
 * @category models
 * @since 0.1.0
 */
export const runsByOutcome: Readonly<Record<OutcomeKind, Metric.Counter<number>>> = {
  succeeded: Metric.withAttributes(runs, { outcome: "succeeded" }),
  failed: Metric.withAttributes(runs, { outcome: "failed" }),
  defect: Metric.withAttributes(runs, { outcome: "defect" }),
  interrupted: Metric.withAttributes(runs, { outcome: "interrupted" }),
  "timed-out": Metric.withAttributes(runs, { outcome: "timed-out" }),
}

/**
 * Tasks in `scheduled`.
 *
 * @category models
 * @since 0.1.0
 */
export const pending = Metric.gauge("tickwork_tasks_pending", {
  description: "tasks waiting for their slot",
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
