/**
 * `@tickwork/runtime/testing`: test your tasks against a real scheduler in virtual time.
 *
 * - {@link TestScheduler}: the Scheduler on Effect's `TestClock`, quiet, with one worker; move
 *   time with `advance`, wait for due work with `settle`.
 * - {@link Trace}: record every occurrence as a compact line and assert on the run trace.
 * - {@link LifecyclePaths}: generate paths through every transition of the task machine with
 *   `xstate/graph`, and play them against a real scheduler.
 *
 * The fast-check command model lives in `@tickwork/runtime/testing/commands`, so this entry point
 * does not need fast-check.
 *
 * @since 0.1.0
 */

/** Model-based lifecycle paths from the task machine, played against a real scheduler. @since 0.1.0 */
export * as LifecyclePaths from "./LifecyclePaths.ts"
/** The Scheduler on a TestClock, and helpers to move virtual time. @since 0.1.0 */
export * as TestScheduler from "./TestScheduler.ts"
/** Run traces: occurrences as lines, and a recorder to assert on them. @since 0.1.0 */
export * as Trace from "./Trace.ts"
