/**
 * tickwork's Effect runtime: the `Scheduler` service, its timing actor and bounded worker pool,
 * the occurrence ledger and metrics. The core's modules are re-exported for convenience.
 *
 * @since 0.1.0
 */

/** Core modules, re-exported. @since 0.1.0 */
export { Errors, Lifecycle, MissedRun, Retry, Schedule, Task, Time } from "@tickwork/core"
/** Health: ok, degraded or unhealthy, with reasons; a gauge and HTTP probe routes. @since 0.4.0 */
export * as Health from "./Health.ts"
/** XState inspection of a running scheduler. @since 0.1.0 */
export * as Inspect from "./Inspect.ts"
/** The occurrence ledger. @since 0.1.0 */
export * as Ledger from "./Ledger.ts"
/** Running a scheduler as the process's main program: exit 0 on SIGTERM, 130 on SIGINT. @since 0.2.0 */
export * as Main from "./Main.ts"
/** The scheduler's metrics. @since 0.1.0 */
export * as Metrics from "./Metrics.ts"
/** Who may read a served page: Host, Origin and token checks. @since 0.2.0 */
export * as PageAccess from "./PageAccess.ts"
/** A Prometheus scrape endpoint for the metrics (needs `@effect/platform-node`). @since 0.1.0 */
export * as Prometheus from "./Prometheus.ts"
/** The recorder of occurrences and the listener it calls. @since 0.1.0 */
export * as Recorder from "./Recorder.ts"
/** A run inside Effect: `CurrentRun`, the timeout's failure, outcomes with their Cause. @since 0.1.0 */
export * as Run from "./Run.ts"
/** The Scheduler service and its layer. @since 0.1.0 */
export * as Scheduler from "./Scheduler.ts"
/** The bounded pool of run fibers, usable on its own. @since 0.1.0 */
export * as WorkerPool from "./WorkerPool.ts"
