/**
 * @internal
 * Cells of the store commands' tables whose content is a rule's answer: an instant, a run's
 * lateness (core's `Task.countedLateness`), a task's last failure.
 */
import { Task } from "@tickwork/core"
import type { StoreAdmin } from "@tickwork/durable"

/** An instant as `2026-12-01T09:00:00Z` (milliseconds shown only when not zero); `-` for none. */
export const instant = (ms: number | null | undefined): string =>
  ms === null || ms === undefined || !Number.isFinite(ms)
    ? "-"
    : new Date(ms).toISOString().replace(/\.000Z$/, "Z")

/**
 * A run's LATE cell: its lateness from its due time, or `manual` for a manual run, which was not
 * scheduled and counts none (core's `Task.countedLateness`, SPEC §19.1).
 */
export const late = (o: {
  readonly runAt: number
  readonly startedAt: number
  readonly manual?: boolean | undefined
}): string => {
  const ms = Task.countedLateness(
    { scheduledFor: o.runAt, startedAt: o.startedAt, manual: o.manual },
    Number.NEGATIVE_INFINITY,
  )
  return ms === undefined ? "manual" : `${ms}ms`
}

/**
 * The task's last failure (SPEC §6.9): it stays after a later success, so `status` says when it
 * was and that a run succeeded since, when the ledger still holds it.
 */
export const lastFailureText = (t: StoreAdmin.TaskDetails): string => {
  if (t.lastError === null) return "-"
  const when = t.lastFailureAt
  if (when === undefined) return t.lastError
  return `${instant(when.at)}: ${t.lastError}${when.succeededSince ? " (a run succeeded since)" : ""}`
}
