/**
 * `@tickwork/durable/testing`: test durable tasks in virtual time.
 *
 * - {@link TestDurable}: a durable scheduler on a private in-memory SQLite store and Effect's
 *   `TestClock`; move time with `advance`, `advanceTo` or `setTime`, wait for work started
 *   outside the clock with `settle`.
 *
 * @since 0.1.0
 */

/** The durable scheduler on a TestClock and an in-memory store, and helpers to move time. @since 0.1.0 */
export * as TestDurable from "./TestDurable.ts"
