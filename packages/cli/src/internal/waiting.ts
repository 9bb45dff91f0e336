/**
 * @internal
 * A task's wait on a flow-control limit (SPEC §20.4) as the CLI and the dashboard show it. Any
 * store whose task listing reports `waiting` (core's `TaskInfo.waiting` shape) gets it shown;
 * one that does not shows nothing, so the display needs no knowledge of the store.
 */
import type { Task } from "@tickwork/core"

/** @internal The part of a listed task this reads: its wait, when its store reports one. */
export interface Waits {
  readonly waiting?: Task.WaitInfo | null | undefined
}

/** @internal A task (or a page of tasks) as listed, with the wait its store may report. */
export type Listed<T> = T extends { readonly tasks: ReadonlyArray<infer U> }
  ? Omit<T, "tasks"> & { readonly tasks: ReadonlyArray<U & Waits> }
  : T & Waits

/**
 * @internal A task's state in a line: a pause's reason, a pause asked for while it runs, or the
 * cause of its wait on a limit (`scheduled (waiting: concurrency)`).
 */
export const stateText = (
  t: { readonly state: string; readonly pausedReason: string | null } & Waits,
): string =>
  t.pausedReason !== null
    ? t.state === "paused"
      ? `paused (${t.pausedReason})`
      : `${t.state} (pause requested)`
    : t.waiting
      ? `${t.state} (waiting: ${t.waiting.cause})`
      : t.state

/**
 * @internal `concurrency on group:email since 2026-05-01T10:00:00Z`, with `until …` for a rate
 * wait; `undefined` when it does not wait. Self-contained (no imports, no closure): the
 * dashboard's page embeds its source, so the terminal and the page say the same.
 */
export const waitingText = (w: Task.WaitInfo | null | undefined): string | undefined => {
  if (w === null || w === undefined) return undefined
  const at = (ms: number) => new Date(ms).toISOString().replace(/\.000Z$/, "Z")
  const until = typeof w.until === "number" ? ` until ${at(w.until)}` : ""
  return `${w.cause} on ${w.scope} since ${at(w.since)}${until}`
}
