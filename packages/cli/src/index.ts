/**
 * tickwork's command line: `tickwork explain` lists a cron expression's next slots in a time
 * zone with their DST notes; the store commands inspect and control a durable store's tasks.
 *
 * @since 0.1.0
 */

/** The `tickwork` root command and its runners. @since 0.1.0 */
export * as Cli from "./Cli.ts"
/** `tickwork dashboard`: the store on a local web page, read-only unless asked. @since 0.1.0 */
export * as Dashboard from "./Dashboard.ts"
/** `tickwork explain`: a cron expression's next slots, DST included. @since 0.1.0 */
export * as Explain from "./Explain.ts"
/** The store commands: `tasks`, `status`, `ledger`, `pause`, `resume`, `cancel`, `stats`. @since 0.1.0 */
export * as Store from "./Store.ts"
