/**
 * tickwork's core: the pure, synchronous scheduling kernel and its deterministic driver.
 *
 * @since 0.1.0
 */

/** Circuit breakers: policies and their pure decisions. @since 0.2.0 */
export * as Breaker from "./Breaker.ts"
/** Clocks: manual (virtual time) and system. @since 0.1.0 */
export * as Clock from "./Clock.ts"
/** Declared tasks: what `ensure` does with each (SPEC §18). @since 0.5.0 */
export * as Declared from "./Declared.ts"
/** The deterministic driver: inline jobs, `runDue` / `runUntil` / `tick`. @since 0.1.0 */
export * as Driver from "./Driver.ts"
/** Typed errors for bad input. @since 0.1.0 */
export * as Errors from "./Errors.ts"
/** The timer heap of numeric keys. @since 0.1.0 */
export * as Heap from "./Heap.ts"
/** The kernel: all scheduling state and rules, no I/O. @since 0.1.0 */
export * as Kernel from "./Kernel.ts"
/** The task machine (XState) and its compiled table. @since 0.1.0 */
export * as Lifecycle from "./Lifecycle.ts"
/** Missed-run policies. @since 0.1.0 */
export * as MissedRun from "./MissedRun.ts"
/** Option checks shared by every layer: typed errors naming the field and value. @since 0.3.0 */
export * as Options from "./Options.ts"
/** Seedable randomness. @since 0.1.0 */
export * as Random from "./Random.ts"
/** Kept results: the size bound and its typed errors. @since 0.5.0 */
export * as Results from "./Results.ts"
/** Retry backoff and jitter. @since 0.1.0 */
export * as Retry from "./Retry.ts"
/** The kernel's decisions as pure functions over one task's row. @since 0.3.0 */
export * as Rules from "./Rules.ts"
/** Kinds of schedule. @since 0.1.0 */
export * as Schedule from "./Schedule.ts"
/** Ids, priorities, run info, outcomes. @since 0.1.0 */
export * as Task from "./Task.ts"
/** Whole-millisecond time values. @since 0.1.0 */
export * as Time from "./Time.ts"
