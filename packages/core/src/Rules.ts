/**
 * The kernel's decisions, as pure functions over one task's row. Every store of tasks calls
 * them — the in-memory {@link Kernel}'s table and the durable store's rows alike — so each rule
 * of SPEC §3, §5, §7 and §15 is written once:
 *
 * - {@link validate}: task options → an accepted task, or the typed error of the first bad field;
 * - {@link take}: a due run is taken → it starts, or it moves first (catch-up window, coalesce);
 * - {@link start}: the START step (the run's number);
 * - {@link settle}: a run's outcome → the next state, slot or retry time and what to record,
 *   the failure policy pausing included;
 * - {@link resume}: a paused task → the slot it continues with and the slots it skipped;
 * - {@link manualRefusal}: whether a task's state allows a `trigger` or a `retry` (SPEC §19);
 * - {@link handBack}, {@link unreadable}: a durable store's claimed run returned with no outcome,
 *   or found unreadable (SPEC §5.5).
 *
 * A store's part is "load the row → decide → store the row". None of these functions reads a
 * clock or keeps state: `now` and the random source are arguments.
 *
 * @since 0.3.0
 */

export * from "./internal/rules/dedup.ts"
export * from "./internal/rules/handBack.ts"
export * from "./internal/rules/limits.ts"
export * from "./internal/rules/manual.ts"
export * from "./internal/rules/resume.ts"
export * from "./internal/rules/row.ts"
export * from "./internal/rules/settle.ts"
export * from "./internal/rules/take.ts"
export * from "./internal/rules/update.ts"
export * from "./internal/rules/validate.ts"
