/**
 * Measurements of the durable scheduler beside raw better-sqlite3 / PostgreSQL baselines, for
 * the bench package's part 6 (`pnpm bench --parts 6`).
 *
 * @since 0.1.0
 */
/** The measurements. @since 0.1.0 */
export * as Measure from "./measure.ts"
/** A PostgreSQL server for them. @since 0.1.0 */
export * as Server from "./postgres.ts"
