/**
 * Test support shared by the workspace's packages (not published): the code examples of READMEs
 * and TSDoc, read and type-checked the same way by every package's docs tests.
 *
 * @since 0.1.0
 */

/** Headless Debian Chromium for the page tests. @since 0.1.0 */
export * as Chromium from "./Chromium.ts"
/** Reading code examples out of markdown and TSDoc, and type-checking them. @since 0.1.0 */
export * as CodeBlocks from "./CodeBlocks.ts"

/** A throwaway PostgreSQL per test run, and a fresh database per test. @since 0.1.0 */
export * as Postgres from "./Postgres.ts"

/** A real Prometheus scraping test targets, and polling with a deadline. @since 0.1.0 */
export * as Prometheus from "./Prometheus.ts"
